/* Concurrency Kit (libck-dev): ck_ring single-producer single-consumer, 1 producer and 1
 * consumer passing pointers to plain records. Checks the sum. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <ck_ring.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SIZE (SMALL ? 4 : 64)
#define ITEMS (SMALL ? 3 : 5000)
static ck_ring_t ring;
static ck_ring_buffer_t buffer[SIZE];
static long records[ITEMS];

static void *producer(void *arg) {
  for (long i = 0; i < ITEMS; i++) {
    records[i] = i; /* plain write, published by the enqueue */
    while (!ck_ring_enqueue_spsc(&ring, buffer, &records[i])) {
    }
  }
  return arg;
}

static void *consumer(void *arg) {
  long sum = 0;
  for (long n = 0; n < ITEMS;) {
    void *p;
    if (ck_ring_dequeue_spsc(&ring, buffer, &p)) {
      sum += *(long *)p;
      n++;
    }
  }
  *(long *)arg = sum;
  return arg;
}

int main(void) {
  ck_ring_init(&ring, SIZE);
  long sum = 0;
  pthread_t a, b;
  pthread_create(&a, 0, producer, 0);
  pthread_create(&b, 0, consumer, &sum);
  pthread_join(a, 0);
  pthread_join(b, 0);
  printf("%s %ld\n", (sum == (long)ITEMS * (ITEMS - 1) / 2) ? "ok" : "bad", sum);
  return (sum == (long)ITEMS * (ITEMS - 1) / 2) ? 0 : 1;
}
