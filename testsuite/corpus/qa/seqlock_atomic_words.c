// robust: no
// race: no
// reason: Boehm's seqlock with atomic data words: the writer bumps seq (relaxed), fences release, stores the words (relaxed) and publishes seq+2 (release); the reader reads seq (acquire), the words (relaxed), fences acquire and re-reads seq (relaxed). No data race (every shared word is atomic), but not robust: a reader may read a word older than SC allows (it then sees seq changed and retries), the store buffering between the writer's seq/word stores and the reader's word/seq loads
// Seqlock over two atomic data words (C11 fences), one writer, one reader retrying until consistent.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_uint seq;
static atomic_int d1, d2;

static void *writer(void *arg) {
  (void)arg;
  for (int i = 1; i <= 2; i++) {
    unsigned s = atomic_load_explicit(&seq, memory_order_relaxed);
    atomic_store_explicit(&seq, s + 1, memory_order_relaxed); // pyrsan: stale
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&d1, i, memory_order_relaxed); // pyrsan: stale
    atomic_store_explicit(&d2, -i, memory_order_relaxed); // pyrsan: stale
    atomic_store_explicit(&seq, s + 2, memory_order_release); // pyrsan: stale
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
  return (void *)(long)(a + b);
}

int main(void) {
  pthread_t w, r;
  void *res;
  pthread_create(&w, NULL, writer, NULL);
  pthread_create(&r, NULL, reader, NULL);
  pthread_join(w, NULL);
  pthread_join(r, &res);
  printf("%ld\n", (long)res);
  return res != 0;
}
