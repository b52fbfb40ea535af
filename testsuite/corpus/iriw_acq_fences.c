// robust: yes
// race: no
// reason: IRIW with an SC fence between the two loads of each reader: the fences' order forbids the readers disagreeing on the order of the writes
// IRIW, relaxed writers, acquire readers with an SC fence between their loads.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int x, y;
static int r[4];

static void *w1(void *arg) { (void)arg; atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }
static void *w2(void *arg) { (void)arg; atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }

static void *rd1(void *arg) {
  (void)arg;
  r[0] = atomic_load_explicit(&x, memory_order_acquire);
  atomic_thread_fence(memory_order_seq_cst);
  r[1] = atomic_load_explicit(&y, memory_order_acquire);
  return NULL;
}

static void *rd2(void *arg) {
  (void)arg;
  r[2] = atomic_load_explicit(&y, memory_order_acquire);
  atomic_thread_fence(memory_order_seq_cst);
  r[3] = atomic_load_explicit(&x, memory_order_acquire);
  return NULL;
}

int main(void) {
  pthread_t th[4];
  void *(*fn[4])(void *) = {w1, w2, rd1, rd2};
  for (int i = 0; i < 4; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  printf("%d %d %d %d\n", r[0], r[1], r[2], r[3]);
  return 0;
}
