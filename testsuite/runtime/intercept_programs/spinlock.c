/* Message passing through a spinlock (as mutex_mp.c).
 * sync: both threads use the same spinlock, T2 with pthread_spin_lock (no report).
 * trylock: T2 takes it with pthread_spin_trylock (no report).
 * nosync: T2 uses another spinlock: the load of x is reported. */
#include <pthread.h>

#include "common.h"

static uint32_t x, y;
static pthread_spinlock_t s1, s2;
static int t1_done;
static const char *mode;

static void *writer(void *arg) {
  (void)arg;
  ST(&x, 1);
  pthread_spin_lock(&s1);
  ST(&y, 1);
  pthread_spin_unlock(&s1);
  flag_set(&t1_done);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  flag_wait(&t1_done);
  pthread_spinlock_t *s = MODE_IS("nosync") ? &s2 : &s1;
  if (MODE_IS("trylock"))
    CHECK(pthread_spin_trylock(s) == 0);
  else
    pthread_spin_lock(s);
  uint32_t ry = LD(&y);
  pthread_spin_unlock(s);
  uint32_t rx = LD(&x); /* @load_x */
  CHECK(ry == 1 && rx == 1);
  return NULL;
}

int main(int argc, char **argv) {
  mode = test_mode(argc, argv);
  pthread_spin_init(&s1, PTHREAD_PROCESS_PRIVATE);
  pthread_spin_init(&s2, PTHREAD_PROCESS_PRIVATE);
  pthread_t a, b;
  CHECK(pthread_create(&a, NULL, writer, NULL) == 0);
  CHECK(pthread_create(&b, NULL, reader, NULL) == 0);
  CHECK(pthread_join(a, NULL) == 0);
  CHECK(pthread_join(b, NULL) == 0);
  return 0;
}
