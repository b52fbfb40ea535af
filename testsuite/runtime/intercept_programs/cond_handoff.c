/* Condition-variable hand-off. T2 waits (lock; while (!go) cond_wait; unlock) and is really
 * blocked in the wait when T1 runs (forced invisibly), then reads y and x.
 * sync:   T1: x = 1; y = 1; lock; go = 1; signal; unlock. The wait returns with the mutex
 *         re-acquired: T2 is aware of x = 1 (no report).
 * nosync: T1: lock; go = 1; signal; unlock; x = 1; y = 1 (T2 reads them after T1 is done,
 *         forced invisibly): the load of x is reported.
 * signal_only: T1 never takes the mutex: x = 1; y = 1; go = 1; signal. T2 wakes up through
 *         the cond's own edge (signal = release on the cond, wait return = acquire): no report.
 * signal_other: as signal_only but T1 signals another cond; T2 waits with short timeouts
 *         polling go: the load of x is reported.
 * broadcast: as signal_only with pthread_cond_broadcast.
 * clockwait: as signal_only, T2 waits with pthread_cond_clockwait (long deadline). */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "common.h"

static uint32_t x, y;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER, c_other = PTHREAD_COND_INITIALIZER;
static int go;       /* predicate, invisible to the runtime */
static int waiting;  /* T2 is about to wait (it holds m) */
static int t1_done;
static const char *mode;

static void *t1(void *arg) {
  (void)arg;
  flag_wait(&waiting);
  /* T2 holds m until it is inside the wait; lock+unlock of m would itself order T1 after
   * T2's release of m, which adds nothing about x and y (T1 writes them afterwards). */
  if (MODE_IS("sync")) {
    ST(&x, 1);
    ST(&y, 1);
    pthread_mutex_lock(&m);
    __atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
  } else if (MODE_IS("nosync")) {
    pthread_mutex_lock(&m);
    __atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    ST(&x, 1);
    ST(&y, 1);
  } else {
    /* make sure T2 is blocked in the wait: it released m there */
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    ST(&x, 1);
    ST(&y, 1);
    __atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
    if (MODE_IS("signal_only") || MODE_IS("clockwait"))
      pthread_cond_signal(&c);
    else if (MODE_IS("broadcast"))
      pthread_cond_broadcast(&c);
    else
      pthread_cond_signal(&c_other);
  }
  flag_set(&t1_done);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  flag_set(&waiting);
  while (!__atomic_load_n(&go, __ATOMIC_SEQ_CST)) {
    if (MODE_IS("signal_other")) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 10 * 1000 * 1000;
      if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
      }
      int rc = pthread_cond_timedwait(&c, &m, &ts);
      CHECK(rc == 0 || rc == ETIMEDOUT);
    } else if (MODE_IS("clockwait")) {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      ts.tv_sec += 30;
      CHECK(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &ts) == 0);
    } else {
      CHECK(pthread_cond_wait(&c, &m) == 0);
    }
  }
  pthread_mutex_unlock(&m);
  flag_wait(&t1_done);
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x */
  CHECK(ry == 1 && rx == 1);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  pthread_t a, b;
  CHECK(pthread_create(&b, NULL, t2, NULL) == 0);
  CHECK(pthread_create(&a, NULL, t1, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  return 0;
}
