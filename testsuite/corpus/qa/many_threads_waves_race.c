// robust: yes
// race: yes
// reason: 300 threads in waves of 30, each adding to a relaxed atomic counter (race-free) and also incrementing a plain global "stats" counter without any synchronisation between threads of the same wave (a data race); threads of different waves are ordered by join
// 300 short threads in waves; one plain statistics counter races inside each wave.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define WAVE 30
#define WAVES 10
static atomic_long total;
static long stats;

static void *work(void *arg) {
  atomic_fetch_add_explicit(&total, (long)arg, memory_order_relaxed);
  stats++;
  return NULL;
}

int main(void) {
  pthread_t th[WAVE];
  for (int w = 0; w < WAVES; w++) {
    for (long i = 0; i < WAVE; i++) pthread_create(&th[i], NULL, work, (void *)i);
    for (int i = 0; i < WAVE; i++) pthread_join(th[i], NULL);
  }
  printf("%ld %ld\n", atomic_load(&total), stats);
  return 0;
}
