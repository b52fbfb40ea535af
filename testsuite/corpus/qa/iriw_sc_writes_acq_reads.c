// robust: no
// race: no
// reason: reference model (testsuite/reference/rc20.py, sc_accesses=fenced): not robust: IRIW: seq_cst writes but acquire (not seq_cst) reads; the two readers may disagree on the order of the writes
// iriw_sc_writes_acq_reads: T0: st x 1 sc; T1: st y 1 sc; T2: ld x acq, ld y acq; T3: ld y acq, ld x acq.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[4];

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_seq_cst); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_seq_cst); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r[0] = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
  r[1] = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  r[2] = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  r[3] = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[4];
  pthread_create(&th[0], NULL, t0, NULL);
  pthread_create(&th[1], NULL, t1, NULL);
  pthread_create(&th[2], NULL, t2, NULL);
  pthread_create(&th[3], NULL, t3, NULL);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  printf("%d %d %d %d\n", r[0], r[1], r[2], r[3]);
  printf("%d %d\n", atomic_load(&x), atomic_load(&y));
  return 0;
}
