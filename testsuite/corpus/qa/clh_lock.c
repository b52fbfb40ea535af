// robust: yes
// race: no
// reason: CLH lock: the tail exchange (acq_rel) hands each thread its predecessor's node, whose release store of locked=0 the successor's acquire spin reads; a stale read of locked=1 only spins; nodes are recycled (the predecessor's node becomes the thread's next one) only after the hand-off
// CLH queue lock with node recycling, two threads, three acquisitions each, plain counter.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct clh_node {
  atomic_int locked;
};
static _Atomic(struct clh_node *) tail;
static long counter;

static struct clh_node *clh_lock(struct clh_node *me) {
  atomic_store_explicit(&me->locked, 1, memory_order_relaxed);
  struct clh_node *pred = atomic_exchange_explicit(&tail, me, memory_order_acq_rel);
  while (atomic_load_explicit(&pred->locked, memory_order_acquire))
    ;
  return pred; /* the thread's node for next time */
}

static void clh_unlock(struct clh_node *me) { atomic_store_explicit(&me->locked, 0, memory_order_release); }

static void *work(void *arg) {
  struct clh_node *mine = arg;
  for (int i = 0; i < 3; i++) {
    struct clh_node *pred = clh_lock(mine);
    counter++;
    clh_unlock(mine);
    mine = pred;
  }
  return NULL;
}

int main(void) {
  static struct clh_node dummy, n1, n2;
  atomic_init(&dummy.locked, 0);
  atomic_store(&tail, &dummy);
  pthread_t a, b;
  pthread_create(&a, NULL, work, &n1);
  pthread_create(&b, NULL, work, &n2);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%ld\n", counter);
  return counter == 6 ? 0 : 1;
}
