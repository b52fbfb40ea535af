/* A thread blocks in read() on a pipe nobody writes (a call the controlled scheduler cannot
 * see), and main joins it: the controlled run stalls, is handed over to the OS scheduler
 * (docs/scheduling.md "Hand-over") and then deadlocks for real. The exploration must still
 * end (pyrsan/watchdog.py), incomplete. */
#include <pthread.h>
#include <unistd.h>

static int fds[2];

static void *reader(void *arg) {
  (void)arg;
  char c = 0;
  if (read(fds[0], &c, 1) != 1) return NULL;
  return NULL;
}

int main(void) {
  if (pipe(fds) != 0) return 1;
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pthread_join(t, NULL);
  return 0;
}
