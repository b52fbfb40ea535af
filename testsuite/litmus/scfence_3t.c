// robust: no
// race: no
// reason: algorithm.md §7: t3 may read x=0 although its fence is after t2's (which saw z=1, po-after x=1); RC20 allows it (no release on x/z), SC does not
// Three threads, SC fences: x=1; z=1 || b=z; F_sc || F_sc; c=x (all relaxed). Needs the SC fence on the hb_SC side too.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, z;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&z, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r0 = atomic_load_explicit(&z, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  atomic_thread_fence(memory_order_seq_cst);
  r1 = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t1, t2, t3};
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}
