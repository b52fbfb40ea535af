/* main returns while a detached worker stores to a counter for ever: the process must still end
 * under every scheduler (a pending process exit waits at most a bounded number of steps). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_long counter;

static void *worker(void *arg) {
  (void)arg;
  for (;;) atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_detach(t);
  puts("main done");
  return 0;
}
