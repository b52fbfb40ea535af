/* Concurrency Kit (libck-dev): ck_fifo_mpmc (Michael-Scott queue with generation-counted
 * pointers: 8-byte loads of each half, 16-byte DCAS of the pair), 2 producers and 2 consumers
 * passing pointers to plain records. Dequeued nodes are not reused (no safe memory
 * reclamation here). Checks the sum. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <ck_fifo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define PRODUCERS 2
#define PER_PRODUCER (SMALL ? 1 : 800)
#define ITEMS (PRODUCERS * PER_PRODUCER)
static ck_fifo_mpmc_t fifo;
static ck_fifo_mpmc_entry_t entries[ITEMS + 1];
static long records[ITEMS];
static long consumed; /* items taken, all consumers */

static void *producer(void *arg) {
  long base = (long)arg * PER_PRODUCER;
  for (long i = base; i < base + PER_PRODUCER; i++) {
    records[i] = i; /* plain write, published by the enqueue */
    ck_fifo_mpmc_enqueue(&fifo, &entries[i + 1], &records[i]);
  }
  return arg;
}

static void *consumer(void *arg) {
  long sum = 0;
  while (__atomic_load_n(&consumed, __ATOMIC_RELAXED) < ITEMS) {
    long *p;
    ck_fifo_mpmc_entry_t *garbage;
    if (ck_fifo_mpmc_dequeue(&fifo, &p, &garbage)) {
      sum += *p;
      __atomic_fetch_add(&consumed, 1, __ATOMIC_RELAXED);
    }
  }
  *(long *)arg = sum;
  return arg;
}

int main(void) {
  ck_fifo_mpmc_init(&fifo, &entries[0]);
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
