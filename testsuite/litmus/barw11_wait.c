// robust: yes
// race: no
// reason: RSAN paper §4.3 BARW(1,1): each wait reads only 1, so no candidate graph lets both threads see the other's flag stale; the stale 0 a spinning load may read is not an event of wait
// Barrier with pyrsan_wait (release flags, acquire waits): robust once the busy-wait loops are waits.
// Checked with the defaults of `pyrsan run` (no runs field).
#include <pthread.h>
#include <pyrsan.h>
#include <stdio.h>

atomic_int x, y;

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  pyrsan_wait_explicit(&y, 1, memory_order_acquire);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  pyrsan_wait_explicit(&x, 1, memory_order_acquire);
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
