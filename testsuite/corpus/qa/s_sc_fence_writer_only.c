// robust: no
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust: S: the writer's SC fence is a release fence for T1's relaxed read of y, which does not acquire; T1's store of x may then precede x=2 in mo
// s_sc_fence_writer_only: T0: st x 2 rlx, fence sc, st y 1 rlx; T1: ld y rlx, st x 1 rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[1];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[0] = atomic_load_explicit(&y, memory_order_relaxed); // pyrsan: violation
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d\n", r[0]);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
