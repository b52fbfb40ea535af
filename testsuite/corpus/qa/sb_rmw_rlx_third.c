// robust: no
// race: no
// reason: SB with relaxed RMWs on a third location; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust
// SB with relaxed RMWs on a third location (T0: st x rlx, rmw z rlx, ld y rlx; T1: st y rlx, rmw z rlx, ld x rlx), locations of type atomic_uint.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint x, y, z;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  r[1] = atomic_fetch_add_explicit(&z, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  r[2] = atomic_load_explicit(&y, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: stale
  r[4] = atomic_fetch_add_explicit(&z, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  r[5] = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%ld %ld %ld %ld\n", r[0], r[1], r[2], r[3]);
  printf("%ld %ld %ld\n", (long)atomic_load(&x), (long)atomic_load(&y), (long)atomic_load(&z));
  return 0;
}
