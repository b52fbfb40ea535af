// robust: no
// race: no
// reason: the CAS's read may read the stale initial x=0 as in SB (a failed CAS is a read; a successful one reads the mo-predecessor): a strong CAS(x,1->2) failing on the stale x=0 is the SB outcome
// SB whose second load is a strong CAS(x, 1 -> 2) that succeeds in the sequential schedule.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  r0 = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  { int e = 1; r1 = atomic_compare_exchange_strong_explicit(&x, &e, 2, memory_order_acq_rel, memory_order_acquire); } // pyrsan: violation
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
