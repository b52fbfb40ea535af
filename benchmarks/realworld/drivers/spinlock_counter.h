/* The body of the CK spin-lock drivers: LOCK_T, LOCK_INIT, LOCK_ACQUIRE(&l) and LOCK_RELEASE(&l)
 * name the lock; it protects a plain counter, 4 threads (-DSMALL: 2 threads, a few rounds, for
 * pyrsan run --explore). Prints ok/bad from the count and exits 0/1. */
#ifndef SMALL
#define SMALL 0
#endif
#include <pthread.h>
#include <stdio.h>

#define THREADS (SMALL ? 2 : 4)
#define ROUNDS (SMALL ? 2 : 500)
static LOCK_T lock = LOCK_INIT;
static long counter;

static void *worker(void *arg) {
  for (int i = 0; i < ROUNDS; i++) {
    LOCK_ACQUIRE(&lock);
    counter++;
    LOCK_RELEASE(&lock);
  }
  return arg;
}

int main(void) {
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  printf("%s %ld\n", (counter == THREADS * ROUNDS) ? "ok" : "bad", counter);
  return (counter == THREADS * ROUNDS) ? 0 : 1;
}
