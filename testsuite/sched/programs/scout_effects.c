/* Store buffering (release/acquire, not robust) between two threads, with effects a scout
 * sample must not repeat (docs/scheduling.md "Scout samples"): a buffered line on stdout
 * before the threads, a line read from stdin by thread 1 (the offset is shared with any forked
 * process), one append per thread to the file argv[1], and, when argv[2] is "handler", a
 * SIGCHLD handler whose count is printed at the end. Prints "start", then "got <line> sigchld
 * <n>". */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_int x, y;
static int fd;
static char line[64];
static volatile sig_atomic_t sigchld;

static void on_sigchld(int sig) {
  (void)sig;
  sigchld++;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  int r = atomic_load_explicit(&y, memory_order_acquire);
  if (!fgets(line, sizeof line, stdin)) strcpy(line, "nothing\n");
  line[strcspn(line, "\n")] = 0;
  char msg[32];
  int n = snprintf(msg, sizeof msg, "t1 %d\n", r >= 0);
  if (write(fd, msg, (size_t)n) != n) return (void *)1;
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  int r = atomic_load_explicit(&x, memory_order_acquire);
  char msg[32];
  int n = snprintf(msg, sizeof msg, "t2 %d\n", r >= 0);
  if (write(fd, msg, (size_t)n) != n) return (void *)1;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (argc > 2 && !strcmp(argv[2], "handler")) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sigaction(SIGCHLD, &sa, NULL);
  }
  printf("start\n");
  fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) return 2;
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  close(fd);
  printf("got %s sigchld %d\n", line, (int)sigchld);
  return 0;
}
