// robust: no
// race: no
// reason: SB between main and T1 (relaxed stores and loads: both may read 0), then main calls exit(0) while a detached thread still spins on an atomic flag nobody sets; the report must survive exit() with a thread running inside the program
// SB, then exit() while a detached thread spins forever.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int x, y, never;
static int r1;

static void *spinner(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&never, memory_order_acquire)) {
  }
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed); // pyrsan: stale
  r1 = atomic_load_explicit(&x, memory_order_relaxed); // pyrsan: violation
  return NULL;
}

int main(void) {
  pthread_t s, a;
  pthread_create(&s, NULL, spinner, NULL);
  pthread_detach(s);
  pthread_create(&a, NULL, t1, NULL);
  atomic_store_explicit(&x, 1, memory_order_relaxed); // pyrsan: stale
  int r0 = atomic_load_explicit(&y, memory_order_relaxed); // pyrsan: violation
  pthread_join(a, NULL);
  printf("%d %d\n", r0, r1);
  fflush(stdout);
  exit(0);
}
