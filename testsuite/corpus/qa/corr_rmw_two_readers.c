// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: one location only: coherence makes every RC20 execution SC
// corr_rmw_two_readers: T0: rmw x add 1 rlx; T1: ld x rlx, ld x rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x;
static int r[3];

static void *t0(void *arg) {
  (void)arg;
  r[0] = atomic_fetch_add_explicit(&x, 1, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[1] = atomic_load_explicit(&x, memory_order_relaxed);
  r[2] = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d %d %d\n", r[0], r[1], r[2]);
  printf("%d\n", atomic_load(&x));
  return 0;
}
