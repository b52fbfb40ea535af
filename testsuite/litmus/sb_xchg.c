// robust: no
// race: no
// reason: the stores are RMWs but the loads are plain reads that may still read 0: both loads may read 0 (fr;po;fr;po cycle, RC20-consistent, not SC)
// Store buffering (SB) where the stores are atomic_exchange (acq_rel) and the loads acquire loads.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1, r2, r3;

static void *t1(void *arg) {
  (void)arg;
  r0 = atomic_exchange_explicit(&x, 1, memory_order_acq_rel);
  r1 = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r2 = atomic_exchange_explicit(&y, 1, memory_order_acq_rel);
  r3 = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
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
