/* main makes a seq_cst store between the creations of its two threads, so an SC fence runs
 * before the second spawn: the F-order closure's snapshot is taken before that thread exists,
 * and its replay makes its record as pthread_create does (docs/design/exploration.md §4). Store buffering
 * with seq_cst accesses: robust; with -DRELAXED every access of the threads is relaxed: not
 * robust. */
#include <pthread.h>
#include <stdatomic.h>

#ifdef RELAXED
#define MO memory_order_relaxed
#else
#define MO memory_order_seq_cst
#endif

static atomic_int x, y;
atomic_int ready; /* external: its store stays */

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, MO);
  (void)atomic_load_explicit(&y, MO);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, MO);
  (void)atomic_load_explicit(&x, MO);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  atomic_store(&ready, 1);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
