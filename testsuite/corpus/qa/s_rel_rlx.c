// robust: no
// race: no
// reason: S rel/rlx; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust
// S rel/rlx (T0: st x rlx, st y rel; T1: ld y rlx, st x rlx), locations of type atomic_long.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_long x, y;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[2] = atomic_load_explicit(&y, memory_order_relaxed); // pyrsan: violation
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
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
