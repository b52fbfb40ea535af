/* A real deadlock in a program with a signal handler: no signal is ever sent, so the handler
 * that could post the semaphore never runs (pyrsan must report the deadlock, not wait). */
#include <semaphore.h>
#include <signal.h>
#include <string.h>
static sem_t s;
static void h(int sig) { (void)sig; sem_post(&s); }
int main(void) {
  struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = h; sigaction(SIGUSR1, &sa, 0);
  sem_init(&s, 0, 0);
  sem_wait(&s);
  return 0;
}
