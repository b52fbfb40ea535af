// robust: no
// race: no
// reason: MP with an acquire fence only; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust
// MP with an acquire fence only (T0: st x rlx, st y rlx; T1: ld y rlx, fence acq, ld x rlx), locations of type _Atomic short.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic short x, y;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[2] = atomic_load_explicit(&y, memory_order_relaxed); // pyrsan: violation
  atomic_thread_fence(memory_order_acquire);
  r[4] = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%ld %ld %ld %ld\n", r[0], r[1], r[2], r[3]);
  printf("%ld %ld\n", (long)atomic_load(&x), (long)atomic_load(&y));
  return 0;
}
