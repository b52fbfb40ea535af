// A timer signal stops two spinning workers through an atomic flag set in the handler.
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static atomic_int stop;
static atomic_long work[2];

static void on_alarm(int sig) {
  (void)sig;
  atomic_store_explicit(&stop, 1, memory_order_relaxed);
}

static void *worker(void *arg) {
  long id = (long)arg;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    atomic_fetch_add_explicit(&work[id], 1, memory_order_relaxed);
    usleep(100);
  }
  return NULL;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  struct itimerval it = {{0, 0}, {0, 20000}};
  setitimer(ITIMER_REAL, &it, NULL);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  printf("%d\n", atomic_load(&work[0]) + atomic_load(&work[1]) > 0);
  return 0;
}
