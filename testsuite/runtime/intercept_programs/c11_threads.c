/* C11 <threads.h>: thrd_create / thrd_join / mtx_* / cnd_* (separate symbols in glibc,
 * which do not go through pthread_create or pthread_mutex_lock).
 * mtx / mtx_nosync:   message passing through an mtx_t (nosync: the reader locks another).
 * mtx_try / mtx_timed: the reader takes the lock with mtx_trylock / mtx_timedlock.
 * cnd / cnd_nosync:   cnd_t hand-off (as cond_handoff.c sync / nosync).
 * join / join_nosync: the child writes x, y then returns (or thrd_exit in join_exit); main
 *                     reads after thrd_join (nosync: after an invisible flag, before the join).
 * create / create_nosync: main writes x, y before thrd_create (nosync: after it, the child
 *                     reads after an invisible flag). */
#include <threads.h>
#include <time.h>

#include "common.h"

static uint32_t x, y;
static mtx_t m1, m2;
static cnd_t c;
static int go, waiting, t1_done, main_wrote;
static const char *mode;

static int mp_writer(void *arg) {
  (void)arg;
  ST(&x, 1);
  mtx_lock(&m1);
  ST(&y, 1);
  mtx_unlock(&m1);
  flag_set(&t1_done);
  return 0;
}

static int mp_reader(void *arg) {
  (void)arg;
  flag_wait(&t1_done);
  mtx_t *m = MODE_IS("mtx_nosync") ? &m2 : &m1;
  if (MODE_IS("mtx_try")) {
    CHECK(mtx_trylock(m) == thrd_success);
  } else if (MODE_IS("mtx_timed")) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    ts.tv_sec += 10;
    CHECK(mtx_timedlock(m, &ts) == thrd_success);
  } else {
    CHECK(mtx_lock(m) == thrd_success);
  }
  uint32_t ry = LD(&y);
  mtx_unlock(m);
  uint32_t rx = LD(&x); /* @load_x_mtx */
  CHECK(ry == 1 && rx == 1);
  return 0;
}

static int cnd_signaller(void *arg) {
  (void)arg;
  flag_wait(&waiting);
  if (MODE_IS("cnd")) {
    ST(&x, 1);
    ST(&y, 1);
  }
  mtx_lock(&m1);
  __atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
  cnd_signal(&c);
  mtx_unlock(&m1);
  if (!MODE_IS("cnd")) {
    ST(&x, 1);
    ST(&y, 1);
  }
  flag_set(&t1_done);
  return 0;
}

static int cnd_waiter(void *arg) {
  (void)arg;
  mtx_lock(&m1);
  flag_set(&waiting);
  while (!__atomic_load_n(&go, __ATOMIC_SEQ_CST)) CHECK(cnd_wait(&c, &m1) == thrd_success);
  mtx_unlock(&m1);
  flag_wait(&t1_done);
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x_cnd */
  CHECK(ry == 1 && rx == 1);
  return 0;
}

static int child_writes(void *arg) {
  (void)arg;
  ST(&x, 1);
  ST(&y, 1);
  flag_set(&t1_done);
  if (MODE_IS("join_exit")) thrd_exit(7);
  return 7;
}

static int child_reads(void *arg) {
  (void)arg;
  flag_wait(&main_wrote);
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x_child */
  CHECK(ry == 1 && rx == 1);
  return 0;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  CHECK(mtx_init(&m1, mtx_timed) == thrd_success);
  CHECK(mtx_init(&m2, mtx_timed) == thrd_success);
  CHECK(cnd_init(&c) == thrd_success);
  thrd_t a, b;
  if (strncmp(mode, "mtx", 3) == 0) {
    CHECK(thrd_create(&a, mp_writer, NULL) == thrd_success);
    CHECK(thrd_create(&b, mp_reader, NULL) == thrd_success);
    CHECK(thrd_join(a, NULL) == thrd_success);
    CHECK(thrd_join(b, NULL) == thrd_success);
  } else if (strncmp(mode, "cnd", 3) == 0) {
    CHECK(thrd_create(&b, cnd_waiter, NULL) == thrd_success);
    CHECK(thrd_create(&a, cnd_signaller, NULL) == thrd_success);
    CHECK(thrd_join(a, NULL) == thrd_success);
    CHECK(thrd_join(b, NULL) == thrd_success);
  } else if (strncmp(mode, "join", 4) == 0) {
    int res = 0;
    CHECK(thrd_create(&a, child_writes, NULL) == thrd_success);
    if (MODE_IS("join_nosync")) {
      flag_wait(&t1_done);
    } else {
      CHECK(thrd_join(a, &res) == thrd_success);
      CHECK(res == 7);
    }
    uint32_t ry = LD(&y);
    uint32_t rx = LD(&x); /* @load_x_main */
    CHECK(ry == 1 && rx == 1);
    if (MODE_IS("join_nosync")) CHECK(thrd_join(a, NULL) == thrd_success);
  } else if (strncmp(mode, "create", 6) == 0) {
    if (MODE_IS("create")) {
      ST(&x, 1);
      ST(&y, 1);
    }
    CHECK(thrd_create(&a, child_reads, NULL) == thrd_success);
    if (MODE_IS("create_nosync")) {
      ST(&x, 1);
      ST(&y, 1);
    }
    flag_set(&main_wrote);
    CHECK(thrd_join(a, NULL) == thrd_success);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  return 0;
}
