/* Concurrency Kit (libck-dev): ck_fifo_spsc (unbounded linked SPSC queue with a stub node),
 * 1 producer and 1 consumer passing pointers to plain records; entries are recycled by the
 * producer (ck_fifo_spsc_recycle). Checks the sum. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <ck_fifo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ITEMS (SMALL ? 3 : 3000)
static ck_fifo_spsc_t fifo;
static long records[ITEMS];

static void *producer(void *arg) {
  for (long i = 0; i < ITEMS; i++) {
    ck_fifo_spsc_entry_t *e = ck_fifo_spsc_recycle(&fifo);
    if (e == NULL) e = malloc(sizeof *e);
    records[i] = i; /* plain write, published by the enqueue */
    ck_fifo_spsc_enqueue(&fifo, e, &records[i]);
  }
  return arg;
}

static void *consumer(void *arg) {
  long sum = 0;
  for (long n = 0; n < ITEMS;) {
    long *p;
    if (ck_fifo_spsc_dequeue(&fifo, &p)) {
      sum += *p;
      n++;
    }
  }
  *(long *)arg = sum;
  return arg;
}

int main(void) {
  ck_fifo_spsc_init(&fifo, malloc(sizeof(ck_fifo_spsc_entry_t)));
  long sum = 0;
  pthread_t a, b;
  pthread_create(&a, 0, producer, 0);
  pthread_create(&b, 0, consumer, &sum);
  pthread_join(a, 0);
  pthread_join(b, 0);
  ck_fifo_spsc_entry_t *e;
  while ((e = ck_fifo_spsc_recycle(&fifo)) != NULL) free(e);
  ck_fifo_spsc_deinit(&fifo, &e);
  free(e); /* the stub: the last dequeued entry */
  printf("%s %ld\n", (sum == (long)ITEMS * (ITEMS - 1) / 2) ? "ok" : "bad", sum);
  return (sum == (long)ITEMS * (ITEMS - 1) / 2) ? 0 : 1;
}
