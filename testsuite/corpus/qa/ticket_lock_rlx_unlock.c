// robust: yes
// race: yes
// reason: the ticket lock's unlock stores now_serving with relaxed order: the next owner's acquire load reads it but does not synchronise (no release), so the counter's increments in two critical sections are unordered: a data race on the plain counter; the atomics themselves (one RMW counter, waits on now_serving) have no non-SC outcome
// Ticket spinlock whose unlock is a relaxed store: the protected plain counter races.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint next_ticket, now_serving;
static long counter;

static void *worker(void *arg) {
  (void)arg;
  unsigned me = atomic_fetch_add_explicit(&next_ticket, 1, memory_order_relaxed);
  while (atomic_load_explicit(&now_serving, memory_order_acquire) != me) {
  }
  counter++;
  atomic_store_explicit(&now_serving, me + 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, worker, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%ld\n", counter);
  return 0;
}
