/* Two threads increment a plain counter without a lock: a data race, and nothing else
 * (no atomics, so no robustness report). Prints the runtime options it was given. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int counter;

static void *work(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; i++) counter++;
  return NULL;
}

int main(void) {
  pthread_t threads[2];
  for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, work, NULL);
  for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
  const char *options = getenv("PYRSAN_OPTIONS");
  printf("options=%s\n", options ? options : "");
  return 0;
}
