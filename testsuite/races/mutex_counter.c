// race: no
// robust: yes
// reason: every increment is inside the same mutex: each unlock synchronises with the next lock
// A plain counter incremented by four threads under a pthread mutex.
#include <pthread.h>
#include <stdio.h>

static long counter;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg) {
  for (int i = 0; i < 1000; i++) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
  }
  return arg;
}

int main(void) {
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, NULL);
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  printf("%ld\n", counter);
  return 0;
}
