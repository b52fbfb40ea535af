/* Store buffering on two arrays: each load of x[i] may read the initial value of its own
 * cell, so one access has a stale write per cell (one group, many keys). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#define N 8
atomic_int x[N], y[N];
int a, b;
static void *left(void *arg) {
  for (int i = 0; i < N; i++) atomic_store_explicit(&x[i], 1, memory_order_release);
  for (int i = 0; i < N; i++) a += atomic_load_explicit(&y[i], memory_order_acquire);
  return arg;
}
static void *right(void *arg) {
  for (int i = 0; i < N; i++) atomic_store_explicit(&y[i], 1, memory_order_release);
  for (int i = 0; i < N; i++) b += atomic_load_explicit(&x[i], memory_order_acquire);
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
