/* A SIGEV_THREAD timer: glibc runs the notification function in a thread it creates itself
 * (not through pthread_create). The data the main thread wrote before timer_create is read
 * there: ordered by the timer's creation, no race. */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int config[4];
static int seen;
static sem_t done;

static void on_timer(union sigval v) {
  int *c = v.sival_ptr;
  seen = c[0] + c[3];
  sem_post(&done);
}

int main(void) {
  sem_init(&done, 0, 0);
  config[0] = 40;
  config[3] = 2;
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD;
  sev.sigev_notify_function = on_timer;
  sev.sigev_value.sival_ptr = config;
  timer_t id;
  if (timer_create(CLOCK_MONOTONIC, &sev, &id) != 0) return 2;
  struct itimerspec its = {{0, 0}, {0, 1000000}};
  timer_settime(id, 0, &its, NULL);
  sem_wait(&done);
  timer_delete(id);
  printf("%d\n", seen);
  return seen == 42 ? 0 : 1;
}
