// Lamport's bakery algorithm (1974) for NTHREADS threads, one critical section each.
// Release/acquire: not robust; -DROBUST: fenced (order.h: with 3+ threads an SC fence between
// every two accesses of a thread to different locations; with 2, one after each store of the
// doorway, which orders it before the reads of the other thread's ticket).
#include <pthread.h>
#include <stdint.h>
#include "order.h"
#ifndef NTHREADS
#define NTHREADS 2
#endif

atomic_int choosing[NTHREADS], number[NTHREADS], in_cs;

/* whether thread j, with ticket nj, goes before thread i with ticket ni */
static int before(int nj, int j, int ni, int i) {
  return nj != 0 && (nj < ni || (nj == ni && j < i));
}

static void *thread(void *arg) {
  int i = (int)(intptr_t)arg, mine = 0;
  fence_n();
  store(&choosing[i], 1);
  fence();
  for (int j = 0; j < NTHREADS; j++) {
    fence_n();
    int nj = load(&number[j]);
    if (nj > mine)
      mine = nj;
  }
  mine += 1;
  fence_n();
  store(&number[i], mine);
  fence();
  store(&choosing[i], 0);
  fence();
  for (int j = 0; j < NTHREADS; j++) {
    if (j == i)
      continue;
    fence_n();
    while (load(&choosing[j]))
      ;
    fence_n();
    while (before(load(&number[j]), j, mine, i))
      ;
  }
  fence_n();
  atomic_fetch_add_explicit(&in_cs, 1, memory_order_relaxed); /* critical section */
  fence_n();
  store(&number[i], 0);
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
