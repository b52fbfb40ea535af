// robust: yes
// race: no
// reason: T0's release fence before its relaxed store to y heads a release sequence that T1's relaxed fetch_add continues (an RMW of another thread, C++20 [intro.races]/5); T2's relaxed load of y (1 or 2) followed by an acquire fence synchronises with T0's fence either way; reference model (shape mp_fence_relseq_rmw, with x atomic): robust; the plain payload is hb-ordered
// MP by fence-fence synchronisation through a release sequence that another thread's relaxed RMW continues.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int y;
static int payload;

static void *t0(void *arg) {
  (void)arg;
  payload = 1;
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  return NULL;
}

static void *t1(void *arg) {
  (void)arg;
  while (atomic_load_explicit(&y, memory_order_relaxed) == 0) {
  }
  atomic_fetch_add_explicit(&y, 1, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  int r = atomic_load_explicit(&y, memory_order_relaxed);
  if (r != 0) {
    atomic_thread_fence(memory_order_acquire);
    printf("y=%d payload=%d\n", r, payload);
  }
  return NULL;
}

int main(void) {
  pthread_t th[3];
  void *(*fn[3])(void *) = {t0, t1, t2};
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, fn[i], NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  return 0;
}
