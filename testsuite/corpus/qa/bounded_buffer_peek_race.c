// robust: yes
// race: yes
// reason: get() peeks at count before taking the mutex (a plain read outside it) to skip the lock when the buffer looks empty: that read races with the increments and decrements made under the mutex by the other threads; no atomics
// Bounded buffer whose consumer peeks at the count without the mutex: a data race.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define CAP 2
static int buf[CAP];
static int head, tail, count;
static long consumed;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;

static void put(int v) {
  pthread_mutex_lock(&m);
  while (count == CAP) pthread_cond_wait(&not_full, &m);
  buf[tail] = v;
  tail = (tail + 1) % CAP;
  count++;
  pthread_cond_signal(&not_empty);
  pthread_mutex_unlock(&m);
}

static int get(void) {
  while (count == 0) sched_yield();
  pthread_mutex_lock(&m);
  while (count == 0) pthread_cond_wait(&not_empty, &m);
  int v = buf[head];
  head = (head + 1) % CAP;
  count--;
  consumed += v;
  pthread_cond_signal(&not_full);
  pthread_mutex_unlock(&m);
  return v;
}

static void *producer(void *arg) {
  for (int i = 1; i <= 2; i++) put(i * (int)(long)arg);
  return NULL;
}
static void *consumer(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) get();
  return NULL;
}

int main(void) {
  pthread_t p[2], c[2];
  for (long i = 0; i < 2; i++) {
    pthread_create(&p[i], NULL, producer, (void *)(i + 1));
    pthread_create(&c[i], NULL, consumer, NULL);
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(p[i], NULL);
    pthread_join(c[i], NULL);
  }
  printf("%ld\n", consumed);
  return consumed == 9 ? 0 : 1;
}
