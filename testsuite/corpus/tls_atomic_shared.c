// robust: no
// race: no
// reason: SB on two _Thread_local atomics reached from the other thread through pointers published before the threads start, release/acquire
// Thread-local atomics accessed cross-thread via pointers: store buffering.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Thread_local atomic_int mine;
static atomic_int *volatile slot[2];
static pthread_barrier_t bar;
static int r[2];

static void *work(void *arg) {
  long i = (long)arg;
  slot[i] = &mine;
  pthread_barrier_wait(&bar);
  atomic_store_explicit(&mine, 1, memory_order_release); // pyrsan: stale
  r[i] = atomic_load_explicit(slot[1 - i], memory_order_acquire); // pyrsan: violation
  pthread_barrier_wait(&bar);
  return NULL;
}

int main(void) {
  pthread_barrier_init(&bar, NULL, 2);
  pthread_t th[2];
  for (long i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, work, (void *)i);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("%d %d\n", r[0], r[1]);
  return 0;
}
