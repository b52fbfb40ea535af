/* ACQUIRED_GAP (acquired_gap.c) with a waiting loop: T1's seq_cst load of y = 1 (written after
 * z = 1 and z = 2, all relaxed) gives T1 SC knowledge of z = 2 without hb knowledge; T2 waits,
 * after an SC fence, for z != 0, and its wait's value check (a write of another value than 0 in
 * [Tc(z), Tsc(z)): z = 1) reports only when that fence comes after T1's trailing fence in F, an
 * order no real location fixes. Not robust (RC20). */
#include <pthread.h>
#include <stdatomic.h>

static atomic_int w, y, z;

static void *t1(void *arg) {
  (void)arg;
  (void)atomic_load(&y);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  (void)atomic_load_explicit(&w, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  while (atomic_load_explicit(&z, memory_order_relaxed) == 0)
    ;
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  atomic_store_explicit(&z, 1, memory_order_relaxed);
  atomic_store_explicit(&z, 2, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t a, b, c;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_create(&c, NULL, t3, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_join(c, NULL);
  return 0;
}
