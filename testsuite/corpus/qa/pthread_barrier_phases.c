// robust: yes
// race: no
// reason: pthread_barrier_wait separates the phases: every write of phase k is hb-before every read of phase k+1 (the barrier synchronises all participants); no atomics
// Four threads compute a stencil in phases over a plain array, separated by a pthread barrier.
#include <pthread.h>
#include <stdio.h>

#define T 4
#define N 16
static pthread_barrier_t bar;
static int cur[N], nxt[N];

static void *work(void *arg) {
  long id = (long)arg;
  for (int phase = 0; phase < 3; phase++) {
    for (int i = (int)id; i < N; i += T) nxt[i] = cur[i] + cur[(i + 1) % N] + 1;
    pthread_barrier_wait(&bar);
    for (int i = (int)id; i < N; i += T) cur[i] = nxt[i];
    pthread_barrier_wait(&bar);
  }
  return NULL;
}

int main(void) {
  pthread_t t[T];
  pthread_barrier_init(&bar, NULL, T);
  for (long i = 0; i < T; i++) pthread_create(&t[i], NULL, work, (void *)i);
  for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
  printf("%d\n", cur[0]);
  return 0;
}
