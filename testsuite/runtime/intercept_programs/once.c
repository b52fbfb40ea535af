/* pthread_once / call_once. T1 runs the once routine (x = 1; y = 1); T2 calls once on the
 * same control after T1 is done (forced invisibly), then reads y and x.
 * sync:   same control (T2's once returns after the initialisation: no report).
 * nosync: T2 uses another control with an empty routine: the load of x is reported.
 * c11 / c11_nosync: the same with C11 call_once.
 * callers_only / c11_callers_only: main initialises first (nothing to synchronise); then
 *   T1 writes x = 1, y = 1; A reads y = 1 and calls once; B, after A, calls once and reads x.
 *   B's once only READS the control, so nothing orders B after A: the execution where B reads
 *   x = 0 is SC (B entirely before T1), no report. Modelling a caller as a write on the
 *   control would pass A's SC knowledge of x to B and report B's load: a false alarm.
 *   (Its reporting sibling is "nosync": the same once machinery with a missing edge.) */
#include <pthread.h>
#include <threads.h>

#include "common.h"

static uint32_t x, y;
static pthread_once_t o1 = PTHREAD_ONCE_INIT, o2 = PTHREAD_ONCE_INIT;
static once_flag f1 = ONCE_FLAG_INIT, f2 = ONCE_FLAG_INIT;
static int t1_done, a_done, init_runs;
static const char *mode;

static void init(void) {
  __atomic_add_fetch(&init_runs, 1, __ATOMIC_SEQ_CST);
  ST(&x, 1);
  ST(&y, 1);
}
static void nothing(void) {}

static int c11(void) { return strncmp(mode, "c11", 3) == 0; }

static void *t1(void *arg) {
  (void)arg;
  if (c11())
    call_once(&f1, init);
  else
    CHECK(pthread_once(&o1, init) == 0);
  flag_set(&t1_done);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  flag_wait(&t1_done);
  int same = MODE_IS("sync") || MODE_IS("c11");
  if (c11())
    call_once(same ? &f1 : &f2, same ? init : nothing);
  else
    CHECK(pthread_once(same ? &o1 : &o2, same ? init : nothing) == 0);
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x */
  CHECK(ry == 1 && rx == 1);
  return NULL;
}

static void call_once_on_control(void) {
  if (c11())
    call_once(&f2, nothing);
  else
    CHECK(pthread_once(&o2, nothing) == 0);
}

static void *writer(void *arg) {
  (void)arg;
  ST(&x, 1);
  ST(&y, 1);
  flag_set(&t1_done);
  return NULL;
}

static void *caller_a(void *arg) {
  (void)arg;
  flag_wait(&t1_done);
  CHECK(LD(&y) == 1);
  call_once_on_control();
  flag_set(&a_done);
  return NULL;
}

static void *caller_b(void *arg) {
  (void)arg;
  flag_wait(&a_done);
  call_once_on_control();
  uint32_t rx = LD(&x); /* @load_x_b */
  CHECK(rx == 1);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  if (strstr(mode, "callers_only") != NULL) {
    call_once_on_control(); /* main is the initialiser */
    pthread_t w, a, b;
    CHECK(pthread_create(&w, NULL, writer, NULL) == 0);
    CHECK(pthread_create(&a, NULL, caller_a, NULL) == 0);
    CHECK(pthread_create(&b, NULL, caller_b, NULL) == 0);
    CHECK(pthread_join(w, NULL) == 0);
    CHECK(pthread_join(a, NULL) == 0);
    CHECK(pthread_join(b, NULL) == 0);
    return 0;
  }
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, t1, NULL) == 0);
  CHECK(pthread_create(&b, NULL, t2, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  CHECK(init_runs == 1);
  return 0;
}
