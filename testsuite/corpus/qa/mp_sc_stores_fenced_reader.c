// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: the seq_cst store of y is preceded by an SC fence; the reader's SC fence after reading y synchronises with it (fence-fence), so x=1 is visible
// mp_sc_stores_fenced_reader: T0: st x 1 rlx, st y 1 sc; T1: ld y rlx, fence sc, ld x rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[2];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_seq_cst);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[0] = atomic_load_explicit(&y, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  r[1] = atomic_load_explicit(&x, memory_order_relaxed);
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
