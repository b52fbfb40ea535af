// A consumer spins (plain loop on an acquire load) until the producer's release store:
// every strategy must let the producer run, and every run terminates. Robust.
#include <pthread.h>
#include <stdatomic.h>

atomic_int ready;
int data;

static void *producer(void *arg) {
  (void)arg;
  data = 42;
  atomic_store_explicit(&ready, 1, memory_order_release);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&ready, memory_order_acquire))
    ;
  return (void *)(long)data;
}

int main(void) {
  pthread_t c, p;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(c, NULL);
  pthread_join(p, NULL);
  return 0;
}
