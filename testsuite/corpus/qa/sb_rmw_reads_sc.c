// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: the reading RMWs are seq_cst, hence fenced: the SC fence before each RMW orders the thread's own store before it
// sb_rmw_reads_sc: T0: st x 1 rlx, rmw y add 0 sc; T1: st y 1 rlx, rmw x add 0 sc.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[2];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  r[0] = atomic_fetch_add_explicit(&y, 0, memory_order_seq_cst);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  r[1] = atomic_fetch_add_explicit(&x, 0, memory_order_seq_cst);
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
