/* Micro-benchmark of the pyrsan clock engine (driven by benchmarks/engine_micro.py).
 *
 * Linked with the engine-only runtime (every runtime/src/*.c except intercept_*.c). Usage:
 *   engine_micro OP NLOCS NTHREADS MILLISECONDS
 * OP: rlx_load rlx_store relacq cas_ar sc_store sc_load sc_fence. Every thread first touches
 * all NLOCS locations (a release store to each, then an acquire load of each), so that clocks
 * indexed by location would hold NLOCS entries (docs/design/clocks.md); then all threads run OP for MILLISECONDS over the locations (thread k
 * starts at a different offset, stride 7) and the program prints
 *   ns_per_op total_ops reports
 * where ns_per_op = wall time * NTHREADS / total ops (the cost of one operation, as seen by
 * one thread; on a machine with fewer cores than threads it includes the waiting). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rsan_interface.h"
#include "rsan_sync.h"
#include "rsan_test.h"

static int op_kind, nlocs, nthreads;
static double budget_s;
static uint64_t *mem;
static rsan_thread **states;
static pthread_barrier_t barrier;
static volatile int stop;
static uint64_t ops[64];
static double t_start, t_end;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *names[] = {"rlx_load", "rlx_store", "relacq", "cas_ar", "sc_store", "sc_load", "sc_fence"};

static void *body(void *arg) {
  int k = (int)(intptr_t)arg;
  if (k) rsan_thread_start(states[k]);
  for (int i = 0; i < nlocs; i++) __rsan_store_8(&mem[8 * ((i + k) % nlocs)], (uint64_t)i, RSAN_RELEASE, 0);
  for (int i = 0; i < nlocs; i++) (void)__rsan_load_8(&mem[8 * i], RSAN_ACQUIRE, 0);
  pthread_barrier_wait(&barrier);
  if (k == 0) t_start = now();
  pthread_barrier_wait(&barrier);
  uint64_t n = 0;
  unsigned idx = (unsigned)(k * (nlocs / (nthreads ? nthreads : 1) + 1)) % (unsigned)nlocs;
  while (!stop) {
    for (int r = 0; r < 64; r++) {
      uint64_t *p = &mem[8 * idx];
      idx += 7;
      if (idx >= (unsigned)nlocs) idx -= (unsigned)nlocs;
      if (idx >= (unsigned)nlocs) idx %= (unsigned)nlocs;
      switch (op_kind) {
      case 0: (void)__rsan_load_8(p, RSAN_RELAXED, 0); break;
      case 1: __rsan_store_8(p, n, RSAN_RELAXED, 0); break;
      case 2:
        __rsan_store_8(p, n, RSAN_RELEASE, 0);
        (void)__rsan_load_8(p, RSAN_ACQUIRE, 0);
        break;
      case 3: {
        uint64_t old = __rsan_load_8(p, RSAN_RELAXED, 0);
        (void)__rsan_cas_8(p, old, old + 1, RSAN_ACQ_REL, RSAN_ACQUIRE, 0, 0);
        break;
      }
      case 4: __rsan_store_8(p, n, RSAN_SEQ_CST, 0); break;
      case 5: (void)__rsan_load_8(p, RSAN_SEQ_CST, 0); break;
      case 6: __rsan_fence(RSAN_SEQ_CST, 0, 0); break;
      }
      n++;
    }
    if (k == 0 && now() - t_start >= budget_s) stop = 1;
  }
  ops[k] = n;
  pthread_barrier_wait(&barrier);
  if (k == 0) t_end = now();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: engine_micro OP NLOCS NTHREADS MILLISECONDS\n");
    return 2;
  }
  op_kind = -1;
  for (int i = 0; i < 7; i++)
    if (!strcmp(argv[1], names[i])) op_kind = i;
  nlocs = atoi(argv[2]);
  nthreads = atoi(argv[3]);
  budget_s = atof(argv[4]) / 1000.0;
  if (op_kind < 0 || nlocs < 1 || nthreads < 1 || nthreads > 64) {
    fprintf(stderr, "error: bad arguments\n");
    return 2;
  }
  __rsan_test_reset();
  if (__rsan_test_set_options("print_reports=0") != 0) return 2;
  mem = aligned_alloc(64, (size_t)nlocs * 64); /* one location per cache line */
  memset(mem, 0, (size_t)nlocs * 64);
  states = calloc((size_t)nthreads, sizeof *states);
  states[0] = rsan_thread_current();
  for (int k = 1; k < nthreads; k++) states[k] = rsan_thread_create(states[0]);
  pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
  pthread_t th[64];
  for (int k = 1; k < nthreads; k++) pthread_create(&th[k], NULL, body, (void *)(intptr_t)k);
  body((void *)0);
  for (int k = 1; k < nthreads; k++) pthread_join(th[k], NULL);
  uint64_t total = 0;
  for (int k = 0; k < nthreads; k++) total += ops[k];
  double ns = (t_end - t_start) * 1e9 * nthreads / (double)total;
  printf("%.1f %llu %llu\n", ns, (unsigned long long)total, (unsigned long long)__rsan_test_report_count());
  return 0;
}
