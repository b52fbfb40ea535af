// robust: yes
// race: yes
// reason: volatile and asm("" ::: "memory") are compiler barriers only: the plain volatile flag and data are non-atomic accesses of two threads with no happens-before between them, a data race under C11 (no atomics at all, so nothing to be non-robust)
// A pre-C11 message-passing idiom: volatile flag and data with compiler barriers.
#include <pthread.h>
#include <stdio.h>

static volatile int data, flag;

static void *producer(void *arg) {
  (void)arg;
  data = 42;
  __asm__ __volatile__("" ::: "memory");
  flag = 1;
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  while (!flag) __asm__ __volatile__("" ::: "memory");
  printf("%d\n", data);
  return NULL;
}

int main(void) {
  pthread_t p, c;
  pthread_create(&p, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  return 0;
}
