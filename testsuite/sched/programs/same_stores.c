// Two threads, each one relaxed store to the same variable: two interleaving classes.
#include <pthread.h>
#include <stdatomic.h>

atomic_int x;

static void *store_1(void *arg) { (void)arg; atomic_store_explicit(&x, 1, memory_order_relaxed); return NULL; }
static void *store_2(void *arg) { (void)arg; atomic_store_explicit(&x, 2, memory_order_relaxed); return NULL; }

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, store_1, NULL);
  pthread_create(&b, NULL, store_2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
