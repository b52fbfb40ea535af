/* Live heap blocks (malloc, calloc, realloc, aligned allocations seen by intercept_malloc.c),
 * so that a race report can name its object: "heap block of size N at 0x.. allocated by
 * thread T at <frame>". A chained hash table keyed by the block's start, one spin lock per
 * bucket; the containing-block search of a report scans every bucket (reports are rare). */
#include <string.h>

#include "rsan_internal.h"

#define NBUCKETS 4096

typedef struct node {
  rsan_block_info b;
  struct node *next;
} node;

static struct {
  rsan_spin lock;
  node *head;
} buckets[NBUCKETS];
static rsan_spin free_lock;
static node *free_nodes;

static inline uint32_t bucket_of(uintptr_t p) {
  return (uint32_t)(((p >> 4) * 0x9E3779B97F4A7C15ull) >> 52) % NBUCKETS;
}

static void node_free(node *n) {
  rsan_spin_lock(&free_lock);
  n->next = free_nodes;
  free_nodes = n;
  rsan_spin_unlock(&free_lock);
}

static void forget(uintptr_t p) {
  uint32_t k = bucket_of(p);
  rsan_spin_lock(&buckets[k].lock);
  node **pp = &buckets[k].head, *found = NULL;
  for (; *pp; pp = &(*pp)->next)
    if ((*pp)->b.addr == p) {
      found = *pp;
      *pp = found->next;
      break;
    }
  rsan_spin_unlock(&buckets[k].lock);
  if (found) node_free(found);
}

/* rsan_sync.h. Never initialises the runtime nor registers a thread (malloc runs inside
 * libc's own start-up and in new threads before they are known). */
void rsan_heap_alloc(const void *p, size_t n) {
  if (!p || !__atomic_load_n(&rsan_inited, __ATOMIC_ACQUIRE) || !rsan_flag.report_races) return;
  forget((uintptr_t)p); /* a block the program freed without free() (e.g. a realloc in place) */
  node *nd = NULL;
  rsan_spin_lock(&free_lock);
  if (free_nodes) {
    nd = free_nodes;
    free_nodes = nd->next;
  }
  rsan_spin_unlock(&free_lock);
  if (!nd) nd = rsan_alloc(sizeof *nd);
  memset(&nd->b, 0, sizeof nd->b);
  nd->b.addr = (uintptr_t)p;
  nd->b.size = n;
  rsan_thread *t = rsan_thread_peek_current();
  nd->b.tid = t ? t->tid : -1;
  if (t) {
    /* the interceptor's frame is above this one: entries at or below it are stale */
    uint32_t k = rsan_thread_stack(t, (uintptr_t)__builtin_frame_address(0), nd->b.stack, 4);
    nd->b.site = k ? nd->b.stack[0] : 0;
  }
  uint32_t k = bucket_of((uintptr_t)p);
  rsan_spin_lock(&buckets[k].lock);
  nd->next = buckets[k].head;
  buckets[k].head = nd;
  rsan_spin_unlock(&buckets[k].lock);
}

void rsan_heap_free(const void *p) {
  if (p && __atomic_load_n(&rsan_inited, __ATOMIC_ACQUIRE)) forget((uintptr_t)p);
}

int rsan_heap_find(uintptr_t addr, rsan_block_info *out) {
  for (uint32_t k = 0; k < NBUCKETS; k++) {
    if (!__atomic_load_n(&buckets[k].head, __ATOMIC_RELAXED)) continue;
    int found = 0;
    rsan_spin_lock(&buckets[k].lock);
    for (node *n = buckets[k].head; n; n = n->next)
      if (addr >= n->b.addr && addr - n->b.addr < (n->b.size ? n->b.size : 1)) {
        *out = n->b;
        found = 1;
        break;
      }
    rsan_spin_unlock(&buckets[k].lock);
    if (found) return 1;
  }
  return 0;
}

void rsan_heap_reset_all(void) {
  for (uint32_t k = 0; k < NBUCKETS; k++) {
    node *n = buckets[k].head;
    buckets[k].head = NULL;
    while (n) {
      node *next = n->next;
      rsan_free(n);
      n = next;
    }
  }
  while (free_nodes) {
    node *n = free_nodes;
    free_nodes = n->next;
    rsan_free(n);
  }
}

/* fork (rsan_fork.h): bucket locks in index order, then the free list's */
void rsan_heap_fork_lock(void) {
  for (uint32_t k = 0; k < NBUCKETS; k++) rsan_spin_lock(&buckets[k].lock);
  rsan_spin_lock(&free_lock);
}
void rsan_heap_fork_unlock(void) {
  rsan_spin_unlock(&free_lock);
  for (uint32_t k = 0; k < NBUCKETS; k++) rsan_spin_unlock(&buckets[k].lock);
}
