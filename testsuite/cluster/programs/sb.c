/* Store buffering with release stores and acquire loads: not robust (both loads may read 0). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int a, b;

static void *left(void *arg) {
  atomic_store_explicit(&x, 1, memory_order_release);
  a = atomic_load_explicit(&y, memory_order_acquire);
  return arg;
}

static void *right(void *arg) {
  atomic_store_explicit(&y, 1, memory_order_release);
  b = atomic_load_explicit(&x, memory_order_acquire);
  return arg;
}

int main(void) {
  pthread_t l, r;
  pthread_create(&l, NULL, left, NULL);
  pthread_create(&r, NULL, right, NULL);
  pthread_join(l, NULL);
  pthread_join(r, NULL);
  printf("%d %d\n", a, b);
  return 0;
}
