// robust: yes
// race: no
// reason: a lock word holding its owner's id: each thread's CAS (acquire) from 0 to its own id, retried with the expected value reset to 0, and a release store of 0; the plain counter is ordered by the lock; a failed CAS only retries
// Two threads, two acquisitions each; the desired value is the thread's own, not a constant.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_long owner;
static long counter;

static void lock(long me) {
  long expected = 0;
  while (!atomic_compare_exchange_weak_explicit(&owner, &expected, me, memory_order_acquire,
                                                memory_order_relaxed))
    expected = 0;
}

static void unlock(void) { atomic_store_explicit(&owner, 0, memory_order_release); }

static void *work(void *arg) {
  long me = (long)arg;
  for (int i = 0; i < 2; i++) {
    lock(me);
    counter++;
    unlock();
  }
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, work, (void *)1L);
  pthread_create(&b, NULL, work, (void *)2L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%ld\n", counter);
  return counter == 4 ? 0 : 1;
}
