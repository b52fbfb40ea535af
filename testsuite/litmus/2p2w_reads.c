// robust: no
// race: no
// reason: RSAN paper Ex. 7.1: each thread's second store may be mo-before the other thread's first store to the same location (release/acquire does not order two writes to different locations), and each reads back its own second store; SC forbids the po;mo cycle
// 2+2W with reads (RSAN paper Ex. 7.1): release stores, acquire loads of the location just written.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release); // pyrsan: stale
  atomic_store_explicit(&y, 2, memory_order_release); // pyrsan: violation, pyrsan: stale
  r0 = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: stale
  atomic_store_explicit(&x, 2, memory_order_release); // pyrsan: violation, pyrsan: stale
  r1 = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("r0=%d r1=%d\n", r0, r1);
  return 0;
}
