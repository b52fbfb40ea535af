// A program that registers a fork handler before its first scheduling point. A run started
// from scratch forks nothing, so the handler never runs; neither may it in the fork server's
// children (docs/scheduling.md "Fork server"). Exits 3 if it ran.
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

static int forked;
static atomic_int counter;

static void in_child(void) { forked = 1; }

static void *worker(void *arg) {
  atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
  return arg;
}

int main(void) {
  pthread_atfork(NULL, NULL, in_child);
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, worker, NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  return forked ? 3 : 0;
}
