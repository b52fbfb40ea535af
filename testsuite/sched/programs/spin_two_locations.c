// A spin loop the pass does not recognise (it reads two locations and counts): the
// runtime's loop detection must make it yield under every strategy. Robust (message passing
// with release/acquire).
#include <pthread.h>
#include <stdatomic.h>

atomic_int a_flag, b_flag;

static void *waiter(void *arg) {
  (void)arg;
  int rounds = 0;
  while (!atomic_load_explicit(&a_flag, memory_order_acquire) ||
         !atomic_load_explicit(&b_flag, memory_order_acquire))
    rounds++;
  return (void *)(long)rounds;
}

static void *setter(void *arg) {
  (void)arg;
  atomic_store_explicit(&a_flag, 1, memory_order_release);
  atomic_store_explicit(&b_flag, 1, memory_order_release);
  return NULL;
}

int main(void) {
  pthread_t w, s;
  pthread_create(&w, NULL, waiter, NULL);
  pthread_create(&s, NULL, setter, NULL);
  pthread_join(w, NULL);
  pthread_join(s, NULL);
  return 0;
}
