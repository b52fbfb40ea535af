// robust: yes
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): robust: load buffering is never observable under RC20 (po ∪ rf acyclic); all seq_cst anyway
// lb_sc_all: T0: ld x sc, st y 1 sc; T1: ld y sc, st x 1 sc.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[2];

static void *t0(void *arg) {
  (void)arg;
  r[0] = atomic_load_explicit(&x, memory_order_seq_cst);
  atomic_store_explicit(&y, 1, memory_order_seq_cst);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  r[1] = atomic_load_explicit(&y, memory_order_seq_cst);
  atomic_store_explicit(&x, 1, memory_order_seq_cst);
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
