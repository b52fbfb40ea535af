/* POSIX semaphore hand-off with two posters. T1 writes x = 1, y = 1 and posts; T3 posts
 * after T1 (forced invisibly); T2, after both, waits twice and reads y and x.
 * sync:   all on one semaphore; posts accumulate, so T2 is aware of x = 1 even though T3
 *         posted last (no report).
 * try:    as sync, T2 takes the posts with sem_trywait.
 * nosync: T1 posts another semaphore (T3 posts twice): the load of x is reported. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "common.h"

static uint32_t x, y;
static sem_t s, s_other;
static int t1_done, t3_done;
static const char *mode;

static void *t1(void *arg) {
  (void)arg;
  ST(&x, 1);
  ST(&y, 1);
  CHECK(sem_post(MODE_IS("nosync") ? &s_other : &s) == 0);
  flag_set(&t1_done);
  return NULL;
}

static void *t3(void *arg) {
  (void)arg;
  flag_wait(&t1_done);
  CHECK(sem_post(&s) == 0);
  if (MODE_IS("nosync")) CHECK(sem_post(&s) == 0);
  flag_set(&t3_done);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  flag_wait(&t3_done);
  for (int i = 0; i < 2; i++) {
    if (MODE_IS("try"))
      CHECK(sem_trywait(&s) == 0);
    else
      CHECK(sem_wait(&s) == 0);
  }
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x */
  CHECK(ry == 1 && rx == 1);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  CHECK(sem_init(&s, 0, 0) == 0);
  CHECK(sem_init(&s_other, 0, 0) == 0);
  pthread_t a, b, c;
  CHECK(pthread_create(&a, NULL, t1, NULL) == 0);
  CHECK(pthread_create(&b, NULL, t2, NULL) == 0);
  CHECK(pthread_create(&c, NULL, t3, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  CHECK(pthread_join(c, NULL) == 0);
  return 0;
}
