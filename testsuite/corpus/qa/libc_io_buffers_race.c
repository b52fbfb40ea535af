// robust: yes
// race: yes
// reason: the formatter thread writes the status line with snprintf and the reporter thread hands the same buffer to write(2) with no synchronisation between them: libc writes and reads the program's buffer on their behalf, so the two calls race (ThreadSanitizer intercepts both); the reporter also writes out the input buffer while the reader thread's read(2) fills it: a second race
// A status buffer formatted by snprintf in one thread and written out with write(2) by another, unsynchronised; a pipe read(2) into a global buffer.
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char status[64];
static char input[16];
static int devnull, pipefd[2];

static void *formatter(void *arg) {
  (void)arg;
  snprintf(status, sizeof status, "jobs=%d load=%d\n", 3, 7);
  return NULL;
}

static void *reporter(void *arg) {
  (void)arg;
  if (write(devnull, status, 12) < 0) return NULL;
  if (write(devnull, input, 2) < 0) return NULL;
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  ssize_t n = read(pipefd[0], input, sizeof input - 1);
  if (n > 0) input[n] = 0;
  return NULL;
}

int main(void) {
  devnull = open("/dev/null", O_WRONLY);
  if (devnull < 0 || pipe(pipefd) != 0) return 1;
  if (write(pipefd[1], "42", 2) != 2) return 1;
  pthread_t f, r, i;
  pthread_create(&f, NULL, formatter, NULL);
  pthread_create(&r, NULL, reporter, NULL);
  pthread_create(&i, NULL, reader, NULL);
  pthread_join(f, NULL);
  pthread_join(r, NULL);
  pthread_join(i, NULL);
  printf("%ld\n", strtol(input, NULL, 10));
  return 0;
}
