// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: SC fences between the two stores of each thread forbid the 2+2W cycle
// 2p2w_sc_fence_rel: T0: st x 1 rel, fence sc, st y 2 rel; T1: st y 1 rel, fence sc, st x 2 rel.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[1];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(&y, 2, memory_order_release);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(&x, 2, memory_order_release);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
