/* Store buffering with relaxed accesses and the x86 full barrier written as inline asm,
 * the way lock-free libraries spell it (mfence, or `lock; addl $0,(%rsp)` with -DSTACK_BARRIER).
 * Robust: each barrier orders its thread's store before its load. Without the barrier
 * (-DNO_BARRIER) the relaxed SB pattern is not robust. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r1, r2;

static inline void full_barrier(void) {
#if defined(NO_BARRIER)
  __asm__ volatile("" ::: "memory");
#elif defined(STACK_BARRIER)
  __asm__ volatile("lock; addl $0,(%%rsp)" ::: "memory", "cc");
#else
  __asm__ volatile("mfence" ::: "memory");
#endif
}

static void *t1(void *a) {
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  full_barrier();
  r1 = atomic_load_explicit(&y, memory_order_relaxed);
  return a;
}
static void *t2(void *a) {
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  full_barrier();
  r2 = atomic_load_explicit(&x, memory_order_relaxed);
  return a;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  printf("%d %d\n", r1, r2);
  return 0;
}
