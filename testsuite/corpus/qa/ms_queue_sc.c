// robust: yes
// race: no
// reason: Michael-Scott queue with every atomic access seq_cst (stdatomic.h's default functions): under sc_accesses=fenced a program whose atomics are all seq_cst is robust; the plain value is written before the enqueuing CAS and read after the dequeuer's seq_cst load of next that reads it (release/acquire); nodes are never freed (no reclamation, no ABA)
// Michael-Scott queue (seq_cst defaults), two producers and one consumer, leaked nodes.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
  int value;
  _Atomic(struct node *) next;
};

static _Atomic(struct node *) head, tail;
static atomic_int consumed;

static void enqueue(int v) {
  struct node *n = malloc(sizeof *n);
  n->value = v;
  atomic_init(&n->next, NULL);
  for (;;) {
    struct node *t = atomic_load(&tail);
    struct node *next = atomic_load(&t->next);
    if (t != atomic_load(&tail)) continue;
    if (next == NULL) {
      if (atomic_compare_exchange_strong(&t->next, &next, n)) {
        atomic_compare_exchange_strong(&tail, &t, n);
        return;
      }
    } else {
      atomic_compare_exchange_strong(&tail, &t, next);
    }
  }
}

static int dequeue(int *out) {
  for (;;) {
    struct node *h = atomic_load(&head);
    struct node *t = atomic_load(&tail);
    struct node *next = atomic_load(&h->next);
    if (h != atomic_load(&head)) continue;
    if (h == t) {
      if (next == NULL) return 0;
      atomic_compare_exchange_strong(&tail, &t, next);
    } else {
      int v = next->value;
      if (atomic_compare_exchange_strong(&head, &h, next)) {
        *out = v;
        return 1;
      }
    }
  }
}

static void *producer(void *arg) {
  int base = (int)(long)arg;
  for (int i = 0; i < 2; i++) enqueue(base + i);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  int sum = 0, v;
  while (atomic_load(&consumed) < 4) {
    if (dequeue(&v)) {
      sum += v;
      atomic_fetch_add(&consumed, 1);
    }
  }
  printf("sum=%d\n", sum);
  return NULL;
}

int main(void) {
  struct node *dummy = calloc(1, sizeof *dummy);
  atomic_init(&head, dummy);
  atomic_init(&tail, dummy);
  pthread_t p0, p1, c;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p0, NULL, producer, (void *)10L);
  pthread_create(&p1, NULL, producer, (void *)20L);
  pthread_join(p0, NULL);
  pthread_join(p1, NULL);
  pthread_join(c, NULL);
  return 0;
}
