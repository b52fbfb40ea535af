// robust: yes
// race: no
// reason: a bounded buffer under one mutex with two condition variables: every access to the buffer, its indices and its count is inside the mutex (lock is an acquire, unlock a release), and a condition wait re-acquires the mutex before returning; there are no atomics of the program's own
// Producer/consumer bounded buffer (capacity 2) with pthread condition variables: two producers, two consumers, four items each way.
#include <pthread.h>
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
