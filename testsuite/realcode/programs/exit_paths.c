/* Store buffering with relaxed accesses (reported under a controlled run), then the
 * process ends the way -DHOW says: 0 return, 1 _exit, 2 _Exit, 3 quick_exit, all with
 * status 0. The runtime's summary and exit status 66 must follow in every case. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_int x, y;
static int r1, r2;
static void *t1(void *a) { atomic_store_explicit(&x, 1, memory_order_relaxed); r1 = atomic_load_explicit(&y, memory_order_relaxed); return a; }
static void *t2(void *a) { atomic_store_explicit(&y, 1, memory_order_relaxed); r2 = atomic_load_explicit(&x, memory_order_relaxed); return a; }

int main(void) {
  for (int k = 0; k < 20; k++) {
    pthread_t a, b;
    pthread_create(&a, 0, t1, 0);
    pthread_create(&b, 0, t2, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
  }
#if HOW == 1
  _exit(0);
#elif HOW == 2
  _Exit(0);
#elif HOW == 3
  quick_exit(0);
#endif
  return 0;
}
