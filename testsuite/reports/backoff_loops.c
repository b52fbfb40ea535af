/* Loops with back-off between attempts (issue 19 item 1), in the style of a lock-free library:
 * a test-and-test-and-set lock whose waiters sleep with exponential back-off, a statistics
 * counter updated by a CAS loop that yields after a few failures, and a start flag waited for
 * with a spin counter and sched_yield. All are robust once the loops are modelled as what
 * they are (a wait, an RMW); analysed as written, each failed attempt may read a stale value. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define THREADS 3
#define ROUNDS 20
static atomic_int lock_word;
static atomic_int start;
static atomic_long hits;
static long shared_total; /* protected by lock_word */

static void lock(void) {
  long delay = 100;
  while (atomic_exchange_explicit(&lock_word, 1, memory_order_acquire)) {
    while (atomic_load_explicit(&lock_word, memory_order_relaxed) != 0) {
      struct timespec ts = {0, delay};
      nanosleep(&ts, NULL);
      if (delay < 10000) delay *= 2;
    }
  }
}

static void unlock(void) { atomic_store_explicit(&lock_word, 0, memory_order_release); }

static void count_hit(void) {
  long old = atomic_load_explicit(&hits, memory_order_relaxed);
  unsigned spins = 0;
  while (!atomic_compare_exchange_weak_explicit(&hits, &old, old + 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
    if (++spins > 4) sched_yield();
  }
}

static void *worker(void *arg) {
  unsigned spins = 0;
  while (atomic_load_explicit(&start, memory_order_acquire) != 1) {
    if (++spins > 16) { sched_yield(); spins = 0; }
  }
  for (int i = 0; i < ROUNDS; i++) {
    lock();
    shared_total++;
    unlock();
    count_hit();
  }
  return arg;
}

int main(void) {
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, NULL);
  atomic_store_explicit(&start, 1, memory_order_release);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  printf("ok %ld %ld\n", shared_total, atomic_load(&hits));
  return shared_total == THREADS * ROUNDS ? 0 : 1;
}
