// robust: yes
// race: no
// reason: 32 independent store-buffering pairs (64 threads), each thread with an SC fence between its relaxed store and its relaxed load: within a pair the fences order one store before the other thread's load (SB with SC fences is robust), and pairs share no location
// Sixty-four threads, thirty-two fenced store-buffering pairs on their own locations.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define PAIRS 32
static atomic_int x[PAIRS], y[PAIRS];
static int r[2 * PAIRS];

static void *t(void *arg) {
  long id = (long)arg;
  long p = id / 2;
  atomic_int *mine = id % 2 ? &y[p] : &x[p], *other = id % 2 ? &x[p] : &y[p];
  atomic_store_explicit(mine, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  r[id] = atomic_load_explicit(other, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t th[2 * PAIRS];
  for (long i = 0; i < 2 * PAIRS; i++) pthread_create(&th[i], NULL, t, (void *)i);
  for (int i = 0; i < 2 * PAIRS; i++) pthread_join(th[i], NULL);
  int both_zero = 0;
  for (int p = 0; p < PAIRS; p++) both_zero += r[2 * p] == 0 && r[2 * p + 1] == 0;
  printf("%d\n", both_zero);
  return 0;
}
