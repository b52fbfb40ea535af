// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: WRC with SC fences in T1 and T2: the fences synchronise (fence-fence through the reads), x=1 is visible to T2
// wrc_sc_fences: T0: st x 1 rlx; T1: ld x rlx, fence sc, st y 1 rlx; T2: ld y rlx, fence sc, ld x rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[3];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[0] = atomic_load_explicit(&x, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r[1] = atomic_load_explicit(&y, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  r[2] = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[3];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  pthread_create(&th[2], NULL, t2, NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("%d %d %d\n", r[0], r[1], r[2]);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
