// robust: no
// race: no
// reason: 3.SB release/acquire; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust
// 3.SB release/acquire (T0: st x rel, ld y acq; T1: st y rel, ld z acq; T2: st z rel, ld x acq), locations of type atomic_llong.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_llong x, y, z;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release); // pyrsan: stale
  r[1] = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: stale
  r[3] = atomic_load_explicit(&z, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&z, 1, memory_order_release); // pyrsan: stale
  r[5] = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[3];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  pthread_create(&th[2], NULL, t2, NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("%ld %ld %ld %ld\n", r[0], r[1], r[2], r[3]);
  printf("%ld %ld %ld\n", (long)atomic_load(&x), (long)atomic_load(&y), (long)atomic_load(&z));
  return 0;
}
