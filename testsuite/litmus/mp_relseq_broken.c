// robust: no
// race: no
// reason: a relaxed plain store is not part of t1's release sequence (RC20/C++20): t3 may read y=2 from it and then x=0
// MP where the release sequence is broken by t2's relaxed store y=2 (instead of an RMW).
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 2, memory_order_relaxed);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  r0 = atomic_load_explicit(&y, memory_order_acquire);
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
