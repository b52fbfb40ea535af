/* Per-location write history (for reports and the value checks) and the report record of a
 * robustness violation (rsan_report_info), filled under the location lock. */
#include <string.h>

#include "rsan_engine.h"
#include "rsan_fork.h"

/* rsan_internal.h: the ring doubled before write k when it is full (k = 0, no ring yet: one
 * entry; k a power of 2 below RSAN_HIST), the new entries empty, the old ones at their
 * indices. Doubling, not one entry per write: a location's first RSAN_HIST writes pay 4
 * growths, not 8, and a ring is never longer than twice its writes (the memory of a location
 * written once or twice: docs/design/clocks.md §20). Rings come from the size classes
 * (alloc.c: 64, 128, 256, 512 bytes, 64-byte aligned, each entry one cache line), so a growth
 * is a pop, a copy of the k entries and a push: no malloc or free. */
uint32_t rsan_hist_prepare(rsan_loc *l) {
  uint32_t k = l->hist_next;
  if (k == 0 && l->hist) return RSAN_HIST; /* hist_next wrapped: the ring is full */
  if (k & (k - 1)) return k;               /* room left */
  uint32_t n = k ? 2 * k : 1;
  rsan_hist *h = rsan_ring_alloc(n * sizeof(rsan_hist)); /* zeroed */
  if (k) memcpy(h, l->hist, k * sizeof(rsan_hist));
  rsan_ring_free(l->hist, k * sizeof(rsan_hist));
  l->hist = h;
  return k;
}

/* rsan_location.h: the ring released (its length follows hist_next: before that changes) */
void rsan_hist_free(rsan_loc *l) {
  rsan_ring_free(l->hist, (size_t)rsan_hist_len(l) * sizeof(rsan_hist));
  l->hist = NULL;
}
rsan_hist *rsan_hist_alloc(uint32_t n) { return rsan_ring_alloc(n * sizeof(rsan_hist)); }

/* The stack pool (rsan_location.h): call stacks whose frames come from more than two modules
 * (the write's own and one other), interned in an open-addressing table of indices into an
 * array of stacks that only grows; taken rarely, under its own lock (at a write, the
 * location lock held; at a report, none). */
static rsan_spin pool_lock;
static uint64_t (*pool)[RSAN_HIST_STACK];
static uint32_t *pool_tab; /* index + 1, 0: empty */
static uint32_t pool_n, pool_cap;

static uint32_t pool_hash(const uint64_t *s) {
  uint64_t x = 0;
  for (int i = 0; i < RSAN_HIST_STACK; i++) x = (x ^ s[i]) * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(x >> 32);
}

uint32_t rsan_hist_pool_put(const uint64_t *s) {
  rsan_spin_lock(&pool_lock);
  if (2 * (pool_n + 1) > pool_cap) { /* the table at most half full; the array as big */
    uint32_t ncap = pool_cap ? 2 * pool_cap : 64;
    uint32_t *nt = rsan_alloc(ncap * sizeof *nt);
    uint64_t (*np)[RSAN_HIST_STACK] = rsan_alloc(ncap * sizeof *np);
    if (pool_n) memcpy(np, pool, pool_n * sizeof *np);
    for (uint32_t j = 0; j < pool_n; j++) {
      uint32_t b = pool_hash(np[j]) & (ncap - 1);
      while (nt[b]) b = (b + 1) & (ncap - 1);
      nt[b] = j + 1;
    }
    rsan_free(pool);
    rsan_free(pool_tab);
    pool = np;
    pool_tab = nt;
    pool_cap = ncap;
  }
  uint32_t b = pool_hash(s) & (pool_cap - 1);
  for (; pool_tab[b]; b = (b + 1) & (pool_cap - 1))
    if (!memcmp(pool[pool_tab[b] - 1], s, sizeof *pool)) break;
  if (!pool_tab[b]) {
    memcpy(pool[pool_n], s, sizeof *pool);
    pool_tab[b] = ++pool_n;
  }
  uint32_t i = pool_tab[b] - 1;
  rsan_spin_unlock(&pool_lock);
  return i;
}

/* fork (rsan_fork.h) */
void rsan_hist_fork_lock(void) {
  rsan_spin_lock(&pool_lock);
  rsan_slab_fork_lock(); /* the size classes' locks: leaves, so the last taken */
}
void rsan_hist_fork_unlock(void) {
  rsan_slab_fork_unlock();
  rsan_spin_unlock(&pool_lock);
}

void rsan_hist_pool_get(uint32_t i, uint64_t *out) {
  rsan_spin_lock(&pool_lock);
  memcpy(out, pool[i], sizeof *pool);
  rsan_spin_unlock(&pool_lock);
}

/* rsan_location.h: codes 0, 1 and 2, or (a third prefix) the pool */
void rsan_hist_set_stack(rsan_hist *h, uint64_t site, const uint64_t *s) {
  uint32_t own = (uint32_t)(site >> 32), hi = 0;
  unsigned code = 0;
  int have_hi = 0;
  for (int i = 0; i < RSAN_HIST_STACK; i++) {
    uint32_t p = (uint32_t)(s[i] >> 32);
    unsigned c;
    if (!s[i]) c = 0;
    else if (p == own) c = 1;
    else if (!have_hi || p == hi) {
      hi = p;
      have_hi = 1;
      c = 2;
    } else {
      h->stk_lo[0] = rsan_hist_pool_put(s); /* a third prefix */
      h->stk = RSAN_HIST_POOLED;
      return;
    }
    h->stk_lo[i] = (uint32_t)s[i];
    code |= c << (2 * i);
  }
  h->stk_hi = hi;
  h->stk = (uint8_t)code;
}

/* rsan_hist_fill_stack_i's general case: a frame in another module than the write's */
unsigned rsan_hist_fill_stack_slow(rsan_hist *h, const rsan_thread *t, uintptr_t fa, uint64_t site) {
  uint64_t st[RSAN_HIST_STACK] = {0};
  (void)rsan_thread_stack(t, fa, st, RSAN_HIST_STACK);
  rsan_hist_set_stack(h, site, st);
  return h->stk;
}

/* The history entry of the write with timestamp ts (U timestamp of a non-RMW write when
 * is_write). Returns 0 initial value, 1 found, 2 out of the window. */
static int hist_find(const rsan_loc *l, int is_write, uint64_t ts, rsan_hist *out) {
  if (ts == 0) return 0;
  if (!l->hist) return 2;
  for (int i = 0; i < rsan_hist_len(l); i++) {
    const rsan_hist *h = &l->hist[i];
    if (!h->ts) continue;
    if (is_write ? (!h->rmw && h->tsU == ts) : (h->ts == ts)) {
      *out = *h;
      return 1;
    }
  }
  return 2;
}

/* The write a report names as its stale write when the hb-aware one left the history
 * (prev_state 2): the oldest candidate still kept, as rsan_report_note_state picks it (the
 * known non-RMW-for-writes write with the smallest stamp in [lo, hi), the first of the window
 * on a tie). 1 and its site in *site, or 0 when there is none (the report names "an older
 * write"); a site may be 0 (an unknown one), so the answer is not the site. */
static int oldest_candidate_site(const rsan_loc *l, int is_write, uint64_t lo, uint64_t hi, uint64_t *site) {
  uint64_t best = ~0ull;
  for (int i = 0; l->hist && i < rsan_hist_len(l); i++) {
    const rsan_hist *h = &l->hist[i];
    if (!h->ts) continue;
    uint64_t ts = is_write ? h->tsU : h->ts;
    if ((is_write && h->rmw) || ts < lo || ts >= hi || ts >= best) continue;
    best = ts;
    *site = h->site;
  }
  return best != ~0ull;
}

int rsan_fill_report(rsan_report_info *r, rsan_thread *t, rsan_loc *l, int is_write, int op, int rmw_op,
                     int order, int size, uint64_t site, uintptr_t fa) {
  /* exact, or (facts overflowed) the bounds that made the violation certain */
  rsan_view v;
  rsan_view_get(t, l, &v);
  uint64_t ts_hb = is_write ? v.c.hiU : v.c.hi, ts_sc = is_write ? v.sc.loU : v.sc.lo;
  rsan_hist prev;
  int prev_state = hist_find(l, is_write, ts_hb, &prev);
  /* The dedup key of the report (report_robustness.c) is made of the access's site frames, the
   * type, and the stale write's source: its site's frames (prev_state 1, or 2 with a candidate
   * still kept), "an older write" (2 without), or the initial value of the object at addr (0).
   * A report whose key the thread already met costs no more than this (rsan_repeat_seen). */
  rsan_repeat rk = {.site = site};
  uint64_t kind;
  if (prev_state == 1) {
    kind = 1;
    rk.x = prev.site;
  } else if (prev_state == 2) {
    kind = oldest_candidate_site(l, is_write, ts_hb, ts_sc, &rk.x) ? 1 : 2;
  } else {
    kind = 0;
    rk.x = l->addr;
  }
  rk.meta = 1 + (uint64_t)(is_write != 0) + 2 * kind;
  rsan_repeat *slot;
  if (rsan_repeat_seen(t, &rk, &slot)) return 0;
  memset(r, 0, sizeof *r);
  r->repeat = rk;
  r->repeat_slot = slot;
  r->is_write = is_write;
  r->addr = l->addr;
  r->loc_id = l->id;
  r->site = site;
  r->tid = t->tid;
  r->op = op;
  r->rmw_op = rmw_op;
  r->order = order;
  r->size = size;
  r->nstack = rsan_thread_stack(t, fa, r->stack, RSAN_SHADOW_MAX);
  r->ts_hb = ts_hb;
  r->ts_sc = ts_sc;
  r->prev_state = prev_state;
  if (prev_state == 1) r->prev = prev;
  r->forced_state = hist_find(l, is_write, r->ts_sc, &r->forced);
  rsan_report_note_state(r, t, l); /* report_robustness.c: candidates, initial value */
  /* the thread's latest earlier access to another location */
  for (uint32_t k = 1; k <= RSAN_RECENT && k <= t->recent_next; k++) {
    const rsan_recent *a = &t->recent[(t->recent_next - k) % RSAN_RECENT];
    if (a->loc_id != l->id || a->addr != l->addr) {
      r->have_before = 1;
      r->before = *a;
      break;
    }
  }
  return 1;
}

/* tests: the value written by the write in entry i of addr's ring (-1: no such entry; -2: no
 * live location) */
RSAN_EXPORT int64_t __rsan_test_history_value(const void *addr, int i) {
  rsan_loc *l = rsan_loc_peek((uintptr_t)addr);
  if (!l) return -2;
  int64_t v = i < rsan_hist_len(l) && l->hist[i].ts ? (int64_t)l->hist[i].value : -1;
  rsan_loc_release(l);
  return v;
}
