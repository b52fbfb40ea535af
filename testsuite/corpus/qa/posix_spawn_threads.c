// robust: yes
// race: no
// reason: two threads run a release/acquire handoff while main starts /bin/true with posix_spawn (a vfork-style clone that execs at once) and waits for it; the parent's threads are unaffected and the handoff is ordered (MP with release/acquire is robust)
// posix_spawn of a child process while threads exchange data.
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>

extern char **environ;
static atomic_int flag;
static int payload;

static void *producer(void *arg) {
  (void)arg;
  payload = 5;
  atomic_store_explicit(&flag, 1, memory_order_release);
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&flag, memory_order_acquire)) {
  }
  return (void *)(long)payload;
}

int main(void) {
  pthread_t p, c;
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pid_t pid;
  char *argv[] = {"true", NULL};
  int rc = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
  int status = -1;
  if (rc == 0) waitpid(pid, &status, 0);
  void *got;
  pthread_join(p, NULL);
  pthread_join(c, &got);
  printf("spawn %d status %d payload %ld\n", rc, status, (long)got);
  return 0;
}
