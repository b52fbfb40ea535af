// robust: yes
// race: no
// reason: Vyukov's bounded MPMC queue: a cell's sequence number is published with release after the plain data and read with acquire before it; positions are claimed with CAS; a relaxed read of the position that is stale makes the sequence test fail or the CAS fail, and the loop starts again from a fresh read
// Bounded MPMC queue (Vyukov), capacity 2, two producers and two consumers, one item each.
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#define CAP 2
struct cell {
  atomic_size_t seq;
  int data;
};
static struct cell buf[CAP];
static atomic_size_t enq_pos, deq_pos;
static int got[2];

static int enqueue(int v) {
  size_t pos = atomic_load_explicit(&enq_pos, memory_order_relaxed);
  for (;;) {
    struct cell *c = &buf[pos % CAP];
    size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    long dif = (long)seq - (long)pos;
    if (dif == 0) {
      if (atomic_compare_exchange_weak_explicit(&enq_pos, &pos, pos + 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
        c->data = v;
        atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
        return 1;
      }
    } else if (dif < 0) {
      return 0; /* full */
    } else {
      pos = atomic_load_explicit(&enq_pos, memory_order_relaxed);
    }
  }
}

static int dequeue(int *v) {
  size_t pos = atomic_load_explicit(&deq_pos, memory_order_relaxed);
  for (;;) {
    struct cell *c = &buf[pos % CAP];
    size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    long dif = (long)seq - (long)(pos + 1);
    if (dif == 0) {
      if (atomic_compare_exchange_weak_explicit(&deq_pos, &pos, pos + 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
        *v = c->data;
        atomic_store_explicit(&c->seq, pos + CAP, memory_order_release);
        return 1;
      }
    } else if (dif < 0) {
      return 0; /* empty */
    } else {
      pos = atomic_load_explicit(&deq_pos, memory_order_relaxed);
    }
  }
}

static void *producer(void *arg) {
  while (!enqueue((int)(size_t)arg))
    ;
  return NULL;
}
static void *consumer(void *arg) {
  int v;
  while (!dequeue(&v))
    ;
  got[(size_t)arg] = v;
  return NULL;
}

int main(void) {
  for (size_t i = 0; i < CAP; i++) atomic_init(&buf[i].seq, i);
  pthread_t t[4];
  pthread_create(&t[0], NULL, producer, (void *)1);
  pthread_create(&t[1], NULL, producer, (void *)2);
  pthread_create(&t[2], NULL, consumer, (void *)0);
  pthread_create(&t[3], NULL, consumer, (void *)1);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  printf("%d %d\n", got[0], got[1]);
  return got[0] + got[1] == 3 ? 0 : 1;
}
