/* Store buffering and a reader among threads of slots 7-9 (main and six idle threads take the
 * slots before them), so that their clocks are wider than the engine's inline clocks
 * (RSAN_CLK_INLINE, 6): every export is a shared snapshot and the thread memos are written
 * (runtime/src/clock.c memo_put). The three wait for main's lock, so that every thread exists
 * before the first SC fence (the closure's snapshot) and the search restores its states. test_closure_state.py explores it with a restore per closure
 * state and with a fork per state: a restore must empty the memos the undone branch wrote. */
#include <pthread.h>
#include <stdatomic.h>

#define IDLE 6

static pthread_mutex_t go = PTHREAD_MUTEX_INITIALIZER;
static atomic_int x, y;
static int r0, r1, r2, r3;

static void wait_go(void) {
  pthread_mutex_lock(&go);
  pthread_mutex_unlock(&go);
}

static void *idle(void *arg) { return arg; }

static void *left(void *arg) {
  wait_go();
  atomic_store(&x, 1);
  r0 = atomic_load(&y);
  return arg;
}

static void *right(void *arg) {
  wait_go();
  atomic_store(&y, 1);
  r1 = atomic_load(&x);
  return arg;
}

static void *reader(void *arg) {
  wait_go();
  r2 = atomic_load(&x);
  r3 = atomic_load(&y);
  return arg;
}

int main(void) {
  pthread_t t[IDLE + 3];
  pthread_mutex_lock(&go);
  for (int i = 0; i < IDLE; i++) pthread_create(&t[i], 0, idle, 0);
  pthread_create(&t[IDLE], 0, left, 0);
  pthread_create(&t[IDLE + 1], 0, right, 0);
  pthread_create(&t[IDLE + 2], 0, reader, 0);
  pthread_mutex_unlock(&go);
  for (int i = 0; i < IDLE + 3; i++) pthread_join(t[i], 0);
  return r0 + r1 + r2 + r3 == 17;
}
