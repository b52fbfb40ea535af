/* Stress (issue 14, item 8): THREADS threads created over the run in waves of ALIVE alive at
 * once, LOCS atomic locations, OPS atomic operations in total. Each thread works on a
 * pseudo-random walk over the locations: relaxed fetch_add (an RMW), an acquire load and, every
 * 16th operation, a release store of what it read. Prints `ok <sum>` when the final sum of the
 * locations equals the number of increments made.
 * usage: stress OPS [LOCS [THREADS [ALIVE]]]   (defaults 1e8, 1e6, 1000, 256) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static long ops_per_thread;
static long nlocs;
static _Atomic long *locs;
static atomic_long increments;

static void *worker(void *arg) {
  unsigned long x = (unsigned long)arg * 0x9E3779B97F4A7C15ul + 1;
  long mine = 0;
  for (long i = 0; i < ops_per_thread; i += 2) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    long k = (long)(x % (unsigned long)nlocs);
    atomic_fetch_add_explicit(&locs[k], 1, memory_order_relaxed);
    mine++;
    long j = (long)((x >> 20) % (unsigned long)nlocs);
    long v = atomic_load_explicit(&locs[j], memory_order_acquire);
    if ((i & 31) == 0) { /* a read-modify-write spelled as a CAS of what was read */
      while (!atomic_compare_exchange_weak_explicit(&locs[j], &v, v + 1, memory_order_acq_rel,
                                                    memory_order_acquire)) {
      }
      mine++;
    }
  }
  atomic_fetch_add_explicit(&increments, mine, memory_order_relaxed);
  return NULL;
}

int main(int argc, char **argv) {
  long ops = argc > 1 ? atol(argv[1]) : 100000000L;
  nlocs = argc > 2 ? atol(argv[2]) : 1000000L;
  long threads = argc > 3 ? atol(argv[3]) : 1000;
  long alive = argc > 4 ? atol(argv[4]) : 256;
  if (ops < 1 || nlocs < 1 || threads < 1 || alive < 1) return 2;
  locs = calloc((size_t)nlocs, sizeof *locs);
  if (!locs) return 2;
  ops_per_thread = ops / threads;
  pthread_t *t = malloc(sizeof *t * (size_t)alive);
  for (long started = 0; started < threads;) {
    long wave = threads - started < alive ? threads - started : alive;
    for (long i = 0; i < wave; i++)
      if (pthread_create(&t[i], 0, worker, (void *)(started + i + 1)) != 0) return 3;
    for (long i = 0; i < wave; i++) pthread_join(t[i], 0);
    started += wave;
  }
  long sum = 0;
  for (long i = 0; i < nlocs; i++) sum += atomic_load_explicit(&locs[i], memory_order_relaxed);
  long want = atomic_load(&increments);
  if (sum != want) {
    printf("bad sum %ld != %ld\n", sum, want);
    return 1;
  }
  printf("ok %ld\n", sum);
  return 0;
}
