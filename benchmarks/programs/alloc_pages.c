/* An allocator-like stress test (issue 19's measurements): per-thread heaps own pages of
 * fixed-size blocks; a block freed by another thread goes to its page's thread-free list
 * (a lock-free push), the owner collects that list; page flags and a delayed-free state are
 * updated with compare-exchange retry loops; an abandoned page is adopted by a reclaiming
 * thread, which sets the page's heap and then the flag "heap set" (release), while a freeing
 * thread marks the page with a CAS that is release on success and relaxed on failure and then
 * reads the page's heap (the race a maintainer must see); statistics are relaxed counters.
 *
 * usage: alloc_pages [ROUNDS]  (prints "ok ..." and exits 0 when the counts add up) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define NPAGES 4

#define PAGE_IN_FULL 1u
#define PAGE_HAS_FREE 2u
#define PAGE_HEAP_SET 4u
#define PAGE_FREEING 8u

#define DELAY_NONE 0u
#define DELAY_USE 1u
#define DELAY_NEVER 2u

typedef struct block {
  struct block *next;
  uintptr_t owner;
} block_t;

struct heap;

typedef struct page {
  _Atomic(uintptr_t) flags;
  _Atomic(uintptr_t) delayed;          /* low bits: state, high bits: use count */
  _Atomic(block_t *) thread_free;      /* blocks freed by other threads */
  _Atomic(struct heap *) heap;
  _Atomic(uint32_t) used;
} page_t;

typedef struct heap {
  int id;
  _Atomic(uint64_t) frees, remote_frees, collected;
} heap_t;

static page_t *pages;
static heap_t heaps[NTHREADS];
static _Atomic(uint64_t) stat_pages_adopted;
static _Atomic(int) leaked;

/* ---- page flags: retry loops that compute the new word from the old one ---- */
static inline void page_flags_set(page_t *pg, uintptr_t set, uintptr_t clear) {
  uintptr_t old = atomic_load_explicit(&pg->flags, memory_order_relaxed);
  uintptr_t desired;
  do {
    desired = (old & ~clear) | set;
  } while (!atomic_compare_exchange_weak_explicit(&pg->flags, &old, desired, memory_order_release,
                                                  memory_order_relaxed));
}

/* ---- delayed-free state: the use count moves only while the state allows it ---- */
static inline void page_delay_enter(page_t *pg) {
  uintptr_t old = atomic_load_explicit(&pg->delayed, memory_order_relaxed);
  uintptr_t desired;
  do {
    if ((old & 3u) == DELAY_NEVER) desired = old;
    else desired = ((old >> 2) + 1) << 2 | DELAY_USE;
  } while (!atomic_compare_exchange_weak_explicit(&pg->delayed, &old, desired, memory_order_acq_rel,
                                                  memory_order_relaxed));
}

static inline void page_delay_leave(page_t *pg) {
  uintptr_t old = atomic_load_explicit(&pg->delayed, memory_order_relaxed);
  uintptr_t desired;
  do {
    uintptr_t uses = old >> 2;
    desired = uses > 1 ? (uses - 1) << 2 | (old & 3u) : DELAY_NONE;
  } while (!atomic_compare_exchange_weak_explicit(&pg->delayed, &old, desired, memory_order_release,
                                                  memory_order_relaxed));
}

/* ---- a block freed by a thread that does not own its page ---- */
static void page_free_remote(page_t *pg, block_t *b) {
  page_delay_enter(pg);
  block_t *head = atomic_load_explicit(&pg->thread_free, memory_order_relaxed);
  do {
    b->next = head;
  } while (!atomic_compare_exchange_weak_explicit(&pg->thread_free, &head, b, memory_order_release,
                                                  memory_order_relaxed));
  page_flags_set(pg, PAGE_HAS_FREE, 0);
  page_delay_leave(pg);
}

/* ---- the owner takes back what other threads freed ---- */
static uint64_t page_collect(page_t *pg) {
  block_t *list = atomic_exchange_explicit(&pg->thread_free, NULL, memory_order_acquire);
  uint64_t n = 0;
  while (list) {
    block_t *next = list->next;
    free(list);
    list = next;
    n++;
  }
  if (n) page_flags_set(pg, 0, PAGE_HAS_FREE);
  return n;
}

/* ---- abandoned pages: adopted by a reclaiming thread, freed into by others ---- */
static void page_adopt(page_t *pg, heap_t *h) {
  atomic_store_explicit(&pg->heap, h, memory_order_relaxed);
  page_flags_set(pg, PAGE_HEAP_SET, 0);
  atomic_fetch_add_explicit(&stat_pages_adopted, 1, memory_order_relaxed);
}

static void page_free_abandoned(page_t *pg) {
  uintptr_t expected = atomic_load_explicit(&pg->flags, memory_order_relaxed) | PAGE_HEAP_SET;
  if (!atomic_compare_exchange_strong_explicit(&pg->flags, &expected, expected | PAGE_FREEING,
                                               memory_order_release, memory_order_relaxed))
    return;
  heap_t *h = atomic_load_explicit(&pg->heap, memory_order_relaxed);
  if (!h) atomic_store_explicit(&leaked, 1, memory_order_relaxed);
  else atomic_fetch_add_explicit(&h->frees, 1, memory_order_relaxed);
}

static int rounds = 20;

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  heap_t *self = &heaps[id];
  for (int r = 0; r < rounds; r++) {
    page_t *own = &pages[id % NPAGES];
    page_t *other = &pages[(id + 1 + r) % NPAGES];
    atomic_fetch_add_explicit(&own->used, 1, memory_order_relaxed);
    page_flags_set(own, PAGE_IN_FULL, 0);
    block_t *b = malloc(sizeof *b);
    b->owner = (uintptr_t)id;
    page_free_remote(other, b);
    atomic_fetch_add_explicit(&self->remote_frees, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&self->collected, page_collect(own), memory_order_relaxed);
    page_flags_set(own, 0, PAGE_IN_FULL);
    if (r == rounds / 2) {
      if (id == 0) page_adopt(&pages[NPAGES - 1], self);
      else page_free_abandoned(&pages[NPAGES - 1]);
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) rounds = atoi(argv[1]);
  pages = calloc(NPAGES, sizeof *pages);
  pthread_t t[NTHREADS];
  for (int k = 0; k < NTHREADS; k++) {
    heaps[k].id = k;
    pthread_create(&t[k], NULL, worker, (void *)(intptr_t)k);
  }
  for (int k = 0; k < NTHREADS; k++) pthread_join(t[k], NULL);
  uint64_t remote = 0;
  for (int k = 0; k < NTHREADS; k++) remote += atomic_load(&heaps[k].remote_frees);
  for (int p = 0; p < NPAGES; p++) page_collect(&pages[p]);
  free(pages);
  if (remote != (uint64_t)NTHREADS * (uint64_t)rounds) return 1;
  printf("ok remote frees %llu leaked %d\n", (unsigned long long)remote, atomic_load(&leaked));
  return 0;
}
