// robust: no
// race: no
// reason: the 'loads' are RMWs that may be placed mo-before the other thread's plain store (the store is not an RMW, so ATOMICITY allows it): SB cycle with mo instead of fr
// Store buffering (SB) with plain release stores and acq_rel fetch_add(.., 0) as the loads; the RMW is flagged as a write.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  r0 = atomic_fetch_add_explicit(&y, 0, memory_order_acq_rel); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  r1 = atomic_fetch_add_explicit(&x, 0, memory_order_acq_rel); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}
