/* Store buffering, each thread's store and load inside a critical section.
 * T1: lock(m1); x = 1; r1 = y; unlock(m1).  T2 (after T1): lock(m); y = 1; r2 = x; unlock(m).
 * sync: m == m1, so the run is SC-equivalent (no report). nosync: T2 uses another mutex and
 * its load of x is the SB violation. trylock: like sync, T2 takes the lock with trylock;
 * timedlock: with pthread_mutex_timedlock. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "common.h"

static uint32_t x, y;
static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static int t1_done;
static const char *mode;

static void *t1(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m1);
  ST(&x, 1);
  uint32_t r1 = LD(&y);
  pthread_mutex_unlock(&m1);
  CHECK(r1 == 0);
  flag_set(&t1_done);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  flag_wait(&t1_done);
  pthread_mutex_t *m = MODE_IS("nosync") ? &m2 : &m1;
  if (MODE_IS("trylock")) {
    CHECK(pthread_mutex_trylock(m) == 0);
  } else if (MODE_IS("timedlock")) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    CHECK(pthread_mutex_timedlock(m, &ts) == 0);
  } else {
    pthread_mutex_lock(m);
  }
  ST(&y, 1);
  uint32_t r2 = LD(&x); /* @load_x */
  pthread_mutex_unlock(m);
  CHECK(r2 == 1);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, t1, NULL) == 0);
  CHECK(pthread_create(&b, NULL, t2, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  return 0;
}
