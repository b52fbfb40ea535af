// Two threads, each one relaxed store to its own variable: one interleaving class.
#include <pthread.h>
#include <stdatomic.h>

atomic_int x, y;

static void *store_x(void *arg) { (void)arg; atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }
static void *store_y(void *arg) { (void)arg; atomic_store_explicit(&y, 1, memory_order_relaxed); return NULL; }

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, store_x, NULL);
  pthread_create(&b, NULL, store_y, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
