// robust: no
// race: no
// reason: SB on an _Atomic double and an _Atomic float in a union-free struct, release/acquire
// SB on floating-point atomics.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic double x;
static _Atomic float y;
static double r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1.5, memory_order_release); // pyrsan: stale
  r0 = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 2.5f, memory_order_release); // pyrsan: stale
  r1 = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%g %g\n", r0, r1);
  return 0;
}
