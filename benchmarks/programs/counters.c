/* Benchmark program (b): relaxed and acq_rel counters. NTHREADS threads each perform OPS
 * fetch_add operations spread over NCOUNTERS shared atomics (pseudo-random indices), plus
 * acq_rel fetch_adds on a second array and a relaxed per-thread progress counter. Only RMWs
 * run concurrently; the final relaxed loads come after the joins, so the program is robust.
 *
 * usage: counters [OPS_PER_THREAD]      prints "ok <sum>" or "mismatch ..." (exit 1) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define NCOUNTERS 512

static atomic_long relaxed_counters[NCOUNTERS];
static atomic_long acq_rel_counters[NCOUNTERS / 8];
static atomic_long progress[NTHREADS];
static long ops;

static void *worker(void *arg) {
  long id = (long)arg;
  uint32_t x = 2463534242u + (uint32_t)id * 7919u;
  for (long i = 0; i < ops; i++) {
    x ^= x << 13; x ^= x >> 17; x ^= x << 5; /* xorshift32 */
    atomic_fetch_add_explicit(&relaxed_counters[x % NCOUNTERS], 1, memory_order_relaxed);
    if ((i & 3) == 0)
      atomic_fetch_add_explicit(&acq_rel_counters[(x >> 9) % (NCOUNTERS / 8)], 2,
                                memory_order_acq_rel);
    if ((i & 15) == 0)
      atomic_fetch_add_explicit(&progress[id], 1, memory_order_relaxed);
  }
  return NULL;
}

int main(int argc, char **argv) {
  ops = argc > 1 ? atol(argv[1]) : 1000000;
  pthread_t t[NTHREADS];
  for (long i = 0; i < NTHREADS; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (long i = 0; i < NTHREADS; i++)
    pthread_join(t[i], NULL);
  long rel = 0, ar = 0, prog = 0;
  for (int i = 0; i < NCOUNTERS; i++)
    rel += atomic_load_explicit(&relaxed_counters[i], memory_order_relaxed);
  for (int i = 0; i < NCOUNTERS / 8; i++)
    ar += atomic_load_explicit(&acq_rel_counters[i], memory_order_relaxed);
  for (int i = 0; i < NTHREADS; i++)
    prog += atomic_load_explicit(&progress[i], memory_order_relaxed);
  long want_rel = NTHREADS * ops, want_ar = NTHREADS * 2 * ((ops + 3) / 4),
       want_prog = NTHREADS * ((ops + 15) / 16);
  if (rel != want_rel || ar != want_ar || prog != want_prog) {
    printf("mismatch %ld/%ld %ld/%ld %ld/%ld\n", rel, want_rel, ar, want_ar, prog, want_prog);
    return 1;
  }
  printf("ok %ld\n", rel + ar + prog);
  return 0;
}
