/* Concurrency Kit (libck-dev): ck_spinlock_ticket protecting a plain counter, 4 threads.
 * Checks the count. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <ck_spinlock.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS (SMALL ? 2 : 4)
#define ROUNDS (SMALL ? 2 : 500)
static ck_spinlock_ticket_t lock = CK_SPINLOCK_TICKET_INITIALIZER;
static long counter;

static void *worker(void *arg) {
  for (int i = 0; i < ROUNDS; i++) {
    ck_spinlock_ticket_lock(&lock);
    counter++;
    ck_spinlock_ticket_unlock(&lock);
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
