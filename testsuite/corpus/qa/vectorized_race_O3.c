// robust: yes
// race: yes
// options: -O3
// reason: the producer's vectorised fill of a plain array is published with a relaxed store; the consumer's relaxed load of the flag does not synchronise with it, so its (vectorised) reads of the array race with the fill (C11 5.1.2.4p25); the flag alone is one location
// A relaxed flag in front of vectorised plain loops at -O3: the array accesses race.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define N 1024
static int values[N];
static atomic_int published;

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++) values[i] = i * 3;
  atomic_store_explicit(&published, 1, memory_order_relaxed);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&published, memory_order_relaxed)) {
  }
  long sum = 0;
  for (int i = 0; i < N; i++) sum += values[i];
  printf("%ld\n", sum);
  return NULL;
}

int main(void) {
  pthread_t p, c;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  return 0;
}
