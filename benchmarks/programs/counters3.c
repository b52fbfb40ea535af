/* Three threads, each bumping one shared counter K times with acq_rel RMWs: robust, and its
 * schedule tree has (3K)! / (K!)^3 classes (K = 4: 34,650), since every pair of RMWs on the
 * counter is dependent. The exploration benchmark of benchmarks/cluster.py. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#ifndef K
#define K 4
#endif

atomic_int counter;

static void *bump(void *arg) {
  for (int i = 0; i < K; i++) atomic_fetch_add_explicit(&counter, 1, memory_order_acq_rel);
  return arg;
}

int main(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, bump, NULL);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("ok %d\n", atomic_load_explicit(&counter, memory_order_acquire));
  return 0;
}
