// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: R with seq_cst exchanges on y: both are fenced, which orders T0's x store and T1's x load
// r_rmw_sc_both: T0: st x 1 rlx, rmw y xchg 1 sc; T1: rmw y xchg 2 sc, ld x rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[3];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  r[0] = atomic_exchange_explicit(&y, 1, memory_order_seq_cst);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[1] = atomic_exchange_explicit(&y, 2, memory_order_seq_cst);
  r[2] = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d %d %d\n", r[0], r[1], r[2]);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
