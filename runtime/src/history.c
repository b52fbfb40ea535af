/* Per-location write history (for reports and the value checks) and the report record of a
 * robustness violation (rsan_report_info), filled under the location lock. */
#include <string.h>

#include "rsan_engine.h"
#include "rsan_fork.h"

/* rsan_internal.h: the ring doubled before write k when it is full (k = 0, no ring yet: two
 * entries; k a power of 2 from 2 below RSAN_HIST), the new entries empty, the old ones at
 * their indices. Doubling, not one entry per write: a location's first RSAN_HIST writes pay 3
 * growths, not 8, and a ring is never longer than twice its writes, nor than one line (the
 * memory of a location written once or twice: docs/design/clocks.md §20, §28). Rings come
 * from the size classes (alloc.c: 64, 128, 256 bytes, 64-byte aligned, two entries a line),
 * so a growth is a pop, a copy of the k entries and a push: no malloc or free. */
uint32_t rsan_hist_prepare(rsan_loc *l) {
  uint32_t k = l->hist_next;
  if (k == 0 && l->hist) return RSAN_HIST; /* hist_next wrapped: the ring is full */
  if (k == 1 || (k & (k - 1))) return k;   /* room left */
  uint32_t n = k ? 2 * k : 2;
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

/* The key pool (rsan_location.h): keys in segments that never move (segment c holds the 64 << c
 * keys from index 64 * (2^c - 1) on), so that a reader finds key i without a lock: the index
 * reached it after the put that stored the key (the writer's location lock, or the thread's
 * own cache), and the segment's pointer is published with a release store. Puts are
 * interned in an open-addressing table of indices + 1 under pool_lock, taken at a write only
 * when the thread's cache misses (the location lock held; nothing is taken under it). */
#define KEY_SEGS 26 /* 64 * (2^26 - 1) >= RSAN_HKEY_MAX keys */
static rsan_spin pool_lock;
static rsan_hkey *seg[KEY_SEGS];
static uint32_t *pool_tab;
static uint32_t pool_n, pool_cap;

static inline rsan_hkey *key_at(uint32_t i) {
  uint64_t j = (uint64_t)i + 64;
  unsigned c = 63u - (unsigned)__builtin_clzll(j) - 6u;
  return &__atomic_load_n(&seg[c], __ATOMIC_ACQUIRE)[j - ((uint64_t)64 << c)];
}

static uint32_t key_hash(const rsan_hkey *k) {
  uint64_t x = k->kind;
  x = (x ^ k->site) * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < RSAN_HIST_STACK; i++) x = (x ^ k->stack[i]) * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(x >> 32);
}

uint32_t rsan_hist_key_put(const rsan_hkey *k) {
  rsan_spin_lock(&pool_lock);
  if (2 * (pool_n + 1) > pool_cap) { /* the table at most half full */
    uint32_t ncap = pool_cap ? 2 * pool_cap : 128;
    uint32_t *nt = rsan_alloc(ncap * sizeof *nt);
    for (uint32_t j = 0; j < pool_n; j++) {
      uint32_t b = key_hash(key_at(j)) & (ncap - 1);
      while (nt[b]) b = (b + 1) & (ncap - 1);
      nt[b] = j + 1;
    }
    rsan_free(pool_tab);
    pool_tab = nt;
    pool_cap = ncap;
  }
  uint32_t b = key_hash(k) & (pool_cap - 1);
  for (; pool_tab[b]; b = (b + 1) & (pool_cap - 1))
    if (!memcmp(key_at(pool_tab[b] - 1), k, sizeof *k)) break;
  if (!pool_tab[b]) {
    if (pool_n >= RSAN_HKEY_MAX) /* 2^31 distinct (site, stack, kind): never */
      rsan_die_assert("key pool below 2^31 keys", __FILE__, __LINE__);
    uint64_t j = (uint64_t)pool_n + 64;
    unsigned c = 63u - (unsigned)__builtin_clzll(j) - 6u;
    if (j == (uint64_t)64 << c) /* the segment's first key: make it */
      __atomic_store_n(&seg[c], rsan_alloc(((size_t)64 << c) * sizeof(rsan_hkey)), __ATOMIC_RELEASE);
    *key_at(pool_n) = *k;
    pool_tab[b] = ++pool_n;
  }
  uint32_t i = pool_tab[b] - 1;
  rsan_spin_unlock(&pool_lock);
  return i;
}

void rsan_hist_key_get(uint32_t i, rsan_hkey *out) { *out = *key_at(i); }

uint64_t rsan_hist_key_bytes(void) {
  rsan_spin_lock(&pool_lock);
  uint64_t b = (uint64_t)pool_cap * sizeof(uint32_t);
  for (unsigned c = 0; c < KEY_SEGS; c++)
    if (seg[c]) b += ((uint64_t)64 << c) * sizeof(rsan_hkey);
  rsan_spin_unlock(&pool_lock);
  return b;
}

/* rsan_engine.h rsan_hist_key_i: a key the thread's cache does not have, put in the pool and
 * in the cache's slot */
uint32_t rsan_hist_key_miss(rsan_thread *t, const rsan_hkey *k, unsigned slot) {
  RSAN_ASSERT((k->kind >> 24 & 0xff) != 0); /* a size: no key matches a zeroed slot */
  uint32_t i = rsan_hist_key_put(k);
  t->hkc[slot].k = *k;
  t->hkc[slot].idx = i;
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

/* rsan_location.h */
void rsan_hist_decode(const rsan_hist *h, rsan_write *w) {
  const rsan_hkey *k = key_at(h->key >> 1);
  w->ts = h->ts;
  w->tsU = h->tsU;
  w->value = h->value;
  w->tid = h->tid;
  w->rmw = (uint8_t)rsan_hist_rmw(h);
  w->site = k->site;
  memcpy(w->stack, k->stack, sizeof w->stack);
  w->order = (uint8_t)k->kind;
  w->op = (uint8_t)(k->kind >> 8);
  w->rmw_op = (uint8_t)(k->kind >> 16);
  w->size = (uint8_t)(k->kind >> 24);
}

/* The history entry of the write with timestamp ts (U timestamp of a non-RMW write when
 * is_write). Returns 0 initial value, 1 found, 2 out of the window. */
static int hist_find(const rsan_loc *l, int is_write, uint64_t ts, rsan_write *out) {
  if (ts == 0) return 0;
  if (!l->hist) return 2;
  for (int i = 0; i < rsan_hist_len(l); i++) {
    const rsan_hist *h = &l->hist[i];
    if (!h->ts) continue;
    if (is_write ? (!rsan_hist_rmw(h) && h->tsU == ts) : (h->ts == ts)) {
      rsan_hist_decode(h, out);
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
  const rsan_hist *bh = NULL;
  for (int i = 0; l->hist && i < rsan_hist_len(l); i++) {
    const rsan_hist *h = &l->hist[i];
    if (!h->ts) continue;
    uint64_t ts = is_write ? h->tsU : h->ts;
    if ((is_write && rsan_hist_rmw(h)) || ts < lo || ts >= hi || ts >= best) continue;
    best = ts;
    bh = h;
  }
  if (bh) *site = key_at(bh->key >> 1)->site;
  return bh != NULL;
}

int rsan_fill_report(rsan_report_info *r, rsan_thread *t, rsan_loc *l, int is_write, int op, int rmw_op,
                     int order, int size, uint64_t site, uintptr_t fa) {
  /* exact, or (facts overflowed) the bounds that made the violation certain */
  rsan_view v;
  rsan_view_get(t, l, &v);
  uint64_t ts_hb = is_write ? v.c.hiU : v.c.hi, ts_sc = is_write ? v.sc.loU : v.sc.lo;
  rsan_write prev;
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

/* tests: entry i of addr's ring decoded into *out: 1, or 0 an empty entry, -1 no such entry,
 * -2 no live location */
RSAN_EXPORT int __rsan_test_history_write(const void *addr, int i, rsan_write *out) {
  rsan_loc *l = rsan_loc_peek((uintptr_t)addr);
  if (!l) return -2;
  int r = i >= rsan_hist_len(l) ? -1 : l->hist[i].ts != 0;
  if (r == 1) rsan_hist_decode(&l->hist[i], out);
  rsan_loc_release(l);
  return r;
}
