// race: no
// robust: yes
// reason: sem_post releases and the sem_wait that takes the token acquires; pthread_once's initialisation happens before every caller's return; the spinlock orders its critical sections
// A payload handed over with a semaphore, a table initialised with pthread_once, a spinlock-protected counter.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static int payload;
static int table[4];
static long counter;
static sem_t ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_spinlock_t spin;

static void init_table(void) {
  for (int i = 0; i < 4; i++) table[i] = i + 1;
}

static void *producer(void *arg) {
  pthread_once(&once, init_table);
  payload = 42;
  sem_post(&ready);
  for (int i = 0; i < 200; i++) {
    pthread_spin_lock(&spin);
    counter += table[i % 4];
    pthread_spin_unlock(&spin);
  }
  return arg;
}

static void *consumer(void *arg) {
  pthread_once(&once, init_table);
  sem_wait(&ready);
  int got = payload + table[3];
  for (int i = 0; i < 200; i++) {
    pthread_spin_lock(&spin);
    counter += got;
    pthread_spin_unlock(&spin);
  }
  return arg;
}

int main(void) {
  pthread_t a, b;
  sem_init(&ready, 0, 0);
  pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
  pthread_create(&b, NULL, consumer, NULL);
  pthread_create(&a, NULL, producer, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%ld\n", counter);
  return 0;
}
