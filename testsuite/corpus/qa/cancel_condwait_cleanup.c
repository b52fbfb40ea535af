// robust: yes
// race: no
// reason: the waiter is cancelled inside pthread_cond_wait (a cancellation point, which re-acquires the mutex first); its cleanup handler writes the plain log under that mutex and unlocks it; main's later lock orders its read after the handler; no atomic of the program's own
// pthread_cancel of a thread blocked in pthread_cond_wait, whose cleanup handler records and unlocks.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, cleaned, started;

static void cleanup(void *arg) {
  (void)arg;
  cleaned = 1;
  pthread_mutex_unlock(&m);
}

static void *waiter(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  started = 1;
  pthread_cond_signal(&c);
  pthread_cleanup_push(cleanup, NULL);
  while (!ready) pthread_cond_wait(&c, &m);
  pthread_cleanup_pop(1);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, waiter, NULL);
  pthread_mutex_lock(&m);
  while (!started) pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  pthread_cancel(t);
  void *res;
  pthread_join(t, &res);
  pthread_mutex_lock(&m);
  printf("%d %d\n", cleaned, res == PTHREAD_CANCELED);
  pthread_mutex_unlock(&m);
  return 0;
}
