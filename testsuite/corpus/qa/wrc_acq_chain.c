// robust: yes
// race: no
// reason: WRC: acquire/release chain; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust
// WRC: acquire/release chain (T0: st x rel; T1: ld x acq, st y rel; T2: ld y acq, ld x acq), locations of type atomic_int.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[1] = atomic_load_explicit(&x, memory_order_acquire);
  atomic_store_explicit(&y, 1, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r[3] = atomic_load_explicit(&y, memory_order_acquire);
  r[4] = atomic_load_explicit(&x, memory_order_acquire);
  return NULL;
}

int main(void) {
  pthread_t th[3];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  pthread_create(&th[2], NULL, t2, NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("%ld %ld %ld %ld\n", r[0], r[1], r[2], r[3]);
  printf("%ld %ld\n", (long)atomic_load(&x), (long)atomic_load(&y));
  return 0;
}
