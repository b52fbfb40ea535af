// robust: no
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust: 2+2W with a relaxed RMW on x: the RMW reads the newest x, yet x=2 and y=1 may still close a po ∪ rf ∪ mo cycle
// 2p2w_rmw_one_side: T0: rmw x add 1 rlx, st y 2 rlx; T1: st y 1 rlx, st x 2 rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[1];

static void *t0(void *arg) {
  (void)arg;
  r[0] = atomic_fetch_add_explicit(&x, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&y, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&x, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d\n", r[0]);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
