// robust: yes
// race: no
// reason: a detached thread writes the result then posts a semaphore; main waits on it before reading (sem_post/sem_wait synchronise)
// Detached thread + POSIX semaphore handoff.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static sem_t done;
static int result;

static void *work(void *arg) {
  (void)arg;
  result = 42;
  sem_post(&done);
  return NULL;
}

int main(void) {
  sem_init(&done, 0, 0);
  pthread_t t;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &at, work, NULL);
  sem_wait(&done);
  printf("%d\n", result);
  return 0;
}
