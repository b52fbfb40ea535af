/* The location table: address -> location state (algorithm.md §2), thread-safe.
 *
 * Locations are keyed by exact address (algorithm.md §6.6) and grouped by 4 KiB page: a
 * hash of buckets (each with a spin lock) holds page records, and a page record holds its
 * locations sorted by address. Retiring [p, p+n) (free, thread exit) visits only the pages
 * of the range, or every page record when the range has more pages than the table.
 *
 * Lock order: bucket -> location -> free list. The access path takes the bucket lock only to
 * find or create the record, drops it, then locks the location and re-checks that it is
 * still the live location of that address (a retire may have happened in between). Location
 * records are never returned to the system (type-stable memory): retired ones are recycled
 * through a free list, re-initialised under their own lock, so a stale pointer is harmless.
 */
#include <string.h>

#include "rsan_internal.h"

#define PAGE_SHIFT 12
#define NBUCKETS (1u << 15)

typedef struct page_ent {
  uintptr_t addr;
  rsan_loc *loc;
} page_ent;

typedef struct page_rec {
  uintptr_t pageno;
  struct page_rec *next;
  uint32_t n, cap;
  page_ent *ents; /* sorted by addr */
} page_rec;

typedef struct bucket {
  rsan_spin lock;
  page_rec *head;
} bucket;

static bucket buckets[NBUCKETS];
static uint64_t next_id = 1; /* id 0 is the SC-fence location F */
static uint64_t npages;      /* page records in the table */
static uint64_t nlive;       /* live locations */
static rsan_spin free_lock;
static rsan_loc *free_list;
static rsan_loc fence_loc; /* F: id 0, address 0, never retired */

static inline bucket *bucket_of(uintptr_t pageno) {
  uint64_t h = (uint64_t)pageno * 0x9E3779B97F4A7C15ull;
  return &buckets[h >> (64 - 15)];
}

static uint32_t page_lower_bound(const page_rec *pg, uintptr_t addr) {
  uint32_t lo = 0, hi = pg->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (pg->ents[mid].addr < addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void loc_clear_state(rsan_loc *l) {
  rsan_clk_release(&l->W);
  rsan_clk_release(&l->Wsc);
  rsan_clk_release(&l->Msc);
  l->stamp = l->stampU = 0;
  l->nocheck = 0;
  l->hist_next = 0;
  l->init_known = 0;
  l->init_value = 0;
  rsan_free(l->hist);
  l->hist = NULL;
  rsan_vc_free(&l->S);
}

/* A fresh location for addr: W = Wsc = Msc = ⊥ (the init write has timestamp 0). */
static rsan_loc *loc_new(uintptr_t addr) {
  rsan_loc *l = NULL;
  rsan_spin_lock(&free_lock);
  if (free_list) {
    l = free_list;
    free_list = l->free_next;
  }
  rsan_spin_unlock(&free_lock);
  if (!l) l = rsan_alloc(sizeof(*l));
  rsan_spin_lock(&l->lock);
  loc_clear_state(l);
  l->addr = addr;
  l->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
  l->free_next = NULL;
  l->retired = 0;
  rsan_spin_unlock(&l->lock);
  __atomic_fetch_add(&nlive, 1, __ATOMIC_RELAXED);
  return l;
}

rsan_loc *rsan_loc_acquire(uintptr_t addr) {
  uintptr_t pageno = addr >> PAGE_SHIFT;
  bucket *b = bucket_of(pageno);
  for (;;) {
    rsan_spin_lock(&b->lock);
    page_rec *pg = b->head;
    while (pg && pg->pageno != pageno) pg = pg->next;
    if (!pg) {
      pg = rsan_alloc(sizeof(*pg));
      pg->pageno = pageno;
      pg->next = b->head;
      b->head = pg;
      __atomic_fetch_add(&npages, 1, __ATOMIC_RELAXED);
    }
    uint32_t i = page_lower_bound(pg, addr);
    rsan_loc *l;
    if (i < pg->n && pg->ents[i].addr == addr) {
      l = pg->ents[i].loc;
    } else {
      l = loc_new(addr);
      if (pg->n == pg->cap) {
        pg->cap = pg->cap ? pg->cap * 2 : 4;
        pg->ents = rsan_realloc(pg->ents, (size_t)pg->cap * sizeof(page_ent));
      }
      memmove(&pg->ents[i + 1], &pg->ents[i], (size_t)(pg->n - i) * sizeof(page_ent));
      pg->ents[i].addr = addr;
      pg->ents[i].loc = l;
      pg->n++;
    }
    rsan_spin_unlock(&b->lock);
    rsan_spin_lock(&l->lock);
    if (RSAN_LIKELY(!l->retired && l->addr == addr)) return l;
    rsan_spin_unlock(&l->lock); /* retired (and maybe recycled) meanwhile: look again */
  }
}

void rsan_loc_release(rsan_loc *l) { rsan_spin_unlock(&l->lock); }

rsan_loc *rsan_loc_fence(void) { return &fence_loc; }

uint64_t rsan_loc_count(void) { return __atomic_load_n(&nlive, __ATOMIC_RELAXED); }

uint64_t rsan_loc_peek_id(uintptr_t addr) {
  uintptr_t pageno = addr >> PAGE_SHIFT;
  bucket *b = bucket_of(pageno);
  uint64_t id = 0;
  rsan_spin_lock(&b->lock);
  for (page_rec *pg = b->head; pg; pg = pg->next) {
    if (pg->pageno != pageno) continue;
    uint32_t i = page_lower_bound(pg, addr);
    if (i < pg->n && pg->ents[i].addr == addr) id = pg->ents[i].loc->id;
  }
  rsan_spin_unlock(&b->lock);
  return id;
}

/* Retires the locations of page record pg (bucket b locked) in [lo, hi); frees pg when it
 * becomes empty. Returns 1 when pg was freed. */
static int page_retire(bucket *b, page_rec *pg, uintptr_t lo, uintptr_t hi) {
  uint32_t i = page_lower_bound(pg, lo), j = i;
  while (j < pg->n && pg->ents[j].addr < hi) {
    rsan_loc *l = pg->ents[j].loc;
    rsan_spin_lock(&l->lock);
    l->retired = 1;
    loc_clear_state(l);
    rsan_spin_unlock(&l->lock);
    rsan_spin_lock(&free_lock);
    l->free_next = free_list;
    free_list = l;
    rsan_spin_unlock(&free_lock);
    __atomic_fetch_sub(&nlive, 1, __ATOMIC_RELAXED);
    j++;
  }
  if (j > i) {
    memmove(&pg->ents[i], &pg->ents[j], (size_t)(pg->n - j) * sizeof(page_ent));
    pg->n -= j - i;
  }
  if (pg->n) return 0;
  page_rec **pp = &b->head;
  while (*pp != pg) pp = &(*pp)->next;
  *pp = pg->next;
  rsan_free(pg->ents);
  rsan_free(pg);
  __atomic_fetch_sub(&npages, 1, __ATOMIC_RELAXED);
  return 1;
}

void rsan_memory_retire(const void *p, size_t n) {
  uintptr_t lo = (uintptr_t)p, hi = lo + n;
  if (n == 0 || hi < lo) return;
  rsan_shadow_reset(lo, n); /* reuse is not a race (algorithm.md §5, architecture.md) */
  uintptr_t first = lo >> PAGE_SHIFT, last = (hi - 1) >> PAGE_SHIFT;
  uint64_t span = (uint64_t)(last - first) + 1;
  if (span > __atomic_load_n(&npages, __ATOMIC_RELAXED) + NBUCKETS / 64) {
    /* huge range: cheaper to visit every page record */
    for (uint32_t k = 0; k < NBUCKETS; k++) {
      bucket *b = &buckets[k];
      if (!__atomic_load_n(&b->head, __ATOMIC_RELAXED)) continue;
      rsan_spin_lock(&b->lock);
      page_rec *pg = b->head;
      while (pg) {
        page_rec *next = pg->next;
        if (pg->pageno >= first && pg->pageno <= last) page_retire(b, pg, lo, hi);
        pg = next;
      }
      rsan_spin_unlock(&b->lock);
    }
    return;
  }
  for (uintptr_t pn = first;; pn++) {
    bucket *b = bucket_of(pn);
    if (__atomic_load_n(&b->head, __ATOMIC_RELAXED)) {
      rsan_spin_lock(&b->lock);
      page_rec *pg = b->head;
      while (pg && pg->pageno != pn) pg = pg->next;
      if (pg) page_retire(b, pg, lo, hi);
      rsan_spin_unlock(&b->lock);
    }
    if (pn == last) break;
  }
}

void rsan_loc_reset_all(void) {
  for (uint32_t k = 0; k < NBUCKETS; k++) {
    bucket *b = &buckets[k];
    page_rec *pg = b->head;
    while (pg) {
      page_rec *next = pg->next;
      for (uint32_t i = 0; i < pg->n; i++) {
        loc_clear_state(pg->ents[i].loc);
        rsan_free(pg->ents[i].loc);
      }
      rsan_free(pg->ents);
      rsan_free(pg);
      pg = next;
    }
    b->head = NULL;
  }
  while (free_list) {
    rsan_loc *l = free_list;
    free_list = l->free_next;
    rsan_free(l);
  }
  loc_clear_state(&fence_loc);
  npages = 0;
  nlive = 0;
  next_id = 1;
}

/* fork (rsan_fork.h): every lock of the table in the table's order — buckets, then the
 * locations of each bucket's pages, then the free list and its (retired) locations, then F —
 * so that the child never inherits a lock held by a thread that does not exist there. */
void rsan_loc_fork_lock(void) {
  for (uint32_t k = 0; k < NBUCKETS; k++) rsan_spin_lock(&buckets[k].lock);
  for (uint32_t k = 0; k < NBUCKETS; k++)
    for (page_rec *pg = buckets[k].head; pg; pg = pg->next)
      for (uint32_t i = 0; i < pg->n; i++) rsan_spin_lock(&pg->ents[i].loc->lock);
  rsan_spin_lock(&free_lock);
  for (rsan_loc *l = free_list; l; l = l->free_next) rsan_spin_lock(&l->lock);
  rsan_spin_lock(&fence_loc.lock);
}
void rsan_loc_fork_unlock(void) {
  rsan_spin_unlock(&fence_loc.lock);
  for (rsan_loc *l = free_list; l; l = l->free_next) rsan_spin_unlock(&l->lock);
  rsan_spin_unlock(&free_lock);
  for (uint32_t k = 0; k < NBUCKETS; k++)
    for (page_rec *pg = buckets[k].head; pg; pg = pg->next)
      for (uint32_t i = 0; i < pg->n; i++) rsan_spin_unlock(&pg->ents[i].loc->lock);
  for (uint32_t k = 0; k < NBUCKETS; k++) rsan_spin_unlock(&buckets[k].lock);
}
