// robust: yes
// race: no
// reason: both threads do an acq_rel RMW on the same location f between store and load, which orders them like a fence (Rocker litmus/ra/sb_rmw.tpl: robust)
// Store buffering (SB), release/acquire, with an acq_rel fetch_add(f, 0) between each store and load.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int f, x, y;
int r0, r1, r2, r3;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  r0 = atomic_fetch_add_explicit(&f, 0, memory_order_acq_rel);
  r1 = atomic_load_explicit(&y, memory_order_acquire);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  r2 = atomic_fetch_add_explicit(&f, 0, memory_order_acq_rel);
  r3 = atomic_load_explicit(&x, memory_order_acquire);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d r2=%d r3=%d\n", r0, r1, r2, r3);
  return 0;
}
