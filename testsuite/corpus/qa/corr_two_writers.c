// robust: yes
// race: no
// reason: CoRR two writers, two readers; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust
// CoRR two writers, two readers (T0: st x rlx; T1: st x rlx; T2: ld x rlx, ld x rlx; T3: ld x rlx, ld x rlx), locations of type atomic_int.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 2, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r[2] = atomic_load_explicit(&x, memory_order_relaxed);
  r[3] = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  r[4] = atomic_load_explicit(&x, memory_order_relaxed);
  r[5] = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[4];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  pthread_create(&th[2], NULL, t2, NULL);
  pthread_create(&th[3], NULL, t3, NULL);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  printf("%ld %ld %ld %ld\n", r[0], r[1], r[2], r[3]);
  printf("%ld\n", (long)atomic_load(&x));
  return 0;
}
