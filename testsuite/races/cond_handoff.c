// race: no
// robust: yes
// reason: the producer writes the payload and the ready flag under the mutex; the consumer reads them after pthread_cond_wait reacquired it
// Condition-variable hand-off of a plain payload.
#include <pthread.h>
#include <stdio.h>

static int payload[4];
static int ready;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *producer(void *arg) {
  pthread_mutex_lock(&m);
  for (int i = 0; i < 4; i++) payload[i] = i * i;
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return arg;
}

static void *consumer(void *arg) {
  pthread_mutex_lock(&m);
  while (!ready) pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  printf("%d\n", payload[0] + payload[1] + payload[2] + payload[3]);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&b, NULL, consumer, NULL);
  pthread_create(&a, NULL, producer, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
