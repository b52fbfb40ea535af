/* Concurrency Kit (libck-dev): ck_ring MPMC (bounded ring of pointers, CAS on the indices),
 * 2 producers and 2 consumers passing pointers to plain records. Checks the sum. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <ck_ring.h>
#include <pthread.h>
#include <stdio.h>

#define SIZE (SMALL ? 4 : 16)
#define PRODUCERS 2
#define PER_PRODUCER (SMALL ? 1 : 1000)
#define ITEMS (PRODUCERS * PER_PRODUCER)
static ck_ring_t ring;
static ck_ring_buffer_t buffer[SIZE];
static long records[ITEMS];
static long consumed;

static void *producer(void *arg) {
  long base = (long)arg * PER_PRODUCER;
  for (long i = base; i < base + PER_PRODUCER; i++) {
    records[i] = i; /* plain write, published by the enqueue */
    while (!ck_ring_enqueue_mpmc(&ring, buffer, &records[i])) {
    }
  }
  return arg;
}

static void *consumer(void *arg) {
  long sum = 0;
  while (__atomic_load_n(&consumed, __ATOMIC_RELAXED) < ITEMS) {
    void *p;
    if (ck_ring_dequeue_mpmc(&ring, buffer, &p)) {
      sum += *(long *)p;
      __atomic_fetch_add(&consumed, 1, __ATOMIC_RELAXED);
    }
  }
  *(long *)arg = sum;
  return arg;
}

int main(void) {
  ck_ring_init(&ring, SIZE);
  long sums[2] = {0, 0};
  pthread_t p[PRODUCERS], c[2];
  for (long i = 0; i < PRODUCERS; i++) pthread_create(&p[i], 0, producer, (void *)i);
  for (int i = 0; i < 2; i++) pthread_create(&c[i], 0, consumer, &sums[i]);
  for (int i = 0; i < PRODUCERS; i++) pthread_join(p[i], 0);
  for (int i = 0; i < 2; i++) pthread_join(c[i], 0);
  long sum = sums[0] + sums[1];
  printf("%s %ld\n", (sum == (long)ITEMS * (ITEMS - 1) / 2) ? "ok" : "bad", sum);
  return (sum == (long)ITEMS * (ITEMS - 1) / 2) ? 0 : 1;
}
