// robust: no
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust: an acq_rel fence is no SC fence: only one side has a store-load fence, SB remains
// sb_fence_acq_rel_mix: T0: st x 1 rel, fence ar, ld y acq; T1: st y 1 rel, fence sc, ld x acq.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[2];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  atomic_thread_fence(memory_order_acq_rel);
  r[0] = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  atomic_thread_fence(memory_order_seq_cst);
  r[1] = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
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
