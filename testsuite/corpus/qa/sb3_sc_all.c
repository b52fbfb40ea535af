// robust: yes
// race: no
// reason: 3.SB seq_cst; reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust
// 3.SB seq_cst (T0: st x sc, ld y sc; T1: st y sc, ld z sc; T2: st z sc, ld x sc), locations of type atomic_uint.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint x, y, z;
static long r[16];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_seq_cst);
  r[1] = atomic_load_explicit(&y, memory_order_seq_cst);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_seq_cst);
  r[3] = atomic_load_explicit(&z, memory_order_seq_cst);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&z, 1, memory_order_seq_cst);
  r[5] = atomic_load_explicit(&x, memory_order_seq_cst);
  return NULL;
}

int main(void) {
  pthread_t th[3];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  pthread_create(&th[2], NULL, t2, NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("%ld %ld %ld %ld\n", r[0], r[1], r[2], r[3]);
  printf("%ld %ld %ld\n", (long)atomic_load(&x), (long)atomic_load(&y), (long)atomic_load(&z));
  return 0;
}
