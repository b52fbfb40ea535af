// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: SC fences between the (release) CAS and the relaxed load on both sides
// sb_cas_rel_acq_fence: T0: cas x 0 1 rel rlx False, fence sc, ld y rlx; T1: cas y 0 1 rel rlx False, fence sc, ld x rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[4];

static void *t0(void *arg) {
  (void)arg;
  { int e = 0; r[0] = atomic_compare_exchange_strong_explicit(&x, &e, 1, memory_order_release, memory_order_relaxed); }
  atomic_thread_fence(memory_order_seq_cst);
  r[1] = atomic_load_explicit(&y, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  { int e = 0; r[2] = atomic_compare_exchange_strong_explicit(&y, &e, 1, memory_order_release, memory_order_relaxed); }
  atomic_thread_fence(memory_order_seq_cst);
  r[3] = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d %d %d %d\n", r[0], r[1], r[2], r[3]);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
