// robust: yes
// race: no
// reason: fenced model: T2's seq_cst store and load each carry SC fences, and T1 has an SC fence between its relaxed store and load
// SB: one thread uses relaxed accesses around atomic_thread_fence(seq_cst), the other seq_cst accesses.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  r0 = atomic_load_explicit(&y, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store(&y, 1);
  r1 = atomic_load(&x);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}
