// robust: yes
// race: no
// reason: ticket lock: fetch_add(relaxed) takes a ticket, acquire spin on now_serving, release increment to unlock; critical sections ordered by now_serving's release/acquire
// Ticket lock protecting a plain counter, three threads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint next_ticket, now_serving;
static long counter;

static void lock(void) {
  unsigned me = atomic_fetch_add_explicit(&next_ticket, 1, memory_order_relaxed);
  while (atomic_load_explicit(&now_serving, memory_order_acquire) != me)
    ;
}

static void unlock(void) {
  unsigned cur = atomic_load_explicit(&now_serving, memory_order_relaxed);
  atomic_store_explicit(&now_serving, cur + 1, memory_order_release);
}

static void *work(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    lock();
    counter++;
    unlock();
  }
  return NULL;
}

int main(void) {
  pthread_t th[3];
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, work, NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("%ld\n", counter);
  return counter == 6 ? 0 : 1;
}
