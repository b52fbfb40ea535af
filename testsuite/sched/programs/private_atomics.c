/* Four threads, each adding to its own atomic counter (no two threads touch one word), and
 * main reading them after the joins: every schedule is equivalent, so one scout sample is
 * enough (docs/scheduling.md "Scout samples"). With SHARED defined the threads add to one
 * counter: the scouts go on. Prints the total. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_long counter[4][8]; /* 64 bytes apart */

static void *work(void *arg) {
  long i = (long)arg;
#ifdef SHARED
  i = 0;
#endif
  for (int k = 0; k < 50; k++) atomic_fetch_add_explicit(&counter[i][0], 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  long total = 0;
  for (int i = 0; i < 4; i++) total += atomic_load(&counter[i][0]);
  printf("total %ld\n", total);
  return 0;
}
