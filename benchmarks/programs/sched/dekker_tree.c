// Dekker-Tsay style mutual exclusion for 3 threads: a tournament of Dekker's 2-thread locks
// (threads 0 and 1 meet at a leaf, its winner meets thread 2 at the root), one critical
// section each, nodes released root first. Release/acquire: not robust; -DROBUST: fenced
// (order.h: an SC fence between every two accesses of a thread to different locations).
#include <pthread.h>
#include <stdint.h>
#define NTHREADS 3
#include "order.h"

struct node {
  atomic_int flag[2], turn;
};
static struct node leaf, root;
atomic_int in_cs;

static void acquire(struct node *n, int me) {
  int other = 1 - me;
  fence_n();
  store(&n->flag[me], 1);
  fence();
  while (load(&n->flag[other])) {
    fence_n();
    if (load(&n->turn) != me) {
      fence_n();
      store(&n->flag[me], 0);
      fence();
      while (load(&n->turn) != me)
        ;
      fence_n();
      store(&n->flag[me], 1);
      fence();
    }
    fence_n();
  }
}

static void release(struct node *n, int me) {
  fence_n();
  store(&n->turn, 1 - me);
  fence_n();
  store(&n->flag[me], 0);
}

static void *thread(void *arg) {
  int me = (int)(intptr_t)arg;
  if (me < 2)
    acquire(&leaf, me);
  acquire(&root, me < 2 ? 0 : 1);
  fence_n();
  atomic_fetch_add_explicit(&in_cs, 1, memory_order_relaxed); /* critical section */
  release(&root, me < 2 ? 0 : 1);
  if (me < 2)
    release(&leaf, me);
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
