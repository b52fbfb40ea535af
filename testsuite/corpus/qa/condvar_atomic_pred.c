// robust: yes
// race: no
// reason: a condition variable whose predicate is a relaxed atomic counter: the producer bumps it and signals under the mutex, the consumer checks it under the same mutex; the mutex orders every access of the counter and of the plain item array (unlock/lock synchronise), so no read can be stale and nothing races
// Producer/consumer with a mutex, a condition variable and an atomic predicate read relaxed under the lock.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_int available;
static int items[4];

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < 4; i++) {
    pthread_mutex_lock(&m);
    items[i] = i + 10;
    atomic_fetch_add_explicit(&available, 1, memory_order_relaxed);
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&m);
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  int sum = 0;
  for (int taken = 0; taken < 4; taken++) {
    pthread_mutex_lock(&m);
    while (atomic_load_explicit(&available, memory_order_relaxed) <= taken) pthread_cond_wait(&cv, &m);
    sum += items[taken];
    pthread_mutex_unlock(&m);
  }
  return (void *)(long)sum;
}

int main(void) {
  pthread_t p, c;
  void *sum;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, &sum);
  printf("%ld\n", (long)sum);
  return 0;
}
