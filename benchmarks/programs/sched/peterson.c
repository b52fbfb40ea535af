// Peterson's filter lock for NTHREADS threads (2: Peterson's algorithm), one critical section
// each. Release/acquire: not robust; -DROBUST: fenced (order.h: with 3+ threads an SC fence
// between every two accesses of a thread to different locations).
#include <pthread.h>
#include <stdint.h>
#include "order.h"
#ifndef NTHREADS
#define NTHREADS 2
#endif

atomic_int level[NTHREADS], victim[NTHREADS], in_cs;

static int others_at_or_above(int me, int l) {
  for (int k = 0; k < NTHREADS; k++)
    if (k != me && (fence_n(), load(&level[k])) >= l)
      return 1;
  return 0;
}

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg;
  for (int l = 1; l < NTHREADS; l++) {
    fence_n();
    store(&level[me], l);
    fence();
    store(&victim[l], me);
    fence();
    while (others_at_or_above(me, l) && (fence_n(), load(&victim[l])) == me)
      ;
  }
  fence_n();
  atomic_fetch_add_explicit(&in_cs, 1, memory_order_relaxed); /* critical section */
  fence_n();
  store(&level[me], 0);
  return NULL;
}

int main(void) {
  pthread_t th[NTHREADS];
  for (intptr_t i = 0; i < NTHREADS; i++)
    pthread_create(&th[i], NULL, thread, (void *)i);
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(th[i], NULL);
  return 0;
}
