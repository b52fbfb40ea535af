// An event counter: NTHREADS workers each count an event (relaxed fetch_add) and then look
// at a stop flag; main raises the flag and then reads the count. Store buffering through an
// RMW: under SC a worker whose increment main misses must see the flag; under C11 both may
// read stale values. Not robust; -DROBUST: seq_cst fences between each side's two accesses.
#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#ifndef NTHREADS
#define NTHREADS 8
#endif

atomic_int events, stop;

static void *worker(void *arg) {
  (void)arg;
  atomic_fetch_add_explicit(&events, 1, memory_order_relaxed);
#ifdef ROBUST
  atomic_thread_fence(memory_order_seq_cst);
#endif
  return (void *)(intptr_t)atomic_load_explicit(&stop, memory_order_relaxed);
}

int main(void) {
  pthread_t th[NTHREADS];
  for (int i = 0; i < NTHREADS; i++)
    pthread_create(&th[i], NULL, worker, NULL);
  atomic_store_explicit(&stop, 1, memory_order_relaxed);
#ifdef ROBUST
  atomic_thread_fence(memory_order_seq_cst);
#endif
  int seen = atomic_load_explicit(&events, memory_order_relaxed);
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(th[i], NULL);
  return seen > NTHREADS;
}
