// robust: no
// race: no
// reason: a relaxed store by another thread is not in T1's release sequence (C++20): T3 may read y=2 and the old x
// Release sequence broken by a plain relaxed store of another thread; the payload is atomic relaxed.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int seen = -1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 2, memory_order_relaxed); // pyrsan: violation, pyrsan: stale
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  if (atomic_load_explicit(&y, memory_order_acquire) == 2) // pyrsan: violation
    seen = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t1, t2, t3};
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("seen=%d\n", seen);
  return 0;
}
