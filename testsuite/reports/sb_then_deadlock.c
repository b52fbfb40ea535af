/* Store buffering, then a deadlock (main holds the mutex right waits for): the run ends by
 * the runtime's deadlock exit (87), which bypasses exit handlers; the robustness text block,
 * which waits for the exit, must still be printed. */
#include <pthread.h>
#include <stdatomic.h>
atomic_int x, y;
int a, b;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *left(void *arg) {
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  a = atomic_load_explicit(&y, memory_order_relaxed);
  return arg;
}
static void *right(void *arg) {
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  b = atomic_load_explicit(&x, memory_order_relaxed);
  pthread_mutex_lock(&m); /* held by main: never returns */
  return arg;
}
int main(void) {
  pthread_t l, r;
  pthread_mutex_lock(&m);
  pthread_create(&l, NULL, left, NULL);
  pthread_create(&r, NULL, right, NULL);
  pthread_join(l, NULL);
  pthread_join(r, NULL);
  return 0;
}
