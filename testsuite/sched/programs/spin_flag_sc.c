// spin_flag.c with seq_cst accesses, and a loop over two flags (not one the passes turn into a
// wait): the consumer re-reads `ready` and `done` (the SC fence after a re-read is clean:
// docs/scheduling.md "SC fences: when two commute"). Robust.
#include <pthread.h>
#include <stdatomic.h>

atomic_int ready, done, other;

static void *producer(void *arg) {
  (void)arg;
  atomic_store(&other, 1);
  atomic_store(&ready, 1);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  while (!atomic_load(&ready) && !atomic_load(&done))
    ;
  return (void *)(long)atomic_load(&other);
}

int main(void) {
  pthread_t c, p;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(c, NULL);
  pthread_join(p, NULL);
  return 0;
}
