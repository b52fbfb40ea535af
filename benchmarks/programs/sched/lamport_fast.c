// Lamport's fast mutual exclusion (1987) for NTHREADS threads (ids 1..N), one critical
// section each. Release/acquire: not robust; -DROBUST: fenced (order.h: with 3+ threads an SC
// fence between every two accesses of a thread to different locations).
#include <pthread.h>
#include <stdint.h>
#include "order.h"
#ifndef NTHREADS
#define NTHREADS 2
#endif

atomic_int b[NTHREADS + 1], x, y, in_cs;

static void *thread(void *arg) {
  int i = (int)(intptr_t)arg;
  for (;;) {
    fence_n();
    store(&b[i], 1);
    fence_n();
    store(&x, i);
    fence();
    if (load(&y) != 0) {
      fence_n();
      store(&b[i], 0);
      fence();
      while (load(&y) != 0)
        ;
      continue;
    }
    store(&y, i);
    fence();
    if (load(&x) != i) {
      fence_n();
      store(&b[i], 0);
      fence();
      for (int j = 1; j <= NTHREADS; j++)
        while ((fence_n(), load(&b[j])) != 0)
          ;
      if ((fence_n(), load(&y)) != i) {
        while (load(&y) != 0)
          ;
        continue;
      }
    }
    break;
  }
  fence_n();
  atomic_fetch_add_explicit(&in_cs, 1, memory_order_relaxed); /* critical section */
  fence_n();
  store(&y, 0);
  fence_n();
  store(&b[i], 0);
  return NULL;
}

int main(void) {
  pthread_t th[NTHREADS];
  for (intptr_t i = 0; i < NTHREADS; i++)
    pthread_create(&th[i], NULL, thread, (void *)(i + 1));
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(th[i], NULL);
  return 0;
}
