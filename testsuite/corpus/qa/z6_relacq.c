// robust: no
// race: no
// reason: Z6.3 release/acquire; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust
// Z6.3 release/acquire (T0: st x rlx, st y rel; T1: st y rlx, st z rel; T2: ld z acq, ld x rlx), locations of type atomic_uint.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint x, y, z;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&z, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r[4] = atomic_load_explicit(&z, memory_order_acquire); // pyrsan: violation
  r[5] = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
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
