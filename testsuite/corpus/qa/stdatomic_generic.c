// robust: yes
// race: no
// reason: the generic <stdatomic.h> functions without _explicit are seq_cst (atomic_store, atomic_load, atomic_exchange, atomic_fetch_or, atomic_compare_exchange_strong), which are fenced: Dekker-style mutual exclusion on two flags is robust and the plain counter is only touched in the critical section
// Dekker-style flags with the generic stdatomic.h functions (seq_cst by default), a CAS-based turn, two threads.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

static atomic_bool want[2];
static atomic_int turn;
static atomic_uint stats;
static int counter;

static void lock(int me) {
  int other = 1 - me;
  atomic_store(&want[me], true);
  while (atomic_load(&want[other])) {
    if (atomic_load(&turn) != me) {
      atomic_store(&want[me], false);
      while (atomic_load(&turn) != me) sched_yield();
      atomic_store(&want[me], true);
    }
  }
}
static void unlock(int me) {
  int expected = me;
  atomic_compare_exchange_strong(&turn, &expected, 1 - me);
  atomic_store(&want[me], false);
}

static void *work(void *arg) {
  int me = (int)(long)arg;
  lock(me);
  counter++;
  atomic_fetch_or(&stats, 1u << me);
  unlock(me);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, work, (void *)0L);
  pthread_create(&b, NULL, work, (void *)1L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d %u\n", counter, atomic_exchange(&stats, 0));
  return counter == 2 ? 0 : 1;
}
