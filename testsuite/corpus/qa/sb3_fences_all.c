// robust: yes
// race: no
// reason: 3.SB SC fences everywhere; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust
// 3.SB SC fences everywhere (T0: st x rlx, fence sc, ld y rlx; T1: st y rlx, fence sc, ld z rlx; T2: st z rlx, fence sc, ld x rlx), locations of type _Atomic(unsigned char).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic(unsigned char) x, y, z;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  r[2] = atomic_load_explicit(&y, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  r[5] = atomic_load_explicit(&z, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&z, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  r[8] = atomic_load_explicit(&x, memory_order_relaxed);
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
