/* Everything before main, from a constructor (glibc passes argc/argv to constructors):
 * a mutex, free, pthread_once, and a thread created and joined.
 * sync:   the child writes x, y; the constructor reads them after pthread_join (no report).
 * nosync: the constructor reads them after an invisible flag, before joining: reported.
 * main itself does nothing. */
#include <pthread.h>

#include "common.h"

static uint32_t x, y, z;
static int child_done;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_once(void) { ST(&z, 1); }

static void *child(void *arg) {
  (void)arg;
  pthread_once(&once, init_once);
  ST(&x, 1);
  ST(&y, 1);
  flag_set(&child_done);
  return NULL;
}

__attribute__((constructor(200))) static void early(int argc, char **argv) {
  const char *mode = test_mode(argc, argv);
  pthread_mutex_lock(&m);
  free(malloc(32));
  pthread_mutex_unlock(&m);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, child, NULL) == 0);
  if (MODE_IS("nosync")) flag_wait(&child_done);
  else CHECK(pthread_join(t, NULL) == 0);
  uint32_t ry = LD(&y);
  uint32_t rx = LD(&x); /* @load_x */
  CHECK(ry == 1 && rx == 1);
  if (MODE_IS("nosync")) CHECK(pthread_join(t, NULL) == 0);
}

int main(void) { return 0; }
