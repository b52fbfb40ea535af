// robust: no
// race: no
// reason: release/acquire: the readers may see the two independent writes in opposite orders (not multi-copy atomic in RC20), SC forbids it
// IRIW, release stores and acquire loads; threads created writer-x, reader-1, writer-y, reader-2 so the sequential schedule reveals it.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1, r2, r3;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  r0 = atomic_load_explicit(&x, memory_order_acquire);
  r1 = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  return NULL;
}

static void *t4(void *arg) {
  (void)arg;
  r2 = atomic_load_explicit(&y, memory_order_acquire);
  r3 = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[4];
  void *(*fn[4])(void *) = {t1, t2, t3, t4};
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d r2=%d r3=%d\n", r0, r1, r2, r3);
  return 0;
}
