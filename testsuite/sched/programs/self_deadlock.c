// main holds the mutex while it joins a thread that waits for the same mutex: every
// schedule deadlocks.
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_mutex_lock(&m);
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  pthread_mutex_unlock(&m);
  return 0;
}
