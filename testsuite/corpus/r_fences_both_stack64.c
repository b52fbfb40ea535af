// robust: yes
// race: no
// reason: R shape with an SC fence between the two accesses of each thread: the fences order T1's x=1 before T2's load or T2's y=2 before T1's y=1
// R shape on 64-bit relaxed atomics living on main's stack, SC fences in both threads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

struct args {
  _Atomic uint64_t *x, *y;
  uint64_t r;
};

static void *t1(void *arg) {
  struct args *a = arg;
  atomic_store_explicit(a->x, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(a->y, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  struct args *a = arg;
  atomic_store_explicit(a->y, 2, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  a->r = atomic_load_explicit(a->x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  _Atomic uint64_t x = 0, y = 0;
  struct args a1 = {&x, &y, 0}, a2 = {&x, &y, 0};
  pthread_t a, b;
  pthread_create(&a, NULL, t1, &a1);
  pthread_create(&b, NULL, t2, &a2);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("r=%llu y=%llu\n", (unsigned long long)a2.r, (unsigned long long)atomic_load(&y));
  return 0;
}
