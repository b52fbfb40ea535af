// robust: no
// race: no
// reason: three-thread SB cycle with SC fences in two threads only: the third thread's store x=... load x pair is unfenced (the model checks it)
// Three-thread store buffering (x->y->z->x), SC fences in threads 1 and 2 only.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y, z;
static int r[3];

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  atomic_thread_fence(memory_order_seq_cst);
  r[0] = atomic_load_explicit(&y, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: stale
  atomic_thread_fence(memory_order_seq_cst);
  r[1] = atomic_load_explicit(&z, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  atomic_store_explicit(&z, 1, memory_order_relaxed); // pyrsan: stale
  r[2] = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t1, t2, t3};
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("%d %d %d\n", r[0], r[1], r[2]);
  return 0;
}
