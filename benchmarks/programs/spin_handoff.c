/* Benchmark program: two threads hand a turn back and forth through a tight spin loop on one
 * atomic (acquire loads until it holds the thread's number, then a release store). Most of the
 * loads fail: the cost of a failed attempt of a recognised spin loop.
 *
 * usage: spin_handoff [ROUNDS]      prints "ok <final turn>" */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
static atomic_long turn;
static long rounds;
static void *player(void *arg) {
  long me = (long)arg;
  for (long r = 0; r < rounds; r++) {
    long want = 2 * r + me;
    while (atomic_load_explicit(&turn, memory_order_acquire) != want) {
    }
    atomic_store_explicit(&turn, want + 1, memory_order_release);
  }
  return NULL;
}
int main(int argc, char **argv) {
  rounds = argc > 1 ? atol(argv[1]) : 100000;
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, player, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("ok %ld\n", (long)atomic_load(&turn));
  return 0;
}
