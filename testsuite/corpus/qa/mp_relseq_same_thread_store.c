// robust: no
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust: C++20 release sequences run through RMWs only: the relaxed store y=2 by the same thread does not continue y=1's, so reading 2 with acquire does not synchronise and x may be stale
// mp_relseq_same_thread_store: T0: st x 1 rlx, st y 1 rel, st y 2 rlx; T1: ld y acq, ld x rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[2];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  atomic_store_explicit(&y, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[0] = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  r[1] = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d %d\n", r[0], r[1]);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
