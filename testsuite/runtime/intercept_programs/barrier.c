/* Barrier among three threads. T1 writes x = 1, y = 1 and is the first to arrive; T3
 * arrives after it; T2 arrives last, then reads y and x. Barrier entries accumulate, so
 * T2 is aware of x = 1 whatever the order of arrival (no report).
 * sync:   T1 writes before the barrier.
 * nosync: T1 writes after the barrier (T2 reads after T1 is done, forced invisibly): the
 *         load of x is reported. */
#include <pthread.h>

#include "common.h"

static uint32_t x, y;
static pthread_barrier_t bar;
static int t1_arriving, t3_arriving, t1_done;
static const char *mode;

static void *t1(void *arg) {
  (void)arg;
  if (MODE_IS("sync")) {
    ST(&x, 1);
    ST(&y, 1);
  }
  flag_set(&t1_arriving);
  pthread_barrier_wait(&bar);
  if (!MODE_IS("sync")) {
    ST(&x, 1);
    ST(&y, 1);
  }
  flag_set(&t1_done);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  flag_wait(&t1_arriving);
  sched_yield();
  flag_set(&t3_arriving);
  pthread_barrier_wait(&bar);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  flag_wait(&t3_arriving);
  sched_yield();
  pthread_barrier_wait(&bar);
  flag_wait(&t1_done);
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x */
  CHECK(ry == 1 && rx == 1);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  CHECK(pthread_barrier_init(&bar, NULL, 3) == 0);
  pthread_t a, b, c;
  CHECK(pthread_create(&a, NULL, t1, NULL) == 0);
  CHECK(pthread_create(&b, NULL, t2, NULL) == 0);
  CHECK(pthread_create(&c, NULL, t3, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  CHECK(pthread_join(c, NULL) == 0);
  pthread_barrier_destroy(&bar);
  return 0;
}
