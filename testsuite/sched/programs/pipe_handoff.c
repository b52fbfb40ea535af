/* A thread blocks in read() on a pipe that main writes after creating it: a call the
 * controlled scheduler cannot see. The reader's code before its first scheduling point runs
 * inside main's spawn step, so a controlled run can only go on by handing over to the OS
 * scheduler (docs/scheduling.md "Hand-over"). Robust, race-free. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static int fds[2];
static atomic_int got;

static void *reader(void *arg) {
  (void)arg;
  char c = 0;
  if (read(fds[0], &c, 1) != 1) return NULL;
  atomic_store(&got, c);
  return NULL;
}

int main(void) {
  if (pipe(fds) != 0) return 1;
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  if (write(fds[1], "a", 1) != 1) return 1;
  pthread_join(t, NULL);
  printf("got %c\n", (char)atomic_load(&got));
  return atomic_load(&got) == 'a' ? 0 : 1;
}
