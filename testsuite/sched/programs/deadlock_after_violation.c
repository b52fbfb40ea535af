// Store buffering with release/acquire (a robustness violation in some schedule), then a
// join that never returns: t2 waits on a mutex main holds.
#include <pthread.h>
#include <stdatomic.h>

atomic_int x, y;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  (void)atomic_load_explicit(&y, memory_order_acquire);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  (void)atomic_load_explicit(&x, memory_order_acquire);
  pthread_mutex_lock(&m);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_mutex_lock(&m);
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
