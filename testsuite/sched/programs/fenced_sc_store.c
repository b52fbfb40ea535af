/* FENCED_SC_STORE (testsuite/sched/test_dpor_monitor.py): T2's seq_cst store is reported only
 * in the runs where the leading SC fence of T1's seq_cst store comes before T2's in F, an
 * order that no real location fixes. Not robust. Under sched_closure=1 (two SC fences
 * independent) the report comes from the run's F-order closure (docs/design/exploration.md). */
#include <pthread.h>
#include <stdatomic.h>

static atomic_int x, y;

static void *t1(void *arg) {
  (void)arg;
  atomic_store(&y, 1);
  (void)atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
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
