/* libatomic_ops (libatomic-ops-dev; link: -latomic_ops): message passing with AO_store_release
 * / AO_load_acquire and a test-and-set lock (AO_test_and_set_acquire / AO_CLEAR), 3 threads.
 * Checks the counter and the handed-over data. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <atomic_ops.h>
#include <pthread.h>
#include <stdio.h>

#define ROUNDS (SMALL ? 2 : 5000)
static AO_TS_t lock = AO_TS_INITIALIZER;
static long counter;
static long data;
static volatile AO_t ready;

static void *work(void *arg) {
  if (arg) {
    data = 42;
    AO_store_release(&ready, 1);
  }
  for (int i = 0; i < ROUNDS; i++) {
    while (AO_test_and_set_acquire(&lock) == AO_TS_SET) {
    }
    counter++;
    AO_CLEAR(&lock);
  }
  return 0;
}

int main(void) {
  pthread_t t[3];
  for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, work, (void *)(long)(i == 0));
  while (!AO_load_acquire(&ready)) {
  }
  long seen = data;
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  if (counter != 3 * ROUNDS || seen != 42) {
    printf("bad: counter %ld, data %ld\n", counter, seen);
    return 1;
  }
  printf("ok counter %ld\n", counter);
  return 0;
}
