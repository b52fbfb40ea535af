// robust: yes
// race: no
// reason: pthread_once's initialiser happens before every return from pthread_once; sem_post happens before the sem_timedwait/sem_trywait that takes it
// pthread_once initialisation and semaphore handoffs with sem_trywait / sem_timedwait.
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int table[4];
static sem_t s1, s2;
static int msg1, msg2;

static void init(void) {
  for (int i = 0; i < 4; i++)
    table[i] = i * i;
}

static void *work(void *arg) {
  long i = (long)arg;
  pthread_once(&once, init);
  int v = table[i + 1];
  if (i == 0) {
    msg1 = v;
    sem_post(&s1);
  } else {
    msg2 = v;
    sem_post(&s2);
  }
  return NULL;
}

int main(void) {
  sem_init(&s1, 0, 0);
  sem_init(&s2, 0, 0);
  pthread_t th[2];
  for (long i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, work, (void *)i);
  while (sem_trywait(&s1) != 0)
    ;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += 10;
  while (sem_timedwait(&s2, &ts) != 0 && errno == EINTR)
    ;
  int r = msg1 + msg2;
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  printf("%d\n", r);
  return r == 5 ? 0 : 1;
}
