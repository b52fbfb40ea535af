// robust: yes
// race: yes
// reason: a plain 8-byte write by one thread and an atomic 4-byte write of its upper half by another overlap without happens-before: a data race
// Mixed-size access: plain 64-bit store vs atomic 32-bit store to half of it.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

static union {
  uint64_t whole;
  _Atomic uint32_t half[2];
} u;

static void *t1(void *arg) {
  (void)arg;
  u.whole = 0x1111111122222222ull;
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&u.half[1], 5, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%llx\n", (unsigned long long)u.whole);
  return 0;
}
