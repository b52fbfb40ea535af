// robust: no
// race: no
// reason: SB through a wait (RSAN paper §4.3, BARW(0,0) made terminating): t2's wait(x = 0) may read the stale initial x = 0 while t1 reads y = 0, which SC forbids; t1 runs first, then t2's wait is flagged (a stale write of the awaited value lies in [Tc(x), Tsc(x)))
// A wait for a value that only a stale write holds in SC's eyes: reported at the wait.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <pyrsan.h>
#include <stdio.h>

atomic_int x, y;
int r0;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  r0 = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  atomic_store_explicit(&x, 0, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  pyrsan_wait_explicit(&x, 0, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d\n", r0);
  return 0;
}
