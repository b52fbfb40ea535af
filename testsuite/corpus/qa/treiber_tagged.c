// robust: no
// race: no
// reason: Treiber stack over a fixed node pool, top = (tag << 32 | index) in one 64-bit word so that ABA fails the CAS; push writes next (relaxed atomic: a popper may read it while another thread re-pushes the node) and publishes with a release CAS, pop reads top acquire, next relaxed, and claims with an acquire CAS. Race-free: a successful pop synchronises with the push it read (CASes continue the release sequence), so the payload is hb-ordered. Not robust (and correct): a popper that reads a node's next from a re-push by T2 (relaxed, no synchronisation) may then fail its CAS reading a top older than T2's pop that preceded that re-push (cycle: fr to T2's pop CAS, po to T2's store of next, rf to the popper's read of next, po to the popper's CAS); the failure only makes the loop retry, but the retry reads next again, so it is not a CAS-only retry (docs/reports.md §2)
// Treiber stack with tagged indices: three threads each pop a node, bump its payload and push it back.
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define NODES 4
#define NIL 0xffffffffu
#define ROUNDS 3

struct node {
  int payload;
  atomic_uint next;
};

static struct node pool[NODES];
static _Atomic uint64_t top;

static uint32_t idx_of(uint64_t t) { return (uint32_t)t; }
static uint64_t make(uint32_t tag, uint32_t idx) { return ((uint64_t)tag << 32) | idx; }

static void push(uint32_t i) {
  uint64_t old = atomic_load_explicit(&top, memory_order_relaxed);
  for (;;) {
    atomic_store_explicit(&pool[i].next, idx_of(old), memory_order_relaxed);
    uint64_t new = make((uint32_t)(old >> 32) + 1, i);
    if (atomic_compare_exchange_weak_explicit(&top, &old, new, memory_order_release, memory_order_relaxed)) return; // pyrsan: stale
  }
}

static uint32_t pop(void) {
  uint64_t old = atomic_load_explicit(&top, memory_order_acquire);
  for (;;) {
    uint32_t i = idx_of(old);
    if (i == NIL) return NIL;
    uint32_t next = atomic_load_explicit(&pool[i].next, memory_order_relaxed);
    uint64_t new = make((uint32_t)(old >> 32) + 1, next);
    if (atomic_compare_exchange_weak_explicit(&top, &old, new, memory_order_acquire, memory_order_acquire)) return i; // pyrsan: violation, pyrsan: stale
  }
}

static void *worker(void *arg) {
  (void)arg;
  for (int r = 0; r < ROUNDS; r++) {
    uint32_t i = pop();
    if (i == NIL) continue;
    pool[i].payload++;
    push(i);
  }
  return NULL;
}

int main(void) {
  atomic_store(&top, make(0, NIL));
  for (uint32_t i = 0; i < 2; i++) push(i);
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, worker, NULL);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  int sum = 0;
  for (int i = 0; i < NODES; i++) sum += pool[i].payload;
  printf("sum=%d\n", sum);
  return 0;
}
