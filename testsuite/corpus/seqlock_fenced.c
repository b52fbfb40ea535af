// robust: no
// race: no
// reason: seqlock (Boehm's fences): a reader may read the old data and a new sequence number (then retries); the RSAN paper reports the seqlock as not robust
// Seqlock with relaxed data accesses, release/acquire fences, one writer and one reader.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint seq;
static atomic_int d1, d2;

static void *writer(void *arg) {
  (void)arg;
  for (int i = 1; i <= 2; i++) {
    unsigned s = atomic_load_explicit(&seq, memory_order_relaxed);
    atomic_store_explicit(&seq, s + 1, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&d1, i, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
    atomic_store_explicit(&d2, i, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
    atomic_store_explicit(&seq, s + 2, memory_order_release); // pyrsan: violation, pyrsan: stale
  }
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  int a, b;
  unsigned s0, s1;
  do {
    s0 = atomic_load_explicit(&seq, memory_order_acquire); // pyrsan: violation
    a = atomic_load_explicit(&d1, memory_order_relaxed); // pyrsan: violation
    b = atomic_load_explicit(&d2, memory_order_relaxed); // pyrsan: violation
    atomic_thread_fence(memory_order_acquire);
    s1 = atomic_load_explicit(&seq, memory_order_relaxed); // pyrsan: violation
  } while ((s0 & 1) || s0 != s1);
  return (void *)(long)(a == b);
}

int main(void) {
  pthread_t w, r;
  void *ok;
  pthread_create(&w, NULL, writer, NULL);
  pthread_create(&r, NULL, reader, NULL);
  pthread_join(w, NULL);
  pthread_join(r, &ok);
  printf("consistent=%ld\n", (long)ok);
  return 0;
}
