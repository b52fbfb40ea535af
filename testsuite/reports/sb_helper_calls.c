/* Store buffering whose stores are made by helper functions (calls at -O0, which have
 * returned when the loads run): the fence suggestion names points of the loads' function. */
#include <pthread.h>
#include <stdatomic.h>

static atomic_int x, y;
static int r1, r2;

__attribute__((noinline)) static void set(atomic_int *p) { atomic_store_explicit(p, 1, memory_order_release); }

static void *t1(void *a) {
  (void)a;
  set(&x);
  r1 = atomic_load_explicit(&y, memory_order_acquire); /* line 14 */
  return 0;
}

static void *t2(void *a) {
  (void)a;
  set(&y);
  r2 = atomic_load_explicit(&x, memory_order_acquire); /* line 21 */
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return r1 + r2;
}
