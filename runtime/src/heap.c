/* Live heap blocks (malloc, calloc, realloc, aligned allocations seen by intercept_malloc.c),
 * so that a report can name its object: "heap block of size N at 0x.. allocated by thread T at
 * <frame>". Each block is one node on two chains (each bucket under one of NSTRIPES spin locks, so
 * that fork's prepare handler takes few locks and its child writes few pages):
 *  - by its start address, for free() and a new block at the same start;
 *  - by (level, region) for the containing-block search of a report. A block's level k is the
 *    smallest with size <= 2^(REGION0 + 4k); its region is start >> (REGION0 + 4k). Such a block
 *    ends before region + 2, so a block containing addr is at some level k in addr's region or
 *    the one before; and blocks of level k >= 1 are larger than 2^(REGION0 + 4k - 4), so at most
 *    16 of them start in one region (at level 0, malloc's 16-byte minimum gives the same bound).
 *    A search probes 2 regions per level in use: O(log size), not O(blocks). */
#include <string.h>

#include "rsan_internal.h"

#define NBUCKETS 65536
#define NSTRIPES 1024
#define REGION0 8 /* level 0: regions of 256 bytes */
#define NLEVELS 15 /* 8 + 4 * 14 = 64: every size has a level */

typedef struct node {
  rsan_block_info b;
  struct node *next;  /* start chain */
  struct node *rnext; /* region chain */
  int level;
} node;

typedef struct table {
  rsan_spin lock[NSTRIPES];
  node *head[NBUCKETS];
} table;

static table by_start, by_region;
static int max_level; /* highest level ever used: the search's bound */
static rsan_spin free_lock;
static node *free_nodes;

static inline uint32_t hash(uint64_t x) { return (uint32_t)((x * 0x9E3779B97F4A7C15ull) >> 48); }
static inline uint32_t start_bucket(uintptr_t p) { return hash(p >> 4); }
static inline int region_shift(int level) { return REGION0 + 4 * level; }
static inline uint64_t region_of(uintptr_t p, int level) {
  int s = region_shift(level);
  return s >= 64 ? 0 : (uint64_t)p >> s;
}
static inline uint32_t region_bucket(uint64_t region, int level) {
  return hash(region * NLEVELS + (uint64_t)level + 1);
}
static inline rsan_spin *lock_of(table *t, uint32_t k) { return &t->lock[k % NSTRIPES]; }
static int level_of(uint64_t size) {
  int k = 0;
  while (k < NLEVELS - 1 && region_shift(k) < 64 && size > (1ull << region_shift(k))) k++;
  return k;
}

static void node_free(node *n) {
  rsan_spin_lock(&free_lock);
  n->next = free_nodes;
  free_nodes = n;
  rsan_spin_unlock(&free_lock);
}

/* unlinks the block that starts at p from both chains (one at a time: no lock is held while
 * another is taken), then recycles its node; a search holding the region chain's lock reads
 * the node before it is unlinked from that chain, so never a recycled one */
static void forget(uintptr_t p) {
  uint32_t b = start_bucket(p);
  node *found = NULL;
  rsan_spin_lock(lock_of(&by_start, b));
  for (node **pp = &by_start.head[b]; *pp; pp = &(*pp)->next)
    if ((*pp)->b.addr == p) {
      found = *pp;
      *pp = found->next;
      break;
    }
  rsan_spin_unlock(lock_of(&by_start, b));
  if (!found) return;
  uint32_t r = region_bucket(region_of(p, found->level), found->level);
  rsan_spin_lock(lock_of(&by_region, r));
  for (node **pp = &by_region.head[r]; *pp; pp = &(*pp)->rnext)
    if (*pp == found) {
      *pp = found->rnext;
      break;
    }
  rsan_spin_unlock(lock_of(&by_region, r));
  node_free(found);
}

/* rsan_sync.h. Never initialises the runtime nor registers a thread (malloc runs inside
 * libc's own start-up and in new threads before they are known). */
void rsan_heap_alloc(const void *p, size_t n) {
  /* robustness reports name heap locations by their block too (report.c rsan_heap_name) */
  if (!p || !__atomic_load_n(&rsan_inited, __ATOMIC_ACQUIRE) ||
      (!rsan_flag.report_races && !rsan_flag.report_robustness))
    return;
  forget((uintptr_t)p); /* a block the program freed without free() (e.g. a realloc in place) */
  node *nd = NULL;
  rsan_spin_lock(&free_lock);
  if (free_nodes) {
    nd = free_nodes;
    free_nodes = nd->next;
  }
  rsan_spin_unlock(&free_lock);
  if (!nd) nd = rsan_alloc(sizeof *nd);
  memset(nd, 0, sizeof *nd);
  nd->b.addr = (uintptr_t)p;
  nd->b.size = n;
  nd->level = level_of(n);
  rsan_thread *t = rsan_thread_peek_current();
  nd->b.tid = t ? t->tid : -1;
  if (t) {
    /* the interceptor's frame is above this one: entries at or below it are stale */
    uint32_t k = rsan_thread_stack(t, (uintptr_t)__builtin_frame_address(0), nd->b.stack, 4);
    nd->b.site = k ? nd->b.stack[0] : 0;
  }
  int level = __atomic_load_n(&max_level, __ATOMIC_RELAXED);
  while (nd->level > level &&
         !__atomic_compare_exchange_n(&max_level, &level, nd->level, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  uint32_t r = region_bucket(region_of(nd->b.addr, nd->level), nd->level);
  rsan_spin_lock(lock_of(&by_region, r));
  nd->rnext = by_region.head[r];
  by_region.head[r] = nd;
  rsan_spin_unlock(lock_of(&by_region, r));
  uint32_t b = start_bucket(nd->b.addr);
  rsan_spin_lock(lock_of(&by_start, b));
  nd->next = by_start.head[b];
  by_start.head[b] = nd;
  rsan_spin_unlock(lock_of(&by_start, b));
}

void rsan_heap_free(const void *p) {
  if (p && __atomic_load_n(&rsan_inited, __ATOMIC_ACQUIRE)) forget((uintptr_t)p);
}

static int find_in(uintptr_t addr, uint64_t region, int level, rsan_block_info *out) {
  uint32_t r = region_bucket(region, level);
  if (!__atomic_load_n(&by_region.head[r], __ATOMIC_RELAXED)) return 0;
  int found = 0;
  rsan_spin_lock(lock_of(&by_region, r));
  for (node *n = by_region.head[r]; n; n = n->rnext)
    if (n->level == level && addr >= n->b.addr && addr - n->b.addr < (n->b.size ? n->b.size : 1)) {
      *out = n->b;
      found = 1;
      break;
    }
  rsan_spin_unlock(lock_of(&by_region, r));
  return found;
}

int rsan_heap_find(uintptr_t addr, rsan_block_info *out) {
  int top = __atomic_load_n(&max_level, __ATOMIC_RELAXED);
  for (int k = 0; k <= top; k++) {
    uint64_t region = region_of(addr, k);
    if (find_in(addr, region, k, out) || (region && find_in(addr, region - 1, k, out))) return 1;
  }
  return 0;
}

void rsan_heap_reset_all(void) {
  for (uint32_t k = 0; k < NBUCKETS; k++) {
    node *n = by_start.head[k];
    by_start.head[k] = NULL;
    by_region.head[k] = NULL;
    while (n) {
      node *next = n->next;
      rsan_free(n);
      n = next;
    }
  }
  max_level = 0;
  while (free_nodes) {
    node *n = free_nodes;
    free_nodes = n->next;
    rsan_free(n);
  }
}

/* fork (rsan_fork.h): the start chains' locks in index order, the region chains', then the
 * free list's */
void rsan_heap_fork_lock(void) {
  for (uint32_t k = 0; k < NSTRIPES; k++) rsan_spin_lock(&by_start.lock[k]);
  for (uint32_t k = 0; k < NSTRIPES; k++) rsan_spin_lock(&by_region.lock[k]);
  rsan_spin_lock(&free_lock);
}
void rsan_heap_fork_unlock(void) {
  rsan_spin_unlock(&free_lock);
  for (uint32_t k = 0; k < NSTRIPES; k++) rsan_spin_unlock(&by_region.lock[k]);
  for (uint32_t k = 0; k < NSTRIPES; k++) rsan_spin_unlock(&by_start.lock[k]);
}
