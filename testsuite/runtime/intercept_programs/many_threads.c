/* 64 threads take turns (forced invisibly, in creation order); each reads y, then writes
 * data and y, inside a critical section.
 * sync:   one mutex for all: every turn is ordered after the previous one (no report).
 * nosync: each thread locks its own mutex: thread i's store to data is a write violation
 *         (it read y from thread i-1, but is not aware of i-1's store to data). */
#include <pthread.h>

#include "common.h"

#define N 64
static uint32_t data, y;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own[N];
static int turn;
static const char *mode;

static void *worker(void *arg) {
  int i = (int)(intptr_t)arg;
  pthread_mutex_t *m = MODE_IS("sync") ? &shared : &own[i];
  counter_wait(&turn, i);
  pthread_mutex_lock(m);
  uint32_t ry = LD(&y);
  CHECK(ry == (uint32_t)i);
  ST(&data, i + 1); /* @store_data */
  ST(&y, i + 1);
  pthread_mutex_unlock(m);
  __atomic_store_n(&turn, i + 1, __ATOMIC_SEQ_CST);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  pthread_t t[N];
  for (int i = 0; i < N; i++) pthread_mutex_init(&own[i], NULL);
  for (int i = 0; i < N; i++)
    CHECK(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) == 0);
  for (int i = 0; i < N; i++) CHECK(pthread_join(t[i], NULL) == 0);
  CHECK(LD(&data) == N && LD(&y) == N);
  return 0;
}
