/* main starts a writer and a reader and returns without joining them: message passing with
 * relaxed accesses (not robust: the reader may see y == 1 and then x == 0), which happens only
 * in the schedules where both threads run before the process ends. With -DROBUST the
 * accesses are release / acquire (robust). Process exit is an operation of the exploration
 * (docs/scheduling.md "Process exit"). */
#include <pthread.h>
#include <stdatomic.h>

#ifdef ROBUST
#define ST memory_order_release
#define LD memory_order_acquire
#else
#define ST memory_order_relaxed
#define LD memory_order_relaxed
#endif

static atomic_int x, y;

static void *writer(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, ST);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  if (atomic_load_explicit(&y, LD) == 1) (void)atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, writer, NULL);
  pthread_create(&b, NULL, reader, NULL);
  pthread_detach(a);
  pthread_detach(b);
  return 0;
}
