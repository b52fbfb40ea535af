// robust: yes
// race: no
// reason: every access to the shared counters is under a lock acquired by trylock, timedlock, a recursive mutex or a rwlock tryrdlock/trywrlock; failed attempts do not synchronise but guard nothing
// pthread trylock / timedlock / recursive mutex / rwlock try variants protecting plain data.
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int a, b, c;

static void bump_rec(int depth) {
  pthread_mutex_lock(&rec);
  b++;
  if (depth)
    bump_rec(depth - 1);
  pthread_mutex_unlock(&rec);
}

static void *work(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    while (pthread_mutex_trylock(&m) == EBUSY)
      ;
    a++;
    pthread_mutex_unlock(&m);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    if (pthread_mutex_timedlock(&m, &ts) == 0) {
      a++;
      pthread_mutex_unlock(&m);
    }
    bump_rec(2);
    while (pthread_rwlock_trywrlock(&rw) != 0)
      ;
    c++;
    pthread_rwlock_unlock(&rw);
    while (pthread_rwlock_tryrdlock(&rw) != 0)
      ;
    int seen = c;
    pthread_rwlock_unlock(&rw);
    (void)seen;
  }
  return NULL;
}

int main(void) {
  pthread_mutexattr_t at;
  pthread_mutexattr_init(&at);
  pthread_mutexattr_settype(&at, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&rec, &at);
  pthread_t th[3];
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, work, NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  printf("%d %d %d\n", a, b, c);
  return (a == 12 && b == 18 && c == 6) ? 0 : 1;
}
