// robust: yes
// race: no
// reason: S shape with release/acquire: reading y=1 synchronises, so T1's x=2 happens before T2's x=1 and must be mo-before it
// S shape on 8-bit atomics (atomic_char), release store / acquire load.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_char x, y;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 2, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  int r = atomic_load_explicit(&y, memory_order_acquire);
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  return (void *)(long)r;
}

int main(void) {
  pthread_t a, b;
  void *r;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, &r);
  printf("r=%ld x=%d\n", (long)r, (int)atomic_load(&x));
  return 0;
}
