// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: a relaxed RMW continues the release sequence of y=1, so an acquire read of its value synchronises with the release store
// mp_relseq_same_thread_rmw: T0: st x 1 rlx, st y 1 rel, rmw y add 1 rlx; T1: ld y acq, ld x rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[3];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_release);
  r[0] = atomic_fetch_add_explicit(&y, 1, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[1] = atomic_load_explicit(&y, memory_order_acquire);
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
