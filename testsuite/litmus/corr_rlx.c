// robust: yes
// race: no
// reason: a single location: coherence (per-location SC) holds for every atomic order, so every RC20 execution is SC
// CoRR: two writers of x, one thread reading x twice; relaxed.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x;
int r0, r1;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 2, memory_order_relaxed);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  r0 = atomic_load_explicit(&x, memory_order_relaxed);
  r1 = atomic_load_explicit(&x, memory_order_relaxed);
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
