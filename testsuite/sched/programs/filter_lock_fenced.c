// Peterson's filter lock for 3 threads with an SC fence after each store of the entry protocol
// (and, with -DEXIT_FENCE, after the exit store): not robust (the waiting loop's reads are not
// separated by fences). A suggested repair must never name a fence that is already there.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#define N 3
#define store(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define load(p) atomic_load_explicit((p), memory_order_acquire)
#define fence() atomic_thread_fence(memory_order_seq_cst)

atomic_int level[N], victim[N], in_cs;

static int others_at_or_above(int me, int l) {
  for (int k = 0; k < N; k++)
    if (k != me && load(&level[k]) >= l)
      return 1;
  return 0;
}

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg;
  for (int l = 1; l < N; l++) {
    store(&level[me], l);
    fence();
    store(&victim[l], me); /* VICTIM STORE */
    fence();
    while (others_at_or_above(me, l) && load(&victim[l]) == me)
      ;
  }
  atomic_fetch_add_explicit(&in_cs, 1, memory_order_relaxed); /* critical section */
  store(&level[me], 0); /* EXIT STORE */
#ifdef EXIT_FENCE
  fence();
#endif
  return NULL;
}

int main(void) {
  pthread_t th[N];
  for (intptr_t i = 0; i < N; i++)
    pthread_create(&th[i], NULL, thread, (void *)i);
  for (int i = 0; i < N; i++)
    pthread_join(th[i], NULL);
  return 0;
}
