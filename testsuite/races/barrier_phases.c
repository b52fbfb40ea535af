// race: no
// robust: yes
// reason: each phase writes its own slot, then every thread reads all slots after the barrier; the next write comes after a second barrier
// Threads exchanging plain values in phases separated by a pthread barrier.
#include <pthread.h>
#include <stdio.h>

enum { T = 3 };
static int slot[T];
static long seen[T];
static pthread_barrier_t b;

static void *work(void *arg) {
  long id = (long)arg;
  for (int phase = 0; phase < 20; phase++) {
    slot[id] = phase * 10 + (int)id;
    pthread_barrier_wait(&b);
    for (int k = 0; k < T; k++) seen[id] += slot[k];
    pthread_barrier_wait(&b);
  }
  return NULL;
}

int main(void) {
  pthread_t t[T];
  pthread_barrier_init(&b, NULL, T);
  for (long i = 0; i < T; i++) pthread_create(&t[i], NULL, work, (void *)i);
  for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&b);
  printf("%ld\n", seen[0] + seen[1] + seen[2]);
  return 0;
}
