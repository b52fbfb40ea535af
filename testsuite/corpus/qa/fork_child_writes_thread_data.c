// robust: yes
// race: no
// reason: a detached thread writes a plain buffer and raises a relaxed flag; main sees the flag (relaxed: no synchronisation) and forks; only the child touches the buffer, after the fork, where the writing thread does not exist and its writes are part of the child's copy of memory (the child joins every other thread: intercept_fork.c), so nothing races; the parent never touches the buffer. The flag is one location
// fork() after another thread wrote plain data without synchronisation; only the child uses the data.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char buffer[64];
static atomic_int written;

static void *writer(void *arg) {
  (void)arg;
  strcpy(buffer, "from the thread");
  atomic_store_explicit(&written, 1, memory_order_relaxed);
  return NULL;
}

int main(void) {
  pthread_t w;
  pthread_create(&w, NULL, writer, NULL);
  pthread_detach(w);
  while (!atomic_load_explicit(&written, memory_order_relaxed)) {
  }
  pid_t pid = fork();
  if (pid == 0) {
    buffer[0] = 'F';
    _exit(buffer[1] == 'r' ? 0 : 1);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  printf("child %d\n", WEXITSTATUS(status));
  return 0;
}
