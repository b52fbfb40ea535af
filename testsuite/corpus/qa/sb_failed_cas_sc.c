// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: a seq_cst CAS is fenced whether it succeeds or fails (sc_accesses=fenced), so the failing CAS on z acts as an SC fence between the store and the load
// sb_failed_cas_sc: T0: st x 1 rlx, cas z 5 6 sc sc False, ld y rlx; T1: st y 1 rlx, cas z 5 6 sc sc False, ld x rlx.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y, z;
static int r[4];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  { int e = 5; r[0] = atomic_compare_exchange_strong_explicit(&z, &e, 6, memory_order_seq_cst, memory_order_seq_cst); }
  r[1] = atomic_load_explicit(&y, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  { int e = 5; r[2] = atomic_compare_exchange_strong_explicit(&z, &e, 6, memory_order_seq_cst, memory_order_seq_cst); }
  r[3] = atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%d %d %d %d\n", r[0], r[1], r[2], r[3]);
  printf("%d %d %d\n", atomic_load(&x), atomic_load(&y), atomic_load(&z));
  return 0;
}
