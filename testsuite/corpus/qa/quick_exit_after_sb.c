// robust: no
// race: no
// reason: SB with release stores and acquire loads (release/acquire does not forbid both loads reading 0), then main leaves with quick_exit(0) from an at_quick_exit-registered path while a second thread is still blocked in pthread_cond_wait; the report must be printed and the exit status be 66 after quick_exit
// SB, then quick_exit while another thread sleeps on a condition variable.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int x, y;
static int r1;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *sleeper(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  for (;;) pthread_cond_wait(&never, &m);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release); // pyrsan: stale
  r1 = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation
  return NULL;
}

static void bye(void) { fputs("bye\n", stdout); fflush(stdout); }

int main(void) {
  at_quick_exit(bye);
  pthread_t s, a;
  pthread_create(&s, NULL, sleeper, NULL);
  pthread_create(&a, NULL, t1, NULL);
  atomic_store_explicit(&x, 1, memory_order_release); // pyrsan: stale
  int r0 = atomic_load_explicit(&y, memory_order_acquire); // pyrsan: violation
  pthread_join(a, NULL);
  printf("%d %d\n", r0, r1);
  fflush(stdout);
  quick_exit(0);
}
