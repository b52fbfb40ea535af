// robust: yes
// race: no
// reason: an SC fence between the stores: the later fence sees the other thread's first store, so write coherence orders mo as SC does
// 2+2W, relaxed stores separated by SC fences.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(&y, 2, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  atomic_store_explicit(&x, 2, memory_order_relaxed);
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
