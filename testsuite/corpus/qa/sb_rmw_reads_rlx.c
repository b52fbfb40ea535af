// robust: no
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust: each thread reads the other's location with a relaxed fetch_add(0): an RMW reads the newest write in mo, yet both may be placed mo-before the other thread's store (po ∪ mo cycle), which SC forbids
// sb_rmw_reads_rlx: T0: st x 1 rlx, rmw y add 0 rlx; T1: st y 1 rlx, rmw x add 0 rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[2];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  r[0] = atomic_fetch_add_explicit(&y, 0, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  r[1] = atomic_fetch_add_explicit(&x, 0, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d %d\n", r[0], r[1]);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
