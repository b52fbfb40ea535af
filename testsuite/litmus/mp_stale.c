// robust: no
// race: no
// reason: t2 synchronises on y with t1's x=1 but reads z=1 relaxed, so it may still read the stale x=1 although SC forces x=2
// MP variant whose stale write is a real store: t1 x=1; y=1 (rel); x=2; z=1 (rlx) || t2 reads y (acq), z, x.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y, z;
int r0, r1, r2;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  atomic_store_explicit(&y, 1, memory_order_release);
  atomic_store_explicit(&x, 2, memory_order_relaxed);
  atomic_store_explicit(&z, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r0 = atomic_load_explicit(&y, memory_order_acquire);
  r1 = atomic_load_explicit(&z, memory_order_relaxed);
  r2 = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d r2=%d\n", r0, r1, r2);
  return 0;
}
