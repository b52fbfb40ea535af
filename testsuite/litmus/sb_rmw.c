// robust: yes
// race: no
// reason: every access is an RMW: RMWs on a location read their mo-predecessor (ATOMICITY), so the SB outcome needs a po U rf cycle, which RC20 forbids
// Store buffering (SB) where every access is a relaxed RMW (exchange for the stores, fetch_add 0 for the loads).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1, r2, r3;

static void *t1(void *arg) {
  (void)arg;
  r0 = atomic_exchange_explicit(&x, 1, memory_order_relaxed);
  r1 = atomic_fetch_add_explicit(&y, 0, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r2 = atomic_exchange_explicit(&y, 1, memory_order_relaxed);
  r3 = atomic_fetch_add_explicit(&x, 0, memory_order_relaxed);
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
