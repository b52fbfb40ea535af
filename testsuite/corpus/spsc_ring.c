// robust: yes
// race: no
// reason: store buffering on (tail, head) would need the producer to leave its wait on a stale head (k - head < CAP, so head >= k - 1) and the consumer on a stale tail (tail > head, so tail >= j + 1) with head = j - 1 and tail = k - 1: k <= j and k > j + 1 at once; a stale read only spins
// Single-producer single-consumer ring buffer (capacity 2) with plain slots, release/acquire indices.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define CAP 2
static int slots[CAP];
static atomic_uint head, tail;

static void *producer(void *arg) {
  (void)arg;
  for (unsigned i = 0; i < 4; i++) {
    unsigned t = atomic_load_explicit(&tail, memory_order_relaxed);
    while (t - atomic_load_explicit(&head, memory_order_acquire) == CAP)
      ;
    slots[t % CAP] = (int)i + 1;
    atomic_store_explicit(&tail, t + 1, memory_order_release);
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  long sum = 0;
  for (unsigned i = 0; i < 4; i++) {
    unsigned h = atomic_load_explicit(&head, memory_order_relaxed);
    while (atomic_load_explicit(&tail, memory_order_acquire) == h)
      ;
    sum += slots[h % CAP];
    atomic_store_explicit(&head, h + 1, memory_order_release);
  }
  return (void *)sum;
}

int main(void) {
  pthread_t p, c;
  void *sum;
  pthread_create(&p, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, &sum);
  printf("sum=%ld\n", (long)sum);
  return (long)sum == 10 ? 0 : 1;
}
