// robust: yes
// race: no
// reason: Vyukov's intrusive MPSC queue: a producer clears its node's next (relaxed, before publication), swaps itself in as head (acq_rel exchange) and links the previous head to it with a release store; the single consumer follows next pointers with acquire loads, so each node's plain payload is read after the release that published it. A stale null next only makes the consumer see the queue as empty for now and try again
// Intrusive MPSC queue (stub node), two producers of two nodes each, one consumer that pops all four.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
  _Atomic(struct node *) next;
  int payload;
};
static struct node stub;
static _Atomic(struct node *) head = &stub; /* producers' end */
static struct node *tail = &stub;           /* consumer's end */

static void push(struct node *n) {
  atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
  struct node *prev = atomic_exchange_explicit(&head, n, memory_order_acq_rel);
  atomic_store_explicit(&prev->next, n, memory_order_release);
}

/* the next node's payload, or -1 when the queue looks empty */
static int pop(void) {
  struct node *t = tail;
  struct node *next = atomic_load_explicit(&t->next, memory_order_acquire);
  if (t == &stub) {
    if (!next) return -1;
    tail = next;
    t = next;
    next = atomic_load_explicit(&t->next, memory_order_acquire);
  }
  if (next) {
    tail = next;
    return t->payload;
  }
  if (t != atomic_load_explicit(&head, memory_order_acquire)) return -1; /* a push in progress */
  push(&stub);
  next = atomic_load_explicit(&t->next, memory_order_acquire);
  if (next) {
    tail = next;
    return t->payload;
  }
  return -1;
}

static void *producer(void *arg) {
  int base = (int)(long)arg;
  for (int i = 0; i < 2; i++) {
    struct node *n = malloc(sizeof *n);
    n->payload = base + i;
    push(n);
  }
  return NULL;
}

int main(void) {
  pthread_t p[2];
  pthread_create(&p[0], NULL, producer, (void *)10L);
  pthread_create(&p[1], NULL, producer, (void *)20L);
  int got = 0, sum = 0;
  while (got < 4) {
    int v = pop();
    if (v >= 0) {
      sum += v;
      got++;
    }
  }
  pthread_join(p[0], NULL);
  pthread_join(p[1], NULL);
  printf("%d\n", sum);
  return sum == 62 ? 0 : 1;
}
