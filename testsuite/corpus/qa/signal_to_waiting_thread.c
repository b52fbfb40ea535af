// robust: yes
// race: no
// reason: a worker thread installs nothing; main sends it SIGUSR1 with pthread_kill after a release/acquire handshake; the handler (running in the worker) stores a volatile sig_atomic_t-style atomic counter relaxed and posts a semaphore, which main waits on before reading the handler's plain result (sem_post/sem_wait synchronise); each atomic has one writer at a time
// A signal handler that writes a plain result, bumps an atomic and posts a semaphore; main waits for it.
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static sem_t done;
static atomic_int ready, handled, stop;
static int result;

static void on_usr1(int sig) {
  (void)sig;
  result = 42;
  atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
  sem_post(&done);
}

static void *worker(void *arg) {
  (void)arg;
  atomic_store_explicit(&ready, 1, memory_order_release);
  while (!atomic_load_explicit(&stop, memory_order_acquire)) {
  }
  return NULL;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  sem_init(&done, 0, 0);
  pthread_t w;
  pthread_create(&w, NULL, worker, NULL);
  while (!atomic_load_explicit(&ready, memory_order_acquire)) {
  }
  pthread_kill(w, SIGUSR1);
  while (sem_wait(&done) != 0) {
  }
  printf("result=%d handled=%d\n", result, atomic_load_explicit(&handled, memory_order_relaxed));
  atomic_store_explicit(&stop, 1, memory_order_release);
  pthread_join(w, NULL);
  return 0;
}
