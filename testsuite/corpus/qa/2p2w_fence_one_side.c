// robust: no
// race: no
// reason: 2+2W; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust
// 2+2W (T0: st x rlx, fence sc, st y rlx; T1: st y rlx, st x rlx), locations of type _Atomic short.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic short x, y;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(&y, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&x, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
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
