/* A location's facts (docs/design/clocks.md §3, §5, §10): the window of its newest facts,
 * the evicted-fact table of older ones per thread slot, and the queries that answer what a
 * clock knows of x from them. The location table that finds the records is location.c. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_internal.h"

uint64_t rsan_undecided_checks;
uint64_t rsan_inexact_queries;

static inline uint64_t win(const rsan_loc *l) { return l->nfacts - l->fold; }
static inline const rsan_fact *newest(const rsan_loc *l, uint64_t i) { /* i = 1: the newest */
  return &rsan_loc_facts(l)[(l->nfacts - i) & (l->fcap - 1)]; /* fcap: a power of 2 */
}

/* A table is wide (rsan_evicted entries, 64-bit values; sparse or direct) or narrow (a sparse
 * one of rsan_evicted32 entries, rsan_location.h): entry i read through ev_at, which gives a
 * narrow entry's values zero-extended, the values it was given (they fit 32 bits). */
static inline rsan_evicted32 *ev32(const rsan_loc *l) { return rsan_loc_ev32(l); }
static inline uint32_t *ev32_firsts(const rsan_loc *l) { return (uint32_t *)(ev32(l) + RSAN_EV_SLOTS); }
static inline rsan_evfirst *ev_firsts(const rsan_loc *l) { return (rsan_evfirst *)(l->ev + rsan_loc_evn(l)); }
static inline const rsan_evicted *ev_at(const rsan_loc *l, uint32_t i, rsan_evicted *buf) {
  if (!rsan_loc_evnarrow(l)) return &l->ev[i];
  const rsan_evicted32 *n = &ev32(l)[i];
  buf->first = n->first;
  buf->first_ts = n->first_ts;
  for (unsigned j = 0; j < RSAN_EV_HIST; j++) {
    buf->h[j].epoch = n->h[j].epoch;
    buf->h[j].ts = n->h[j].ts;
    buf->h[j].tsU = n->h[j].tsU;
  }
  return buf;
}
static inline uint64_t ev_first_tsU(const rsan_loc *l, uint32_t i) {
  return rsan_loc_evnarrow(l) ? ev32_firsts(l)[i] : ev_firsts(l)[i].tsU;
}
static inline rsan_evbound *ev_bound(const rsan_loc *l) { /* l->ev not NULL */
  if (rsan_loc_evnarrow(l)) return (rsan_evbound *)(ev32_firsts(l) + RSAN_EV_SLOTS);
  return &rsan_loc_evtail(l)->b;
}
static inline uint64_t newest_ts(const rsan_loc *l, uint32_t i) {
  rsan_evicted buf;
  const rsan_evicted *e = ev_at(l, i, &buf);
  return e->h[rsan_ev_newest(e)].ts;
}
/* the slot of entry i (in use): a narrow table's slots are the record's evslot (they fit) */
static inline uint32_t ev_slot(const rsan_loc *l, uint32_t i) {
  if (rsan_loc_evdirect(l)) return i;
  return (rsan_loc_evnarrow(l) ? l->evslot[i] : rsan_loc_evtail(l)->evslot[i]) - 1u;
}
/* A wide table of n = 1 << log entries: n rsan_evicted (64-byte aligned: an eviction writes
 * one line), n rsan_evfirst, one rsan_evtail; a narrow one (log RSAN_EV_NARROW):
 * RSAN_EV_SLOTS rsan_evicted32 (32-byte aligned: an eviction writes half a line), as many
 * first tsU's of 32 bits, one rsan_evbound. Zeroed. */
static rsan_evicted *ev_alloc(unsigned log) { return rsan_slab_alloc(rsan_ev_bytes_of(log)); } /* alloc.c */
void rsan_loc_ev_free(rsan_loc *l) {
  if (l->ev) rsan_slab_free(l->ev, rsan_ev_bytes_of(l->evlog));
  l->ev = NULL;
  l->evlog = 0;
}
void rsan_loc_ev_clear(rsan_loc *l) {
  if (l->ev) memset(l->ev, 0, rsan_ev_bytes_of(l->evlog));
}

/* the slot's evicted facts are now known only as a bound (dropts/droptsU) */
static void ev_drop(rsan_loc *l, uint64_t ts, uint64_t tsU) {
  rsan_evbound *t = ev_bound(l);
  if (ts > t->dropts) t->dropts = ts;
  if (tsU > t->droptsU) t->droptsU = tsU;
}
static void ev_drop_entry(rsan_loc *l, uint32_t i) {
  rsan_evicted buf;
  const rsan_evicted *e = ev_at(l, i, &buf);
  if (rsan_ev_used(e)) {
    unsigned j = rsan_ev_newest(e);
    ev_drop(l, e->h[j].ts, e->h[j].tsU);
  }
}

/* A narrow table made wide before a value or a slot that does not fit it is stored: every
 * entry, first tsU and the bound at the same place, zero-extended, and the tail's evslot from
 * the record's (exact: a narrow table's slots fit). Every query reads the same values. */
static void ev_widen(rsan_loc *l) {
  rsan_evicted *ev = ev_alloc(RSAN_EV_SLOTS_LOG); /* zeroed */
  rsan_evfirst *fi = (rsan_evfirst *)(ev + RSAN_EV_SLOTS);
  rsan_evtail *t = (rsan_evtail *)(fi + RSAN_EV_SLOTS);
  for (uint32_t i = 0; i < RSAN_EV_SLOTS; i++) {
    rsan_evicted buf;
    ev[i] = *ev_at(l, i, &buf);
    fi[i].tsU = ev_first_tsU(l, i);
    t->evslot[i] = l->evslot[i];
  }
  t->b = *ev_bound(l);
  rsan_slab_free(l->ev, rsan_ev_bytes_of(RSAN_EV_NARROW));
  l->ev = ev;
  l->evlog = RSAN_EV_SLOTS_LOG;
}

/* A hot location's table (window at RSAN_FACTS_MAX) is indexed by slot (evdirect, wide):
 * entry s is slot s's, found in O(1) whatever the thread count; it grows to the slots seen, up
 * to RSAN_EV_MAX. Converting keeps every entry whose slot fits. */
static void ev_make_direct(rsan_loc *l, uint32_t slot) {
  uint32_t need = slot + 1, on = rsan_loc_evn(l);
  for (uint32_t i = 0; i < on; i++) {
    uint32_t s = ev_slot(l, i);
    rsan_evicted buf;
    if (rsan_ev_used(ev_at(l, i, &buf)) && s < RSAN_EV_MAX && s + 1 > need) need = s + 1;
  }
  unsigned log = 3; /* 8 entries: more than a sparse table's */
  while ((1u << log) < need && (1u << log) < RSAN_EV_MAX) log++;
  uint32_t n = 1u << log;
  rsan_evicted *ev = ev_alloc(log); /* zeroed */
  rsan_evfirst *fi = (rsan_evfirst *)(ev + n);
  for (uint32_t i = 0; i < on; i++) {
    rsan_evicted buf;
    const rsan_evicted *e = ev_at(l, i, &buf);
    if (!rsan_ev_used(e)) continue;
    uint32_t s = ev_slot(l, i);
    if (s < n) {
      ev[s] = *e;
      fi[s].tsU = ev_first_tsU(l, i);
    } else {
      ev_drop_entry(l, i);
    }
  }
  rsan_evtail *t = (rsan_evtail *)(fi + n);
  t->b = *ev_bound(l); /* the bound of the slots dropped, kept */
  rsan_loc_ev_free(l);
  l->ev = ev;
  l->evlog = (uint8_t)log;
  memset(l->evslot, 0, sizeof l->evslot);
}
/* the record's evslot for slot + 1 = v: v while it fits, else UINT16_MAX (v >= UINT16_MAX:
 * rsan_loc_add_fact_i leaves such a slot's eviction to ev_entry, which reads the tail) */
static inline uint16_t evslot16(uint32_t v) { return v < UINT16_MAX ? (uint16_t)v : UINT16_MAX; }

/* The index of the evicted-facts entry of slot, or -1 when its facts can only be kept as a
 * bound. Made when missing: direct-mapped for a hot location (above); else in a free entry of
 * the RSAN_EV_SLOTS, or in place of the entry whose newest evicted fact is oldest, which is
 * then only known as a bound. The table is made narrow, and a narrow one is widened first
 * when wide is set (the fact to store, or slot, does not fit it). */
static int ev_entry(rsan_loc *l, uint32_t slot, int wide) {
  if (RSAN_UNLIKELY(!l->ev)) {
    l->evlog = wide ? RSAN_EV_SLOTS_LOG : RSAN_EV_NARROW;
    l->ev = ev_alloc(l->evlog);
  } else if (RSAN_UNLIKELY(wide && rsan_loc_evnarrow(l))) {
    ev_widen(l);
  }
  if (rsan_loc_evdirect(l)) {
    if (RSAN_UNLIKELY(slot >= rsan_loc_evn(l))) {
      if (slot >= RSAN_EV_MAX) return -1;
      ev_make_direct(l, slot); /* grows it */
    }
    return (int)slot;
  }
  /* sparse: the slots of the entries are in the tail (evslot) of a wide table, and in the
   * record while they fit 16 bits (always, in a narrow one): no entry is read to find one */
  int narrow = rsan_loc_evnarrow(l);
  uint32_t vi = RSAN_EV_SLOTS, *evslot = narrow ? NULL : rsan_loc_evtail(l)->evslot;
  for (uint32_t i = 0; i < RSAN_EV_SLOTS; i++) {
    uint32_t v = narrow ? l->evslot[i] : evslot[i];
    if (v == slot + 1) return (int)i;
    if (!v && vi == RSAN_EV_SLOTS) vi = i;
  }
  if (vi == RSAN_EV_SLOTS) { /* none free: the entry whose newest evicted fact is oldest */
    vi = 0;
    for (uint32_t i = 1; i < RSAN_EV_SLOTS; i++)
      if (newest_ts(l, i) < newest_ts(l, vi)) vi = i;
    if (l->fcap >= RSAN_FACTS_MAX && slot < RSAN_EV_MAX) {
      ev_make_direct(l, slot);
      return ev_entry(l, slot, wide);
    }
  }
  ev_drop_entry(l, vi);
  /* unused: the caller makes it the slot's first */
  if (narrow) memset(&ev32(l)[vi], 0, sizeof(rsan_evicted32));
  else memset(&l->ev[vi], 0, sizeof(rsan_evicted));
  if (!narrow) evslot[vi] = slot + 1;
  l->evslot[vi] = evslot16(slot + 1);
  return (int)vi;
}

/* doubles the window, keeping the facts' order (oldest first at the new positions) */
static void window_grow(rsan_loc *l) {
  uint32_t cap = 2 * l->fcap;
  rsan_fact *nf = rsan_alloc(cap * sizeof(rsan_fact));
  uint64_t n = l->nfacts;
  const rsan_fact *of = rsan_loc_facts(l);
  for (uint64_t j = n - l->fcap; j < n; j++) nf[j & (cap - 1)] = of[j & (l->fcap - 1)];
  if (l->fcap > RSAN_FACTS) rsan_free(l->facts_ext); /* else facts_ext is the inline facts */
  l->facts_ext = nf;
  l->fcap = cap;
}

void rsan_loc_add_fact(rsan_loc *l, uint32_t slot, uint64_t epoch) {
  /* facts come in x's lock order: timestamps never decrease (what makes the newest contained
   * fact the max) */
  RSAN_ASSERT(l->nfacts == l->fold ||
              (l->stamp - rsan_fact_ts(l->stamp, newest(l, 1)->ts16) < RSAN_FACTS_MAX &&
               l->stampU - rsan_fact_ts(l->stampU, newest(l, 1)->tsU16) < RSAN_FACTS_MAX));
  if (l->nfacts - l->fold == l->fcap) { /* full */
    const rsan_fact *old = &rsan_loc_facts(l)[l->fold & (l->fcap - 1)];
    if (l->grow && l->fcap < RSAN_FACTS_MAX) {
      /* a query of x had to use the evicted facts since the last growth: the window is too
       * short for how x is used; locations whose queries stay in the window keep the
       * inline one */
      window_grow(l);
      l->grow = 0;
    } else { /* old leaves the window: keep it among its slot's newest evicted */
      uint64_t ots = rsan_fact_ts(l->stamp, old->ts16), otsU = rsan_fact_ts(l->stampU, old->tsU16);
      RSAN_ASSERT(old->epoch >= 1); /* (epochs start at 1: 0 marks an unused h) */
      /* (the stamps, as rsan_loc_add_fact_i tests them: ots <= stamp, otsU <= stampU) */
      int i = ev_entry(l, old->slot,
                       !rsan_ev_fits32(old->epoch, l->stamp, l->stampU) || old->slot + 1 >= UINT16_MAX);
      if (RSAN_UNLIKELY(i < 0)) {
        ev_drop(l, ots, otsU);
        l->fold++;
        goto append;
      }
      if (rsan_loc_evnarrow(l)) { /* (the values fit: ev_entry widened it otherwise) */
        rsan_evicted32 *e = &ev32(l)[i];
        if (!e->h[0].epoch) { /* facts leave in order: the slot's first evicted is its first fact */
          e->first = (uint32_t)old->epoch;
          e->first_ts = (uint32_t)ots;
          ev32_firsts(l)[i] = (uint32_t)otsU;
        }
        unsigned k = e->h[0].epoch > e->h[1].epoch; /* rsan_ev_next */
        e->h[k].epoch = (uint32_t)old->epoch;
        e->h[k].ts = (uint32_t)ots;
        e->h[k].tsU = (uint32_t)otsU;
      } else {
        rsan_evicted *e = &l->ev[i];
        if (!rsan_ev_used(e)) { /* facts leave in order: the slot's first evicted is its first fact */
          e->first = old->epoch;
          e->first_ts = ots;
          ev_firsts(l)[i].tsU = otsU;
        }
        unsigned k = rsan_ev_next(e);
        e->h[k].epoch = old->epoch;
        e->h[k].ts = ots;
        e->h[k].tsU = otsU;
      }
      l->fold++;
    }
  }
append:;
  rsan_fact *f = &rsan_loc_facts(l)[l->nfacts & (l->fcap - 1)];
  f->slot = slot;
  f->epoch = epoch;
  f->ts16 = (uint16_t)l->stamp;
  f->tsU16 = (uint16_t)l->stampU;
  l->nfacts++;
}

/* the query's part beyond the window (no window fact is contained in c) */
static void query_evicted(rsan_loc *l, const rsan_clk *c, rsan_q *q);

void rsan_loc_query(rsan_loc *l, const rsan_clk *c, rsan_q *q) {
  uint64_t k = win(l);
  for (uint64_t i = 1; i <= k; i++) {
    const rsan_fact *f = newest(l, i);
    if (f->epoch <= rsan_clk_at(c, f->slot)) { /* the newest contained fact: the max, exact */
      q->lo = q->hi = rsan_fact_ts(l->stamp, f->ts16);
      q->loU = q->hiU = rsan_fact_ts(l->stampU, f->tsU16);
      return;
    }
  }
  query_evicted(l, c, q);
}

void rsan_loc_query2(rsan_loc *l, const rsan_clk *a, const rsan_clk *b, rsan_q *qa, rsan_q *qb) {
  /* the scan reads only locals: the answers are written after it (they may alias nothing,
   * but the compiler cannot know) */
  const rsan_fact *fs = rsan_loc_facts(l), *hita = NULL, *hitb = NULL;
  const uint64_t *ea = rsan_clk_ce(a), *eb = rsan_clk_ce(b);
  uint32_t na = a->n, nb = b->n;
  uint64_t nf = l->nfacts, k = nf - l->fold, mask = l->fcap - 1;
  for (uint64_t i = 1; i <= k; i++) {
    const rsan_fact *f = &fs[(nf - i) & mask];
    uint32_t s = f->slot; /* epochs start at 1: a slot a clock does not hold contains none */
    if (!hita && f->epoch <= (s < na ? ea[s] : 0)) hita = f;
    if (!hitb && f->epoch <= (s < nb ? eb[s] : 0)) hitb = f;
    if (hita && hitb) break;
  }
  if (hita) {
    qa->lo = qa->hi = rsan_fact_ts(l->stamp, hita->ts16);
    qa->loU = qa->hiU = rsan_fact_ts(l->stampU, hita->tsU16);
  } else {
    query_evicted(l, a, qa);
  }
  if (hitb) {
    qb->lo = qb->hi = rsan_fact_ts(l->stamp, hitb->ts16);
    qb->loU = qb->hiU = rsan_fact_ts(l->stampU, hitb->tsU16);
  } else {
    query_evicted(l, b, qb);
  }
}

int rsan_loc_same_older(const rsan_loc *l, const rsan_clk *c, const rsan_clk *sc) {
  const rsan_fact *fs = rsan_loc_facts(l);
  uint64_t nf = l->nfacts, k = nf - l->fold, mask = l->fcap - 1;
  if (k > RSAN_SAME_SCAN) k = RSAN_SAME_SCAN;
  for (uint64_t i = 2; i <= k; i++) {
    const rsan_fact *f = &fs[(nf - i) & mask];
    int in_c = f->epoch <= rsan_clk_at(c, f->slot), in_sc = f->epoch <= rsan_clk_at(sc, f->slot);
    if (in_c | in_sc) return in_c & in_sc;
  }
  return 0;
}

int rsan_loc_same_checked(const rsan_loc *l, const rsan_clk *c, const rsan_clk *sc) {
  const rsan_fact *fs = rsan_loc_facts(l), *hc = NULL, *hsc = NULL;
  uint64_t nf = l->nfacts, k = nf - l->fold, mask = l->fcap - 1;
  for (uint64_t i = 1; i <= k && !(hc && hsc); i++) { /* rsan_loc_query2's scan */
    const rsan_fact *f = &fs[(nf - i) & mask];
    if (!hc && f->epoch <= rsan_clk_at(c, f->slot)) hc = f;
    if (!hsc && f->epoch <= rsan_clk_at(sc, f->slot)) hsc = f;
  }
  return hc != NULL && hc == hsc;
}

/* entry i's field f, zero-extended from a narrow table (narrow a constant where this is
 * inlined: query_evicted's loop is built once per width, with no copy of an entry) */
#define EVF(narrow, l, i, f) ((narrow) ? (uint64_t)ev32(l)[i].f : (l)->ev[i].f)
static inline __attribute__((always_inline)) void query_entries(const rsan_loc *l, const rsan_clk *c,
                                                                rsan_q *q, int narrow) {
  uint32_t evn = rsan_loc_evn(l);
  for (uint32_t i = 0; i < evn; i++) {
    uint64_t e0 = EVF(narrow, l, i, h[0].epoch), e1 = EVF(narrow, l, i, h[1].epoch);
    if (!e0) continue; /* rsan_ev_used */
    uint64_t v = rsan_clk_at(c, ev_slot(l, i));
    if (v < EVF(narrow, l, i, first)) continue; /* none of this slot's evicted facts: nothing */
    /* (its facts in the window are not contained: they are newer than the evicted ones) */
    /* the newest remembered evicted fact c contains gives this slot's contribution exactly;
     * if c contains only older ones, it lies between the slot's first fact and the oldest
     * remembered one */
    uint64_t lo = 0, loU = 0, hi = 0, hiU = 0;
    int found = 0;
    unsigned j = e1 > e0; /* rsan_ev_newest */
    for (unsigned m = 0; m < RSAN_EV_HIST; m++, j ^= 1) {
      uint64_t ej = j ? e1 : e0;
      if (!ej) break;
      if (ej <= v) {
        lo = hi = EVF(narrow, l, i, h[j].ts);
        loU = hiU = EVF(narrow, l, i, h[j].tsU);
        found = 1;
        break;
      }
      hi = EVF(narrow, l, i, h[j].ts); /* the oldest remembered so far */
      hiU = EVF(narrow, l, i, h[j].tsU);
    }
    if (!found) {
      lo = EVF(narrow, l, i, first_ts);
      loU = narrow ? ev32_firsts(l)[i] : ev_firsts(l)[i].tsU;
    }
    if (lo > q->lo) q->lo = lo;
    if (loU > q->loU) q->loU = loU;
    if (hi > q->hi) q->hi = hi;
    if (hiU > q->hiU) q->hiU = hiU;
  }
}
#undef EVF

static void query_evicted(rsan_loc *l, const rsan_clk *c, rsan_q *q) {
  q->lo = q->loU = q->hi = q->hiU = 0;
  if (!l->fold) return; /* nothing evicted: no fact contained, exactly 0 */
  l->grow = 1;
  if (rsan_loc_evnarrow(l)) query_entries(l, c, q, 1);
  else query_entries(l, c, q, 0);
  /* slots dropped from ev: at most their newest evicted facts */
  const rsan_evbound *t = ev_bound(l); /* fold > 0: the table exists */
  if (t->dropts > q->hi) q->hi = t->dropts;
  if (t->droptsU > q->hiU) q->hiU = t->droptsU;
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
