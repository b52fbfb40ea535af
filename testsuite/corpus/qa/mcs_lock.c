// robust: yes
// race: no
// reason: MCS queue lock: the tail exchange (acq_rel) and the successor's release store of locked=0 / acquire spin order the critical sections; a stale read of node->next in unlock only sends the owner to the CAS on tail, which fails (an RMW reads the latest tail) and then waits for the link
// MCS queue lock (per-thread queue nodes) protecting a plain counter, two threads, two acquisitions each.
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

struct mcs_node {
  _Atomic(struct mcs_node *) next;
  atomic_bool locked;
};
static _Atomic(struct mcs_node *) tail;
static long counter;

static void mcs_lock(struct mcs_node *me) {
  atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
  atomic_store_explicit(&me->locked, true, memory_order_relaxed);
  struct mcs_node *prev = atomic_exchange_explicit(&tail, me, memory_order_acq_rel);
  if (prev) {
    atomic_store_explicit(&prev->next, me, memory_order_release);
    while (atomic_load_explicit(&me->locked, memory_order_acquire))
      ;
  }
}

static void mcs_unlock(struct mcs_node *me) {
  struct mcs_node *next = atomic_load_explicit(&me->next, memory_order_acquire);
  if (!next) {
    struct mcs_node *expected = me;
    if (atomic_compare_exchange_strong_explicit(&tail, &expected, NULL, memory_order_release,
                                                memory_order_relaxed))
      return;
    while (!(next = atomic_load_explicit(&me->next, memory_order_acquire)))
      ;
  }
  atomic_store_explicit(&next->locked, false, memory_order_release);
}

static void *work(void *arg) {
  (void)arg;
  struct mcs_node node;
  for (int i = 0; i < 2; i++) {
    mcs_lock(&node);
    counter++;
    mcs_unlock(&node);
  }
  return NULL;
}

int main(void) {
  pthread_t th[3];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, work, NULL);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  printf("%ld\n", counter);
  return counter == 4 ? 0 : 1;
}
