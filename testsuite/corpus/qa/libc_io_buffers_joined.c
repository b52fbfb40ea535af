// robust: yes
// race: no
// reason: the same buffers as libc_io_buffers_race.c, but the reporter joins the formatter before write(2) reads the status line (join orders snprintf's writes before it), and main reads the piped input after joining the reader; no atomics
// snprintf into a buffer, then write(2) of it after a join; read(2) into a buffer read after a join: no race.
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char status[64];
static char input[16];
static int devnull, pipefd[2];
static pthread_t fmt_thread;

static void *formatter(void *arg) {
  (void)arg;
  snprintf(status, sizeof status, "jobs=%d load=%d\n", 3, 7);
  return NULL;
}

static void *reporter(void *arg) {
  (void)arg;
  pthread_join(fmt_thread, NULL);
  if (write(devnull, status, 12) < 0) return NULL;
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
  pthread_t r, i;
  pthread_create(&fmt_thread, NULL, formatter, NULL);
  pthread_create(&r, NULL, reporter, NULL);
  pthread_create(&i, NULL, reader, NULL);

  pthread_join(r, NULL);
  pthread_join(i, NULL);
  printf("%ld\n", strtol(input, NULL, 10));
  return 0;
}
