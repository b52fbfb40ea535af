/* fork while other threads are inside the interceptors: the child must be able to create
 * and join threads, lock mutexes and signal conds (no interceptor lock inherited locked).
 * Prints "ok" when all children exited normally. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int stop;
static uint32_t x;

static void *noop(void *arg) { return arg; }

static void *busy(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
    pthread_cond_signal(&c);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, noop, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    free(malloc(64));
  }
  return NULL;
}

int main(void) {
  pthread_t b[2];
  for (int i = 0; i < 2; i++) CHECK(pthread_create(&b[i], NULL, busy, NULL) == 0);
  for (int k = 0; k < 20; k++) {
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      alarm(20);
      pthread_t t;
      CHECK(pthread_create(&t, NULL, noop, NULL) == 0);
      CHECK(pthread_join(t, NULL) == 0);
      pthread_mutex_lock(&m);
      ST(&x, 1);
      pthread_mutex_unlock(&m);
      pthread_cond_broadcast(&c);
      free(malloc(64));
      exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
  for (int i = 0; i < 2; i++) CHECK(pthread_join(b[i], NULL) == 0);
  printf("ok\n");
  return 0;
}
