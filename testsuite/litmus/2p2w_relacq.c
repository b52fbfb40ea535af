// robust: no
// race: no
// reason: release stores: both second stores may be mo-before the other thread's first store (po;mo;po;mo cycle), no read forbids it
// 2+2W, release stores; t2's store to x is flagged (write check).
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  atomic_store_explicit(&y, 2, memory_order_release); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  atomic_store_explicit(&x, 2, memory_order_release); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  return 0;
}
