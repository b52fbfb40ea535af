/* Page flags of a small-object allocator: several threads set and clear owner bits of a
 * page's flag word with compare-exchange retry loops, and count their operations in a
 * relaxed per-page counter. With PAGE_TRACE the retry loop also records its last observed
 * flags in a shared trace word (an effect of every attempt, stale or not). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define NPAGES 2
#define ROUNDS 40

typedef struct page {
  _Atomic(uintptr_t) flags;
  _Atomic(uintptr_t) ops;
#ifdef PAGE_TRACE
  _Atomic(uintptr_t) seen;
#endif
} page_t;

static page_t pages[NPAGES];

static inline void page_flags_update(page_t *pg, uintptr_t set, uintptr_t clear) {
  uintptr_t old = atomic_load_explicit(&pg->flags, memory_order_relaxed);
  uintptr_t desired;
  do {
#ifdef PAGE_TRACE
    atomic_store_explicit(&pg->seen, old, memory_order_relaxed);
#endif
    desired = (old & ~clear) | set;
  } while (!atomic_compare_exchange_weak_explicit(&pg->flags, &old, desired, memory_order_release,
                                                  memory_order_relaxed));
}

static void *worker(void *arg) {
  uintptr_t bit = (uintptr_t)1 << (uintptr_t)arg;
  for (int i = 0; i < ROUNDS; i++) {
    page_t *pg = &pages[i % NPAGES];
    page_flags_update(pg, bit, 0);
    atomic_fetch_add_explicit(&pg->ops, 1, memory_order_relaxed);
    page_flags_update(pg, 0, bit);
  }
  return NULL;
}

int main(void) {
  pthread_t t[3];
  for (uintptr_t k = 0; k < 3; k++) pthread_create(&t[k], NULL, worker, (void *)k);
  for (int k = 0; k < 3; k++) pthread_join(t[k], NULL);
  uintptr_t total = 0;
  for (int p = 0; p < NPAGES; p++) total += atomic_load(&pages[p].ops) + atomic_load(&pages[p].flags);
  printf("ops %lu\n", (unsigned long)total);
  return total == 3 * ROUNDS ? 0 : 1;
}
