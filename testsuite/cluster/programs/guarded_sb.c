/* Store buffering that only happens when the checker thread runs after the opener: the
 * violation lives in one part of the schedule tree only. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int open_gate, x, y;
int a, b;

static void *opener(void *arg) {
  atomic_store_explicit(&open_gate, 1, memory_order_release);
  atomic_store_explicit(&x, 1, memory_order_release);
  a = atomic_load_explicit(&y, memory_order_acquire);
  return arg;
}

static void *checker(void *arg) {
  if (atomic_load_explicit(&open_gate, memory_order_acquire)) {
    atomic_store_explicit(&y, 1, memory_order_release);
    b = atomic_load_explicit(&x, memory_order_acquire);
  }
  return arg;
}

int main(void) {
  pthread_t o, c;
  pthread_create(&o, NULL, opener, NULL);
  pthread_create(&c, NULL, checker, NULL);
  pthread_join(o, NULL);
  pthread_join(c, NULL);
  printf("%d %d\n", a, b);
  return 0;
}
