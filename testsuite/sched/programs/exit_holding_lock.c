// main returns while holding a mutex that its thread waits for: the runs where main goes on
// first end with the thread blocked; where the thread locks first, it and main form store
// buffering (not robust).
#include <pthread.h>
#include <stdatomic.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
atomic_int x, y;

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  (void)atomic_load_explicit(&x, memory_order_relaxed);
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  (void)atomic_load_explicit(&y, memory_order_relaxed);
  pthread_mutex_lock(&m);
  return 0;
}
