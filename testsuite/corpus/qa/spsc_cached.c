// robust: no
// race: no
// reason: the re-read loops store what they read into the cache (a global), so they are not wait loops whose failed iterations make no events: a stale re-read is an event, and producer (store tail; read head) against consumer (store head; read tail) is store buffering; a side that re-reads the other's index without a fence may read it stale
// Single-producer single-consumer ring (capacity 2) with per-side cached copies of the other index, four items.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define CAP 2
#define N 4
static int slots[CAP];
static atomic_uint head, tail; /* consumer owns head, producer owns tail */
static unsigned head_cache;   /* producer's copy of head */
static unsigned tail_cache;   /* consumer's copy of tail */
static long sum;

static void *producer(void *arg) {
  (void)arg;
  for (int i = 1; i <= N; i++) {
    unsigned t = atomic_load_explicit(&tail, memory_order_relaxed);
    while (t - head_cache == CAP) head_cache = atomic_load_explicit(&head, memory_order_acquire); // pyrsan: violation
    slots[t % CAP] = i;
    atomic_store_explicit(&tail, t + 1, memory_order_release); // pyrsan: stale
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  for (int i = 1; i <= N; i++) {
    unsigned h = atomic_load_explicit(&head, memory_order_relaxed);
    while (h == tail_cache) tail_cache = atomic_load_explicit(&tail, memory_order_acquire); // pyrsan: violation
    sum += slots[h % CAP];
    atomic_store_explicit(&head, h + 1, memory_order_release); // pyrsan: stale
  }
  return NULL;
}

int main(void) {
  pthread_t p, c;
  pthread_create(&p, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  printf("%ld\n", sum);
  return sum == 10 ? 0 : 1;
}
