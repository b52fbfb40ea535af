/* A local whose address is handed to another thread (it escapes): the thread and main both
 * write it without synchronisation, a data race on the stack. The private scratch array next
 * to it is never shared and must cost nothing. */
#include <pthread.h>
#include <stdio.h>

static void *bump(void *arg) {
  int *shared = arg;
  *shared += 1;
  return NULL;
}

int main(void) {
  int local = 0;
  int scratch[16];
  for (int i = 0; i < 16; i++) scratch[i] = i;
  pthread_t t;
  pthread_create(&t, NULL, bump, &local);
  local += scratch[3];
  pthread_join(t, NULL);
  printf("local=%d\n", local);
  return 0;
}
