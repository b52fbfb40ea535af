// robust: yes
// race: no
// reason: ticket lock: a relaxed fetch_add takes a ticket (an RMW reads the latest ticket), the waiter spins on now_serving with acquire until it holds its ticket, unlock stores now_serving + 1 with release (the owner's relaxed read of now_serving reads its own wait's value); critical sections are ordered by the release store / acquire load, so the plain counter is race-free, and each spin read waits for one value (no stale read escapes)
// Ticket spinlock protecting a plain counter, three threads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct ticket_lock {
  atomic_uint next_ticket;
  atomic_uint now_serving;
};

static struct ticket_lock lock;
static long counter;

static void ticket_acquire(struct ticket_lock *l) {
  unsigned me = atomic_fetch_add_explicit(&l->next_ticket, 1, memory_order_relaxed);
  while (atomic_load_explicit(&l->now_serving, memory_order_acquire) != me) {
  }
}

static void ticket_release(struct ticket_lock *l) {
  unsigned s = atomic_load_explicit(&l->now_serving, memory_order_relaxed);
  atomic_store_explicit(&l->now_serving, s + 1, memory_order_release);
}

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    ticket_acquire(&lock);
    counter++;
    ticket_release(&lock);
  }
  return NULL;
}

int main(void) {
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, worker, NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  printf("%ld\n", counter);
  return 0;
}
