/* Benchmark program for benchmarks/instructions.py: the op mix of counters and message passing
 * (relaxed fetch_adds over 512 counters, release stores and acquire loads of 64 flags, acq_rel
 * CASes), by 18 threads that run one after another (each created and joined in turn), so that
 * windows hold facts of many slots and evict, as in the concurrent programs. No two threads run
 * at once, so under callgrind the instruction count does not depend on how the threads were
 * interleaved: the same count on every run (the concurrent programs' counts move by about 1%
 * between runs, as evictions and slow paths depend on the interleaving).
 *
 * usage: turns [OPS_PER_THREAD]      prints "ok <sum>" */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#define N 512
static atomic_long ctr[N];
static atomic_long flag[N / 8];
static long ops;
static void *worker(void *arg) {
  long id = (long)arg;
  uint32_t x = 2463534242u + (uint32_t)id * 7919u;
  for (long i = 0; i < ops; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    atomic_fetch_add_explicit(&ctr[x % N], 1, memory_order_relaxed);
    if ((x & 3) == 0) atomic_store_explicit(&flag[(x >> 8) % (N / 8)], i, memory_order_release);
    if ((x & 3) == 1) (void)atomic_load_explicit(&flag[(x >> 8) % (N / 8)], memory_order_acquire);
    if ((x & 7) == 2) {
      long e = atomic_load_explicit(&ctr[(x >> 4) % N], memory_order_relaxed);
      atomic_compare_exchange_strong_explicit(&ctr[(x >> 4) % N], &e, e + 1, memory_order_acq_rel,
                                              memory_order_relaxed);
    }
  }
  return NULL;
}
int main(int argc, char **argv) {
  ops = argc > 1 ? atol(argv[1]) : 20000;
  for (int r = 0; r < 3; r++)
    for (long k = 0; k < 6; k++) {
      pthread_t t;
      pthread_create(&t, NULL, worker, (void *)(k + 10 * r));
      pthread_join(t, NULL);
    }
  long s = 0;
  for (int i = 0; i < N; i++) s += atomic_load_explicit(&ctr[i], memory_order_relaxed);
  printf("ok %ld\n", s);
  return 0;
}
