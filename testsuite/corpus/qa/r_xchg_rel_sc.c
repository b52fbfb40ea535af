// robust: no
// race: no
// reason: R: T0 stores x relaxed then exchanges y with release; T1 stores y seq_cst then loads x seq_cst; when T0's exchange comes first in y's modification order, T1 may still read x = 0 (a release exchange does not order T0's earlier store before T1's later seq_cst accesses without T1 reading from it); reference model (r_xchg_rel_sc): not robust, both sc_accesses modes. When the SC run puts T1 first, the report is T0's exchange, which may still read the initial y and precede y=2 in mo
// R shape with a release exchange on the writer side and seq_cst accesses on the other.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r0, r1;

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  r0 = atomic_exchange_explicit(&y, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store(&y, 2); // pyrsan: violation
  r1 = atomic_load(&x); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t0, NULL);
  pthread_create(&b, NULL, t1, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("r0=%d r1=%d y=%d\n", r0, r1, atomic_load(&y));
  return 0;
}
