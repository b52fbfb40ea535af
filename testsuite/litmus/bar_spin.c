// robust: yes
// race: no
// reason: RSAN paper §4.3 BAR with plain spin loops: each loop is recognised as wait(flag = 1) (BARW(1,1), robust per the reference model); the stale 0 a spinning load may read is a failed attempt, which makes no event
// The plain spin-loop barrier BAR (relaxed flags): reported as nothing once the loops are recognised as waits.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int x, y;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  while (atomic_load_explicit(&y, memory_order_relaxed) != 1)
    ;
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  while (atomic_load_explicit(&x, memory_order_relaxed) != 1)
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
