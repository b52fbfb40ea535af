// robust: no
// race: no
// reason: the whole-struct part is message passing (relaxed store of an 8-byte _Atomic struct, release flag; acquire flag, relaxed struct load): robust; the two _Atomic members of one object are store buffering under release/acquire (store own member, load the other): not robust
// _Atomic struct values and _Atomic struct members: MP through a whole-struct atomic (robust part) and SB through two members of one object (not robust).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct pair {
  int lo, hi;
};
static _Atomic struct pair whole;
static struct box {
  _Atomic int a;
  char pad[12];
  _Atomic int b;
} box;
static atomic_int ready;
static struct pair seen;
static int r1, r2;

static void *writer(void *arg) {
  (void)arg;
  struct pair p = {1, 2};
  atomic_store_explicit(&whole, p, memory_order_relaxed);
  atomic_store_explicit(&ready, 1, memory_order_release);
  atomic_store_explicit(&box.a, 1, memory_order_release); // pyrsan: stale
  r1 = atomic_load_explicit(&box.b, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  if (atomic_load_explicit(&ready, memory_order_acquire)) seen = atomic_load_explicit(&whole, memory_order_relaxed);
  atomic_store_explicit(&box.b, 1, memory_order_release); // pyrsan: stale
  r2 = atomic_load_explicit(&box.a, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, writer, NULL);
  pthread_create(&b, NULL, reader, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d %d %d %d\n", seen.lo, seen.hi, r1, r2);
  return 0;
}
