/* Message passing through a mutex.
 * T1: x = 1; lock(m); y = 1; unlock(m).   T2 (after T1, forced invisibly): lock(m'); r = y;
 * unlock(m'); r = x.  sync: m' == m (the unlock -> lock edge makes T2 aware of x = 1, no
 * report). nosync: m' is another mutex; the load of x is a robustness violation.
 * tryfail: T1 takes m again and holds it; T2's pthread_mutex_trylock(m) fails (EBUSY), which
 * must not synchronise: the load of x is reported. */
#include <errno.h>
#include <pthread.h>

#include "common.h"

static uint32_t x, y;
static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *reader_mutex;
static int t1_done, t2_tried;
static const char *mode;

static void *writer(void *arg) {
  (void)arg;
  ST(&x, 1);
  pthread_mutex_lock(&m1);
  ST(&y, 1);
  pthread_mutex_unlock(&m1);
  if (MODE_IS("tryfail")) {
    pthread_mutex_lock(&m1);
    flag_set(&t1_done);
    flag_wait(&t2_tried);
    pthread_mutex_unlock(&m1);
    return NULL;
  }
  flag_set(&t1_done);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  flag_wait(&t1_done);
  uint32_t ry;
  if (MODE_IS("tryfail")) {
    CHECK(pthread_mutex_trylock(&m1) == EBUSY);
    ry = LD(&y);
    flag_set(&t2_tried);
  } else {
    pthread_mutex_lock(reader_mutex);
    ry = LD(&y);
    pthread_mutex_unlock(reader_mutex);
  }
  uint32_t rx = LD(&x); /* @load_x */
  CHECK(ry == 1 && rx == 1);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  reader_mutex = MODE_IS("sync") ? &m1 : &m2;
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, writer, NULL) == 0);
  CHECK(pthread_create(&b, NULL, reader, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  return 0;
}
