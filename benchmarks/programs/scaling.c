/* Scaling of the per-operation cost (benchmarks/scaling.py, issue 11).
 *
 *   scaling ops NLOCS NTHREADS OPS   random release stores / acquire loads / acq_rel RMWs
 *                                    on NLOCS atomics (one per cache line), OPS per thread
 *   scaling churn ITERS              p = malloc; store_release(p); load_acquire(p); free(p)
 *
 * ops: main first stores to every location (so all exist), each thread reads every location
 * once, then the threads run the timed phase; prints
 *   ok cpu_ns_per_op=X wall_ns_per_op=Y
 * where cpu = process CPU time of the timed phase / all operations (what one operation costs,
 * independent of how many cores the threads share) and wall = wall time x threads / ops.
 * churn: prints ok ns_per_iter=X (wall time / iterations, one thread). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  _Atomic uint64_t v;
  char pad[56];
} cell;

static cell *cells;
static long nlocs, nthreads, nops;
static pthread_barrier_t barrier;
static _Atomic uint64_t sink;

static double clk(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *body(void *arg) {
  uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)((intptr_t)arg + 1), acc = 0;
  /* untimed: the thread reads every location once, as in a long run (its clocks, in an
   * engine that keeps per-location entries, then hold one per location) */
  for (long i = 0; i < nlocs; i++) acc += atomic_load_explicit(&cells[i].v, memory_order_acquire);
  pthread_barrier_wait(&barrier);
  for (long i = 0; i < nops; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    cell *c = &cells[(x >> 8) % (uint64_t)nlocs];
    switch (x % 3) {
    case 0: atomic_store_explicit(&c->v, x, memory_order_release); break;
    case 1: acc += atomic_load_explicit(&c->v, memory_order_acquire); break;
    default: acc += atomic_fetch_add_explicit(&c->v, 1, memory_order_acq_rel); break;
    }
  }
  atomic_fetch_add_explicit(&sink, acc, memory_order_relaxed);
  pthread_barrier_wait(&barrier);
  return NULL;
}

static int run_ops(void) {
  cells = aligned_alloc(64, (size_t)nlocs * sizeof(cell));
  if (!cells) return 1;
  memset(cells, 0, (size_t)nlocs * sizeof(cell));
  for (long i = 0; i < nlocs; i++) atomic_store_explicit(&cells[i].v, (uint64_t)i, memory_order_release);
  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads + 1);
  pthread_t *th = calloc((size_t)nthreads, sizeof *th);
  for (long k = 0; k < nthreads; k++) pthread_create(&th[k], NULL, body, (void *)(intptr_t)k);
  pthread_barrier_wait(&barrier); /* every thread has read every location */
  double c0 = clk(CLOCK_PROCESS_CPUTIME_ID), w0 = clk(CLOCK_MONOTONIC);
  pthread_barrier_wait(&barrier); /* all done */
  double c1 = clk(CLOCK_PROCESS_CPUTIME_ID), w1 = clk(CLOCK_MONOTONIC);
  for (long k = 0; k < nthreads; k++) pthread_join(th[k], NULL);
  double total = (double)nops * (double)nthreads;
  printf("ok cpu_ns_per_op=%.1f wall_ns_per_op=%.1f\n", (c1 - c0) * 1e9 / total,
         (w1 - w0) * 1e9 * (double)nthreads / total);
  return 0;
}

static int run_churn(long iters) {
  double w0 = clk(CLOCK_MONOTONIC);
  uint64_t acc = 0;
  for (long i = 0; i < iters; i++) {
    _Atomic uint64_t *p = malloc(sizeof *p);
    atomic_store_explicit(p, (uint64_t)i, memory_order_release);
    acc += atomic_load_explicit(p, memory_order_acquire);
    free(p);
  }
  double w1 = clk(CLOCK_MONOTONIC);
  if (acc != (uint64_t)iters * (uint64_t)(iters - 1) / 2) return 1;
  printf("ok ns_per_iter=%.1f\n", (w1 - w0) * 1e9 / (double)iters);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "ops")) {
    nlocs = atol(argv[2]);
    nthreads = atol(argv[3]);
    nops = atol(argv[4]);
    if (nlocs < 1 || nthreads < 1 || nops < 1) return 2;
    return run_ops();
  }
  if (argc == 3 && !strcmp(argv[1], "churn")) return run_churn(atol(argv[2]));
  fprintf(stderr, "usage: scaling ops NLOCS NTHREADS OPS | scaling churn ITERS\n");
  return 2;
}
