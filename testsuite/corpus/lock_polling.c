// robust: yes
// race: no
// reason: main polls flags that the workers set under the same lock it reads them under; every access to data is ordered by those critical sections and the joins
// Polling loops that read a plain flag inside a critical section: a mutex with sched_yield, a mutex without, and a read lock of an rwlock.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int ready_m, ready_rw, data;

static void *setter(void *p) {
  data = 7;
  pthread_mutex_lock(&m);
  ready_m = 1;
  pthread_mutex_unlock(&m);
  pthread_rwlock_wrlock(&rw);
  ready_rw = 1;
  pthread_rwlock_unlock(&rw);
  return p;
}

static int poll_mutex(void) {
  pthread_mutex_lock(&m);
  int r = ready_m;
  pthread_mutex_unlock(&m);
  return r;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, setter, 0);
  while (!poll_mutex()) sched_yield();
  while (!poll_mutex()) {
  }
  for (;;) {
    pthread_rwlock_rdlock(&rw);
    int r = ready_rw;
    pthread_rwlock_unlock(&rw);
    if (r) break;
  }
  printf("%d\n", data);
  pthread_join(t, 0);
  return 0;
}
