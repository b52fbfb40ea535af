// race: no
// robust: yes
// runs: 5
// env: PYRSAN_OPTIONS=sched=os
// reason: every reader is joined before main frees the block: each read happens before the free
// Eight threads read one heap word (more than the granule's main cells: the granule gets a mark
// and an overflow block); after the joins, free() must not take the mark for an access.
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#define THREADS 8
static atomic_long *word;
static void *reader(void *arg) {
  long s = 0;
  for (int i = 0; i < 64; i++) s += atomic_load_explicit(word, memory_order_relaxed);
  return (void *)s;
}
int main(void) {
  word = calloc(4, sizeof *word);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, reader, NULL);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  free(word);
  return 0;
}
