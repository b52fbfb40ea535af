/* Reader-writer lock.
 * Two readers hold the read lock at the same time; reader R1 writes x = 1, y = 1 while
 * holding it, unlocks first, then R2 unlocks; then the writer W takes the write lock and
 * reads y, x. Every unlock synchronises with the next wrlock, so W is aware of x = 1 even
 * though R2 unlocked last (no report). (Also exercises rdlock and wrlock acquire.)
 * sync:   W uses the same rwlock.
 * nosync: W uses another rwlock: the load of x is reported.
 * try:    like sync with pthread_rwlock_tryrdlock / trywrlock.
 * timed / clock: like sync with pthread_rwlock_timed{rd,wr}lock / clock{rd,wr}lock. */
#include <pthread.h>
#include <time.h>

#include "common.h"

static uint32_t x, y;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER, rw_other = PTHREAD_RWLOCK_INITIALIZER;
static int r1_locked, r2_locked, r1_unlocked, r2_unlocked;
static const char *mode;

static struct timespec deadline(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  ts.tv_sec += 30;
  return ts;
}

static void rdlock(pthread_rwlock_t *l) {
  if (MODE_IS("try")) {
    CHECK(pthread_rwlock_tryrdlock(l) == 0);
  } else if (MODE_IS("timed")) {
    struct timespec ts = deadline(CLOCK_REALTIME);
    CHECK(pthread_rwlock_timedrdlock(l, &ts) == 0);
  } else if (MODE_IS("clock")) {
    struct timespec ts = deadline(CLOCK_MONOTONIC);
    CHECK(pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &ts) == 0);
  } else {
    CHECK(pthread_rwlock_rdlock(l) == 0);
  }
}

static void *r1(void *arg) {
  (void)arg;
  rdlock(&rw);
  flag_set(&r1_locked);
  flag_wait(&r2_locked);
  ST(&x, 1);
  ST(&y, 1);
  CHECK(pthread_rwlock_unlock(&rw) == 0);
  flag_set(&r1_unlocked);
  return NULL;
}

static void *r2(void *arg) {
  (void)arg;
  flag_wait(&r1_locked);
  rdlock(&rw);
  flag_set(&r2_locked);
  flag_wait(&r1_unlocked);
  CHECK(pthread_rwlock_unlock(&rw) == 0);
  flag_set(&r2_unlocked);
  return NULL;
}

static void *w(void *arg) {
  (void)arg;
  flag_wait(&r2_unlocked);
  pthread_rwlock_t *l = MODE_IS("nosync") ? &rw_other : &rw;
  if (MODE_IS("try")) {
    CHECK(pthread_rwlock_trywrlock(l) == 0);
  } else if (MODE_IS("timed")) {
    struct timespec ts = deadline(CLOCK_REALTIME);
    CHECK(pthread_rwlock_timedwrlock(l, &ts) == 0);
  } else if (MODE_IS("clock")) {
    struct timespec ts = deadline(CLOCK_MONOTONIC);
    CHECK(pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &ts) == 0);
  } else {
    CHECK(pthread_rwlock_wrlock(l) == 0);
  }
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x */
  CHECK(pthread_rwlock_unlock(l) == 0);
  CHECK(ry == 1 && rx == 1);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  pthread_t a, b, c;
  CHECK(pthread_create(&a, NULL, r1, NULL) == 0);
  CHECK(pthread_create(&b, NULL, r2, NULL) == 0);
  CHECK(pthread_create(&c, NULL, w, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  CHECK(pthread_join(c, NULL) == 0);
  return 0;
}
