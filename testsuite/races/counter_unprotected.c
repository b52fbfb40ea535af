// race: yes
// robust: yes
// reason: the increments of the two threads are not ordered by anything
// A plain counter incremented by two threads without synchronisation.
#include <pthread.h>
#include <stdio.h>

static long counter;

static void *work(void *arg) {
  for (int i = 0; i < 1000; i++) counter++; // pyrsan: race
  return arg;
}

int main(void) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, NULL);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("%ld\n", counter);
  return 0;
}
