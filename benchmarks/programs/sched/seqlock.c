// A sequence lock: one writer updates two data words twice, NTHREADS-1 readers take a
// consistent snapshot. The data accesses are relaxed and the writer's odd sequence store is
// not followed by a fence: not robust (a reader may see new data with an old, even sequence
// number). -DROBUST: every access seq_cst (fences alone do not help: a reader's data load may
// still read a value SC forbids and then discard it, which robustness counts).
#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#ifdef ROBUST
#define RLX memory_order_seq_cst
#define REL memory_order_seq_cst
#define ACQ memory_order_seq_cst
#else
#define RLX memory_order_relaxed
#define REL memory_order_release
#define ACQ memory_order_acquire
#endif
#ifndef NTHREADS
#define NTHREADS 3
#endif

atomic_uint seq;
atomic_int data1, data2;

static void *writer(void *arg) {
  (void)arg;
  for (int v = 1; v <= 2; v++) {
    unsigned s = atomic_load_explicit(&seq, RLX);
    atomic_store_explicit(&seq, s + 1, RLX);
    atomic_store_explicit(&data1, v, RLX);
    atomic_store_explicit(&data2, v, RLX);
    atomic_store_explicit(&seq, s + 2, REL);
  }
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  for (;;) {
    unsigned s1 = atomic_load_explicit(&seq, ACQ);
    if (s1 & 1)
      continue;
    int d1 = atomic_load_explicit(&data1, RLX);
    int d2 = atomic_load_explicit(&data2, RLX);
    unsigned s2 = atomic_load_explicit(&seq, RLX);
    if (s1 == s2)
      return (void *)(intptr_t)(d1 + d2);
  }
}

int main(void) {
  pthread_t th[NTHREADS];
  pthread_create(&th[0], NULL, writer, NULL);
  for (int i = 1; i < NTHREADS; i++)
    pthread_create(&th[i], NULL, reader, NULL);
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(th[i], NULL);
  return 0;
}
