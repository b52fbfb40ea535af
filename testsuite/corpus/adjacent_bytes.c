// robust: yes
// race: no
// reason: each thread writes its own char of a shared array: different memory locations, no race
// Four threads write neighbouring bytes of one 8-byte granule (plain stores), then main reads them after join.
#include <pthread.h>
#include <stdio.h>

static char bytes[8];

static void *work(void *arg) {
  long i = (long)arg;
  for (int k = 0; k < 5; k++)
    bytes[i] = (char)(bytes[i] + 1);
  return NULL;
}

int main(void) {
  pthread_t th[6];
  for (long i = 0; i < 6; i++)
    pthread_create(&th[i], NULL, work, (void *)i);
  for (int i = 0; i < 6; i++)
    pthread_join(th[i], NULL);
  printf("%d %d\n", bytes[0], bytes[5]);
  return 0;
}
