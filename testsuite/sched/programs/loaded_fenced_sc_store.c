/* LOADED_FENCED_SC_STORE (testsuite/sched/test_dpor_monitor.py): FENCED_SC_STORE with a relaxed
 * load first in T1 and T2, so that their stores' leading SC fences are not their threads'
 * first steps. Not robust; the report depends on an order of SC fences that no real location
 * fixes (docs/design/exploration.md, the F-order closure). */
#include <pthread.h>
#include <stdatomic.h>

static atomic_int x, y, z;

static void *t1(void *arg) {
  (void)arg;
  (void)atomic_load_explicit(&z, memory_order_relaxed);
  atomic_store(&y, 1);
  (void)atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  (void)atomic_load_explicit(&z, memory_order_relaxed);
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
  pthread_create(&b, NULL, t2, NULL);
  pthread_create(&c, NULL, t3, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_join(c, NULL);
  return 0;
}
