// robust: yes
// race: no
// reason: RSAN paper §4.3 BAR with `while (!flag)` loops: each loop is recognised as wait(flag != 0); the only value other than 0 ever written is 1, so no stale write of another value exists (the reference model: robust); the stale 0 a spinning load may read is a failed attempt
// BAR with loops that leave on any non-zero flag: reported as nothing once the loops are recognised as waits.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  while (!atomic_load_explicit(&y, memory_order_relaxed))
    ;
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  while (!atomic_load_explicit(&x, memory_order_relaxed))
    ;
  return NULL;
}

int main(void) {
  pthread_t th[2];
  void *(*fn[2])(void *) = {t1, t2};
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  puts("both passed the barrier");
  return 0;
}
