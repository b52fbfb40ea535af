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
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    if (pg->ents[mid].addr < addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* A retired record keeps its clock memory for its next location (type-stable records):
 * clearing is O(1) for the clocks and the facts, O(slots) for the evicted table. */
static void loc_clear_state(rsan_loc *l) {
  rsan_clk_clear(&l->W);
  rsan_clk_clear(&l->Wsc);
  rsan_clk_clear(&l->Msc);
  l->nfacts = l->fold = 0;
  l->grow = 0;
  if (l->facts != l->facts_inline) rsan_free(l->facts); /* a grown window goes with x */
  l->facts = l->facts_inline;
  l->fcap = RSAN_FACTS;
  if (l->ev) memset(l->ev, 0, l->evn * sizeof(rsan_evicted));
  l->dropts = l->droptsU = 0;
  l->stamp = l->stampU = 0;
  l->nocheck = 0;
  l->hist_next = 0;
  l->init_known = 0;
  l->init_value = 0;
  if (l->hist) memset(l->hist, 0, RSAN_HIST * sizeof(rsan_hist)); /* kept for the next location */
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

/* ---- facts (rsan_internal.h, docs/design/clocks.md) ---- */
uint64_t rsan_undecided_checks;
uint64_t rsan_inexact_queries;

static inline uint64_t win(const rsan_loc *l) { return l->nfacts - l->fold; }
static inline const rsan_fact *newest(const rsan_loc *l, uint64_t i) { /* i = 1: the newest */
  return &l->facts[(l->nfacts - i) % l->fcap];
}

int rsan_loc_has_current_fact(const rsan_loc *l, uint32_t slot) {
  /* the facts with the current timestamps are the newest ones (timestamps never decrease) */
  uint64_t k = win(l);
  for (uint64_t i = 1; i <= k; i++) {
    const rsan_fact *f = newest(l, i);
    if (f->ts != l->stamp || f->tsU != l->stampU) return 0;
    if (f->slot == slot) return 1;
  }
  return 0;
}

static inline uint64_t newest_ts(const rsan_evicted *e) { return e->h[(e->nev - 1) % RSAN_EV_HIST].ts; }

/* the evicted-facts entry of slot. Made when missing: in a free entry; else, for a location
 * whose window is at its largest (a hot one), in a table twice as large (up to RSAN_EV_MAX);
 * else in place of the entry whose newest evicted fact is oldest, which is then only known
 * as a bound (dropts/droptsU). */
static rsan_evicted *ev_entry(rsan_loc *l, uint32_t slot) {
  if (RSAN_UNLIKELY(!l->ev)) {
    l->ev = rsan_alloc(RSAN_EV_SLOTS * sizeof(rsan_evicted));
    l->evn = RSAN_EV_SLOTS;
  }
  rsan_evicted *victim = NULL;
  for (uint32_t i = 0; i < l->evn; i++) {
    rsan_evicted *e = &l->ev[i];
    if (e->used && e->slot == slot) return e;
    if (!e->used) {
      if (!victim || victim->used) victim = e;
    } else if (!victim || (victim->used && newest_ts(e) < newest_ts(victim))) {
      victim = e;
    }
  }
  if (victim->used && l->fcap >= RSAN_FACTS_MAX && l->evn < RSAN_EV_MAX) {
    uint32_t n = 2 * l->evn;
    rsan_evicted *ev = rsan_alloc(n * sizeof(rsan_evicted)); /* zeroed */
    memcpy(ev, l->ev, l->evn * sizeof(rsan_evicted));
    rsan_free(l->ev);
    l->ev = ev;
    victim = &ev[l->evn];
    l->evn = n;
  }
  if (victim->used) { /* the dropped slot's facts are now known only as a bound */
    uint64_t j = (victim->nev - 1) % RSAN_EV_HIST;
    if (victim->h[j].ts > l->dropts) l->dropts = victim->h[j].ts;
    if (victim->h[j].tsU > l->droptsU) l->droptsU = victim->h[j].tsU;
  }
  memset(victim, 0, sizeof *victim);
  victim->used = 1;
  victim->slot = slot;
  return victim;
}

/* doubles the window, keeping the facts' order (oldest first at the new positions) */
static void window_grow(rsan_loc *l) {
  uint32_t cap = 2 * l->fcap;
  rsan_fact *nf = rsan_alloc(cap * sizeof(rsan_fact));
  uint64_t n = l->nfacts;
  for (uint64_t j = n - l->fcap; j < n; j++) nf[j % cap] = l->facts[j % l->fcap];
  if (l->facts != l->facts_inline) rsan_free(l->facts);
  l->facts = nf;
  l->fcap = cap;
}

void rsan_loc_add_fact(rsan_loc *l, uint32_t slot, uint64_t epoch) {
  /* facts come in x's lock order: timestamps never decrease (what makes the newest contained
   * fact the max) */
  RSAN_ASSERT(l->nfacts == l->fold || (newest(l, 1)->ts <= l->stamp && newest(l, 1)->tsU <= l->stampU));
  if (l->nfacts - l->fold == l->fcap) { /* full */
    const rsan_fact *old = &l->facts[l->fold % l->fcap];
    if (l->grow && l->fcap < RSAN_FACTS_MAX) {
      /* a query of x had to use the evicted facts since the last growth: the window is too
       * short for how x is used; locations whose queries stay in the window keep the
       * inline one */
      window_grow(l);
      l->grow = 0;
    } else { /* old leaves the window: keep it among its slot's newest evicted */
      rsan_evicted *e = ev_entry(l, old->slot);
      if (!e->nev) { /* facts leave in order: the slot's first evicted is its first fact */
        e->first = old->epoch;
        e->firstts = old->ts;
        e->firsttsU = old->tsU;
      }
      unsigned k = (unsigned)(e->nev++ % RSAN_EV_HIST);
      e->h[k].epoch = old->epoch;
      e->h[k].ts = old->ts;
      e->h[k].tsU = old->tsU;
      l->fold++;
    }
  }
  rsan_fact *f = &l->facts[l->nfacts % l->fcap];
  f->slot = slot;
  f->epoch = epoch;
  f->ts = l->stamp;
  f->tsU = l->stampU;
  l->nfacts++;
}

/* the query's part beyond the window (no window fact is contained in c) */
static void query_evicted(rsan_loc *l, const rsan_clk *c, rsan_q *q);

void rsan_loc_query(rsan_loc *l, const rsan_clk *c, rsan_q *q) {
  uint64_t k = win(l);
  for (uint64_t i = 1; i <= k; i++) {
    const rsan_fact *f = newest(l, i);
    if (f->epoch <= rsan_clk_at(c, f->slot)) { /* the newest contained fact: the max, exact */
      q->lo = q->hi = f->ts;
      q->loU = q->hiU = f->tsU;
      return;
    }
  }
  query_evicted(l, c, q);
}

void rsan_loc_query2(rsan_loc *l, const rsan_clk *a, const rsan_clk *b, rsan_q *qa, rsan_q *qb) {
  uint64_t k = win(l);
  int fa = 0, fb = 0;
  for (uint64_t i = 1; i <= k && !(fa && fb); i++) {
    const rsan_fact *f = newest(l, i);
    if (!fa && f->epoch <= rsan_clk_at(a, f->slot)) {
      qa->lo = qa->hi = f->ts;
      qa->loU = qa->hiU = f->tsU;
      fa = 1;
    }
    if (!fb && f->epoch <= rsan_clk_at(b, f->slot)) {
      qb->lo = qb->hi = f->ts;
      qb->loU = qb->hiU = f->tsU;
      fb = 1;
    }
  }
  if (!fa) query_evicted(l, a, qa);
  if (!fb) query_evicted(l, b, qb);
}

static void query_evicted(rsan_loc *l, const rsan_clk *c, rsan_q *q) {
  q->lo = q->loU = q->hi = q->hiU = 0;
  if (!l->fold) return; /* nothing evicted: no fact contained, exactly 0 */
  l->grow = 1;
  for (uint32_t i = 0; i < l->evn; i++) {
    const rsan_evicted *e = &l->ev[i];
    if (!e->used) continue;
    uint64_t v = rsan_clk_at(c, e->slot);
    if (v < e->first) continue; /* none of this slot's evicted facts: nothing */
    /* (its facts in the window are not contained: they are newer than the evicted ones) */
    /* the newest remembered evicted fact c contains gives this slot's contribution exactly;
     * if c contains only older ones, it lies between the slot's first fact and the oldest
     * remembered one */
    uint64_t k = e->nev < RSAN_EV_HIST ? e->nev : RSAN_EV_HIST, lo = 0, loU = 0, hi = 0, hiU = 0;
    int found = 0;
    for (uint64_t i = 1; i <= k; i++) {
      unsigned j = (unsigned)((e->nev - i) % RSAN_EV_HIST);
      if (e->h[j].epoch <= v) {
        lo = hi = e->h[j].ts;
        loU = hiU = e->h[j].tsU;
        found = 1;
        break;
      }
      hi = e->h[j].ts; /* the oldest remembered so far */
      hiU = e->h[j].tsU;
    }
    if (!found) {
      lo = e->firstts;
      loU = e->firsttsU;
    }
    if (lo > q->lo) q->lo = lo;
    if (loU > q->loU) q->loU = loU;
    if (hi > q->hi) q->hi = hi;
    if (hiU > q->hiU) q->hiU = hiU;
  }
  /* slots dropped from ev: at most their newest evicted facts */
  if (l->dropts > q->hi) q->hi = l->dropts;
  if (l->droptsU > q->hiU) q->hiU = l->droptsU;
  if (RSAN_UNLIKELY(q->lo != q->hi || q->loU != q->hiU))
    __atomic_fetch_add(&rsan_inexact_queries, 1, __ATOMIC_RELAXED);
}

/* verbosity >= 1, at exit: how often the bounded windows were not exact */
void rsan_loc_print_stats(void) {
  char buf[200];
  int n = snprintf(
      buf, sizeof buf, "pyrsan: clocks: %llu undecided checks, %llu inexact queries, %u thread slots\n",
      (unsigned long long)__atomic_load_n(&rsan_undecided_checks, __ATOMIC_RELAXED),
      (unsigned long long)__atomic_load_n(&rsan_inexact_queries, __ATOMIC_RELAXED), rsan_thread_slot_count());
  if (n > 0) (void)!write(2, buf, (size_t)n);
}

rsan_loc *rsan_loc_peek(uintptr_t addr) {
  uintptr_t pageno = addr >> PAGE_SHIFT;
  bucket *b = bucket_of(pageno);
  rsan_loc *l = NULL;
  rsan_spin_lock(&b->lock);
  for (page_rec *pg = b->head; pg; pg = pg->next) {
    if (pg->pageno != pageno) continue;
    uint32_t i = page_lower_bound(pg, addr);
    if (i < pg->n && pg->ents[i].addr == addr) l = pg->ents[i].loc;
  }
  if (l) rsan_spin_lock(&l->lock); /* bucket -> location: the table's lock order */
  rsan_spin_unlock(&b->lock);
  return l;
}

static void loc_free_record(rsan_loc *l) {
  loc_clear_state(l);
  rsan_clk_release(&l->W);
  rsan_clk_release(&l->Wsc);
  rsan_clk_release(&l->Msc);
  rsan_free(l->ev);
  l->ev = NULL;
  l->evn = 0;
  rsan_free(l->hist);
  l->hist = NULL;
}

void rsan_loc_reset_all(void) {
  for (uint32_t k = 0; k < NBUCKETS; k++) {
    bucket *b = &buckets[k];
    page_rec *pg = b->head;
    while (pg) {
      page_rec *next = pg->next;
      for (uint32_t i = 0; i < pg->n; i++) {
        loc_free_record(pg->ents[i].loc);
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
    loc_free_record(l);
    rsan_free(l);
  }
  loc_free_record(&fence_loc);
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
