// robust: no
// race: no
// reason: atomic_signal_fence orders a thread only with its own signal handlers (a compiler barrier, C11 7.17.4.2): between two threads it is no fence at all, so SB with relaxed accesses keeps its weak outcome (both loads read 0); atomic_thread_fence(memory_order_seq_cst) in its place fixes it
// SB with atomic_signal_fence(memory_order_seq_cst) between each thread's store and load.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r0, r1;

static void *t0(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  atomic_signal_fence(memory_order_seq_cst);
  r0 = atomic_load_explicit(&y, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: stale
  atomic_signal_fence(memory_order_seq_cst);
  r1 = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t0, NULL);
  pthread_create(&b, NULL, t1, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}
