// robust: yes
// race: no
// reason: SB with relaxed accesses whose store and load are separated by pthread_barrier_wait in both threads: the barrier synchronises all its participants (every store before it happens before every load after it), so neither load can read 0; plain values written before the barrier are ordered too
// Store buffering separated by a POSIX barrier.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_barrier_t bar;
static atomic_int x, y;
static int plain_x, plain_y;
static int r[2];

static void *t0(void *arg) {
  (void)arg;
  plain_x = 1;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  pthread_barrier_wait(&bar);
  r[0] = atomic_load_explicit(&y, memory_order_relaxed) + plain_y;
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  plain_y = 1;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  pthread_barrier_wait(&bar);
  r[1] = atomic_load_explicit(&x, memory_order_relaxed) + plain_x;
  return NULL;
}

int main(void) {
  pthread_barrier_init(&bar, NULL, 2);
  pthread_t a, b;
  pthread_create(&a, NULL, t0, NULL);
  pthread_create(&b, NULL, t1, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  pthread_barrier_destroy(&bar);
  printf("%d %d\n", r[0], r[1]);
  return 0;
}
