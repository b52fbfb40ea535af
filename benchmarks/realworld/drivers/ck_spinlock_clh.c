/* Concurrency Kit (libck-dev): ck_spinlock_clh (queue lock: each acquisition leaves its node
 * to the successor and takes over its predecessor's) protecting a plain counter, 4 threads.
 * Checks the count. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <ck_spinlock.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS (SMALL ? 2 : 4)
#define ROUNDS (SMALL ? 2 : 500)
static ck_spinlock_clh_t *lock;
static long counter;

static void *worker(void *arg) {
  ck_spinlock_clh_t *node = malloc(sizeof *node); /* ownership moves along the queue */
  for (int i = 0; i < ROUNDS; i++) {
    ck_spinlock_clh_lock(&lock, node);
    counter++;
    ck_spinlock_clh_unlock(&node);
  }
  return node; /* the node this thread owns now */
}

int main(void) {
  static ck_spinlock_clh_t unowned;
  ck_spinlock_clh_init(&lock, &unowned);
  pthread_t t[THREADS];
  void *nodes[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], &nodes[i]);
  for (int i = 0; i < THREADS; i++)
    if (nodes[i] != &unowned) free(nodes[i]);
  printf("%s %ld\n", (counter == THREADS * ROUNDS) ? "ok" : "bad", counter);
  return (counter == THREADS * ROUNDS) ? 0 : 1;
}
