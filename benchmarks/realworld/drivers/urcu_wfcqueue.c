/* liburcu (liburcu-dev): wfcqueue, the wait-free concurrent queue (enqueue: xchg of the tail;
 * dequeue: under the queue's mutex), inline with _LGPL_SOURCE. 2 producers, 2 consumers.
 * Checks the sum. */
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#define _LGPL_SOURCE
#include <urcu/wfcqueue.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define PRODUCERS 2
#define PER_PRODUCER (SMALL ? 1 : 1000)
#define ITEMS (PRODUCERS * PER_PRODUCER)
struct item {
  struct cds_wfcq_node node;
  long value;
};
static struct cds_wfcq_head head;
static struct cds_wfcq_tail tail;
static struct item items[ITEMS];
static long consumed;

static void *producer(void *arg) {
  long base = (long)arg * PER_PRODUCER;
  for (long i = base; i < base + PER_PRODUCER; i++) {
    cds_wfcq_node_init(&items[i].node);
    items[i].value = i; /* plain write, published by the enqueue */
    cds_wfcq_enqueue(&head, &tail, &items[i].node);
  }
  return arg;
}

static void *consumer(void *arg) {
  long sum = 0;
  while (uatomic_read(&consumed) < ITEMS) {
    struct cds_wfcq_node *n = cds_wfcq_dequeue_blocking(&head, &tail);
    if (n != NULL) {
      sum += caa_container_of(n, struct item, node)->value;
      uatomic_inc(&consumed);
    }
  }
  *(long *)arg = sum;
  return arg;
}

int main(void) {
  cds_wfcq_init(&head, &tail);
  long sums[2] = {0, 0};
  pthread_t p[PRODUCERS], c[2];
  for (long i = 0; i < PRODUCERS; i++) pthread_create(&p[i], 0, producer, (void *)i);
  for (int i = 0; i < 2; i++) pthread_create(&c[i], 0, consumer, &sums[i]);
  for (int i = 0; i < PRODUCERS; i++) pthread_join(p[i], 0);
  for (int i = 0; i < 2; i++) pthread_join(c[i], 0);
  cds_wfcq_destroy(&head, &tail);
  long sum = sums[0] + sums[1];
  printf("%s %ld\n", (sum == (long)ITEMS * (ITEMS - 1) / 2) ? "ok" : "bad", sum);
  return (sum == (long)ITEMS * (ITEMS - 1) / 2) ? 0 : 1;
}
