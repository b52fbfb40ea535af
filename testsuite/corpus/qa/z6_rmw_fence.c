// robust: no
// race: no
// reason: T0: x=1 rlx, y=1 rel; T1: fetch_add(y) acq_rel, z=1 rel; T2: z=2 rlx, SC fence, load x rlx. With z=1 before z=2 in mo and x read 0 the graph is not SC; T2's fence alone gives no hb from T0 since T2 reads nothing from T1; reference model (z6_2): not robust. Reported at T2's load of x or its store z=2 (stale: the initial values), or at T1's store z=1 when the SC run puts T2 first (it may then precede z=2 in mo)
// Z6-style chain: release store, acq_rel RMW of another thread, then a third thread overwriting z and reading x behind an SC fence.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y, z;
static int r1, r2;

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  atomic_store_explicit(&y, 1, memory_order_release);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r1 = atomic_fetch_add_explicit(&y, 1, memory_order_acq_rel);
  atomic_store_explicit(&z, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&z, 2, memory_order_relaxed); // pyrsan: violation
  atomic_thread_fence(memory_order_seq_cst);
  r2 = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t0, t1, t2};
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("%d %d z=%d\n", r1, r2, atomic_load(&z));
  return 0;
}
