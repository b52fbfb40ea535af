/* fenced_sc_store.c's threads (a report only under some orders of SC fences that no real
 * location orders), created by a main thread whose seq_cst stores come between the creations:
 * the closure's snapshot is taken before the last threads exist, so the search forks until
 * the replay of the log's last spawn and restores its branching states from there
 * (docs/design/exploration.md §16). Not robust. */
#include <pthread.h>
#include <stdatomic.h>

static atomic_int x, y;
atomic_int ready; /* external: its stores stay */

static void *t1(void *arg) {
  (void)arg;
  atomic_store(&y, 1);
  (void)atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store(&x, 1);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  (void)atomic_load_explicit(&x, memory_order_acquire);
  (void)atomic_load_explicit(&y, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t a, b, c;
  pthread_create(&a, NULL, t1, NULL);
  atomic_store(&ready, 1);
  pthread_create(&b, NULL, t2, NULL);
  atomic_store(&ready, 2);
  pthread_create(&c, NULL, t3, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_join(c, NULL);
  return 0;
}
