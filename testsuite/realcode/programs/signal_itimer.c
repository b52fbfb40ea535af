/* A 50 µs interval timer whose handler uses an atomic the threads also use, and sem_post,
 * while three threads hammer the same atomic (and so the runtime's lock of its location).
 * The main thread waits for enough ticks with sem_wait. It must finish. */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static atomic_long shared;
static atomic_long ticks;
static atomic_int stop;
static sem_t sem;

static void on_alarm(int sig) {
  (void)sig;
  atomic_fetch_add_explicit(&shared, 1, memory_order_acq_rel);
  atomic_fetch_add(&ticks, 1);
  sem_post(&sem);
}

static void *worker(void *a) {
  while (!atomic_load_explicit(&stop, memory_order_acquire)) {
    atomic_fetch_add_explicit(&shared, 2, memory_order_acq_rel);
    sem_post(&sem);
    sem_trywait(&sem);
  }
  return a;
}

int main(void) {
  sem_init(&sem, 0, 0);
#ifdef USE_SIGNAL
  signal(SIGALRM, on_alarm);
#else
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct sigaction back;
  sigaction(SIGALRM, NULL, &back);
  if (back.sa_handler != on_alarm) { fprintf(stderr, "sigaction query does not return the handler\n"); return 1; }
#endif
  struct itimerval it = {{0, 50}, {0, 50}};
  setitimer(ITIMER_REAL, &it, NULL);
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, worker, 0);
  while (atomic_load(&ticks) < 2000) {
    atomic_fetch_add_explicit(&shared, 1, memory_order_acq_rel);
    sem_wait(&sem);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  atomic_store_explicit(&stop, 1, memory_order_release);
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  printf("ticks %ld\n", (long)atomic_load(&ticks));
  return 0;
}
