/* pthread_create / join / detach edges.
 * create / create_nosync: main writes x, y before pthread_create (nosync: after it); the
 *   child reads them after an invisible flag.
 * join / join_nosync: the child writes x, y; main reads them after pthread_join (nosync:
 *   after an invisible flag, before joining).
 * join_exit: as join, the child ends with pthread_exit.
 * tryjoin / timedjoin: as join with pthread_tryjoin_np (retried until it succeeds) /
 *   pthread_timedjoin_np.
 * cancel: the child writes x, y and is cancelled (its cleanup ends it in the runtime); main
 *   reads after pthread_join.
 * reuse / reuse_nosync: first a detached thread (pthread_detach), a thread created detached
 *   and a thread that detaches itself run to the end, then a joinable thread (likely with the same pthread_t) writes
 *   x, y and main joins it; the map from pthread_t to thread state must not confuse them.
 *   (nosync: main reads before joining.) */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "common.h"

static uint32_t x, y;
static int child_done, main_wrote, detached_done;
static const char *mode;

static void *child_writes(void *arg) {
  (void)arg;
  ST(&x, 1);
  ST(&y, 1);
  flag_set(&child_done);
  if (MODE_IS("join_exit")) pthread_exit((void *)7);
  return (void *)7;
}

static void *child_reads(void *arg) {
  (void)arg;
  flag_wait(&main_wrote);
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x_child */
  CHECK(ry == 1 && rx == 1);
  return NULL;
}

static void *child_cancelled(void *arg) {
  (void)arg;
  ST(&x, 1);
  ST(&y, 1);
  flag_set(&child_done);
  for (;;) {
    pthread_testcancel();
    sched_yield();
  }
  return NULL;
}

static uint32_t scratch;
static void *detached_child(void *arg) {
  if ((uintptr_t)arg == 3) CHECK(pthread_detach(pthread_self()) == 0);
  ST(&scratch, (uintptr_t)arg);
  __atomic_add_fetch(&detached_done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void read_after_child(void) {
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x_main */
  CHECK(ry == 1 && rx == 1);
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  pthread_t t;
  void *ret = NULL;
  if (strncmp(mode, "create", 6) == 0) {
    if (MODE_IS("create")) {
      ST(&x, 1);
      ST(&y, 1);
    }
    CHECK(pthread_create(&t, NULL, child_reads, NULL) == 0);
    if (MODE_IS("create_nosync")) {
      ST(&x, 1);
      ST(&y, 1);
    }
    flag_set(&main_wrote);
    CHECK(pthread_join(t, NULL) == 0);
  } else if (MODE_IS("join") || MODE_IS("join_exit") || MODE_IS("join_nosync")) {
    CHECK(pthread_create(&t, NULL, child_writes, NULL) == 0);
    if (MODE_IS("join_nosync")) {
      flag_wait(&child_done);
      read_after_child();
      CHECK(pthread_join(t, &ret) == 0);
    } else {
      CHECK(pthread_join(t, &ret) == 0);
      read_after_child();
    }
    CHECK(ret == (void *)7);
  } else if (MODE_IS("tryjoin")) {
    CHECK(pthread_create(&t, NULL, child_writes, NULL) == 0);
    int rc;
    while ((rc = pthread_tryjoin_np(t, &ret)) == EBUSY) sched_yield();
    CHECK(rc == 0 && ret == (void *)7);
    read_after_child();
  } else if (MODE_IS("timedjoin")) {
    CHECK(pthread_create(&t, NULL, child_writes, NULL) == 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 30;
    CHECK(pthread_timedjoin_np(t, &ret, &ts) == 0 && ret == (void *)7);
    read_after_child();
  } else if (MODE_IS("cancel")) {
    CHECK(pthread_create(&t, NULL, child_cancelled, NULL) == 0);
    flag_wait(&child_done);
    CHECK(pthread_cancel(t) == 0);
    CHECK(pthread_join(t, &ret) == 0 && ret == PTHREAD_CANCELED);
    read_after_child();
  } else if (MODE_IS("reuse") || MODE_IS("reuse_nosync")) {
    pthread_t d;
    CHECK(pthread_create(&d, NULL, detached_child, (void *)1) == 0);
    CHECK(pthread_detach(d) == 0);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    CHECK(pthread_create(&d, &attr, detached_child, (void *)2) == 0);
    pthread_attr_destroy(&attr);
    CHECK(pthread_create(&d, NULL, detached_child, (void *)3) == 0);
    counter_wait(&detached_done, 3);
    CHECK(pthread_create(&t, NULL, child_writes, NULL) == 0);
    if (MODE_IS("reuse_nosync")) {
      flag_wait(&child_done);
      read_after_child();
      CHECK(pthread_join(t, NULL) == 0);
    } else {
      CHECK(pthread_join(t, NULL) == 0);
      read_after_child();
    }
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  return 0;
}
