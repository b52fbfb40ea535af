/* Threads take turns by ticket, as a bounded queue's slots do: a thread waits (yielding) until
 * the turn counter reaches its ticket, does its step, and passes the turn on (release). Each
 * counter value is written once, so a stale read only makes the wait spin once more. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define NT 3
#define ROUNDS 10

static atomic_uint turn;
static unsigned steps[NT];

static void wait_turn(unsigned ticket) {
  while (atomic_load_explicit(&turn, memory_order_acquire) != ticket) sched_yield();
}

static void *worker(void *arg) {
  unsigned me = (unsigned)(size_t)arg;
  for (unsigned r = 0; r < ROUNDS; r++) {
    unsigned ticket = r * NT + me;
    wait_turn(ticket);
    steps[me]++;
    atomic_store_explicit(&turn, ticket + 1, memory_order_release);
  }
  return NULL;
}

int main(void) {
  pthread_t t[NT];
  for (size_t k = 0; k < NT; k++) pthread_create(&t[k], NULL, worker, (void *)k);
  for (int k = 0; k < NT; k++) pthread_join(t[k], NULL);
  printf("steps %u %u %u\n", steps[0], steps[1], steps[2]);
  return steps[0] + steps[1] + steps[2] == NT * ROUNDS ? 0 : 1;
}
