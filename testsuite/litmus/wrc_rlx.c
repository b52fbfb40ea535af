// robust: no
// race: no
// reason: relaxed y does not carry t2's view of x: t3 may read y=1 then x=0
// Write-to-read causality (WRC), all relaxed; t3's load of x is flagged.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1, r2;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r0 = atomic_load_explicit(&x, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  r1 = atomic_load_explicit(&y, memory_order_relaxed);
  r2 = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t1, t2, t3};
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d r2=%d\n", r0, r1, r2);
  return 0;
}
