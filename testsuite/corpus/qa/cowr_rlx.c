// robust: yes
// race: no
// reason: CoWR; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust
// CoWR (T0: st x rlx, ld x rlx; T1: st x rlx), locations of type atomic_long.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_long x;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  r[1] = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 2, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%ld %ld %ld %ld\n", r[0], r[1], r[2], r[3]);
  printf("%ld\n", (long)atomic_load(&x));
  return 0;
}
