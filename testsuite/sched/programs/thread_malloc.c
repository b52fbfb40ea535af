/* A thread allocates an atomic and publishes it; another reads through it. The address of the
 * block is in the trace (test_explore_runtime.py: the same under the fork server as in a run
 * of its own process, which the explorer's comparisons of addresses across runs need). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static _Atomic(atomic_int *) shared;

static void *worker(void *arg) {
  (void)arg;
  atomic_int *p = malloc(sizeof *p);
  atomic_init(p, 0);
  atomic_store_explicit(&shared, p, memory_order_release);
  atomic_store_explicit(p, 1, memory_order_release);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  atomic_int *p = atomic_load_explicit(&shared, memory_order_acquire);
  if (p) (void)atomic_load_explicit(p, memory_order_acquire);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, worker, NULL);
  pthread_create(&b, NULL, reader, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
