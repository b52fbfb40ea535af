// robust: yes
// race: yes
// reason: a union of an _Atomic 64-bit word and two plain 32-bit halves: T0 updates the word with a relaxed fetch_add, T1 reads the low half through the plain member; a non-atomic access concurrent with an atomic write of the same bytes is a data race (C11 5.1.2.4p25); the atomic word alone has one writer
// An _Atomic uint64_t in a union with plain 32-bit halves, read through the plain view by another thread.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

union counter {
  _Atomic uint64_t word;
  struct {
    uint32_t lo, hi;
  } half;
};

static union counter c;
static atomic_int started;

static void *bump(void *arg) {
  (void)arg;
  atomic_store_explicit(&started, 1, memory_order_relaxed);
  for (int i = 0; i < 3; i++) atomic_fetch_add_explicit(&c.word, 1, memory_order_relaxed);
  return NULL;
}

static void *peek(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&started, memory_order_relaxed)) {
  }
  return (void *)(uintptr_t)c.half.lo;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, bump, NULL);
  pthread_create(&b, NULL, peek, NULL);
  void *r;
  pthread_join(a, NULL);
  pthread_join(b, &r);
  printf("%lu %lu\n", (unsigned long)(uintptr_t)r, (unsigned long)atomic_load(&c.word));
  return 0;
}
