/* pyrsan runtime: what the files of the clock engine share (alloc.c, init.c, rules.c,
 * memop.c, history.c, value.c, atomic.c, sync.c). Internal; not an ABI. */
#ifndef RSAN_ENGINE_H
#define RSAN_ENGINE_H

#include <string.h>

#include "rsan_internal.h"

/* ---- clock rules (rules.c): algorithm.md §3.2, §3.3; the caller holds l's lock ---- */
#ifdef RSAN_DEBUG
void rsan_loc_check_invariants(const rsan_loc *l); /* algorithm.md §3.4, debug builds */
#else
static inline void rsan_loc_check_invariants(const rsan_loc *l) { (void)l; }
#endif
void rsan_sc_load(rsan_thread *t, rsan_loc *l);
void rsan_sc_write(rsan_thread *t, rsan_loc *l, uint64_t ts, uint64_t tU); /* tU == 0: an RMW */
void rsan_hb_load(rsan_thread *t, rsan_loc *l, int mo);
void rsan_load_mo(rsan_thread *t, rsan_loc *l, int mo); /* rsan_sc_load_mo_i, rsan_hb_load_i */
void rsan_hb_store(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts, uint64_t tU);
void rsan_hb_rmw(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts);
#define RSAN_ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- the thread clocks' joins and exports (docs/design/clocks.md §16) ----
 * X ⊔= L, L := X, L ⊔= X for a thread clock X of t (which: RSAN_X_*, X = rsan_tclk) and a
 * location clock L: the inline case as rsan_clk_join / rsan_clk_export / rsan_clk_join_loc,
 * beyond it with X's memo and export delta (clock.c). */
static inline rsan_clk *rsan_tclk(rsan_thread *t, int which) {
  return which == RSAN_X_C ? &t->Tc : which == RSAN_X_R ? &t->Tr : which == RSAN_X_SC ? &t->Tsc : &t->Ta;
}
/* clock.c: a snapshot's memory released (its last holder; not rsan_free: docs/design/clocks.md §25) */
void rsan_snap_free(rsan_snap *p);
/* the memo of a clock that location clocks are joined into (Tr has none) */
static inline rsan_memo *rsan_tmemo(rsan_thread *t, int which) {
  return which == RSAN_X_C    ? t->memo_c
         : which == RSAN_X_SC ? t->memo_sc
         : which == RSAN_X_A  ? t->memo_a
                              : NULL;
}
/* an exported clock's state and snapshot (Ta is not exported) */
static inline rsan_xclk *rsan_txclk(rsan_thread *t, int which) {
  return which == RSAN_X_C ? &t->xc : which == RSAN_X_R ? &t->xr : which == RSAN_X_SC ? &t->xsc : NULL;
}
static inline rsan_snap **rsan_tsnap(rsan_thread *t, int which) {
  return which == RSAN_X_C ? &t->snap_c : which == RSAN_X_R ? &t->snap_r : &t->snap_sc;
}
static RSAN_ALWAYS_INLINE void rsan_join_t(rsan_thread *t, int which, const rsan_clk *src) {
  rsan_clk *dst = rsan_tclk(t, which);
  if (!src->ver || src->ver == dst->ver) return; /* version 0: ⊥ */
  if (!rsan_clk_join_inline(dst, src))
    rsan_clk_join_t_slow(t, dst, src, rsan_tmemo(t, which), rsan_txclk(t, which));
}
static RSAN_ALWAYS_INLINE void rsan_export_t(rsan_clk *dst, rsan_thread *t, int which) {
  rsan_clk *src = rsan_tclk(t, which);
  if (dst->ver == src->ver && dst->n == src->n) return; /* the same content */
  if (!rsan_clk_assign_inline(dst, src))
    rsan_clk_export_t_slow(dst, t, src, rsan_tsnap(t, which), rsan_txclk(t, which), which);
}
static RSAN_ALWAYS_INLINE void rsan_join_loc_t(rsan_clk *dst, rsan_thread *t, int which) {
  rsan_clk *src = rsan_tclk(t, which);
  if (!src->ver || src->ver == dst->ver) return;
  if (!rsan_clk_join_inline(dst, src))
    rsan_clk_join_loc_t_slow(dst, t, src, rsan_tmemo(t, which), rsan_tsnap(t, which), rsan_txclk(t, which),
                             which);
}

/* ---- facts (docs/design/clocks.md) ----
 * Every singleton a rule of §3.2/§3.3 gives a thread clock is the access's fact
 * (x, stamp(x), stampU(x)) after the operation: a store's x@t / x@tU, a load's coherence
 * W(x)|x (W(x)(x) = stamp(x), WU(x)(x) = stampU(x), §3.4), an RMW's x@t with WU(x)|x. Tc, Ta
 * and Tsc all receive it, Tr does not: the fact gets the thread's next epoch, which Tc, Ta
 * and Tsc hold at the thread's slot. Made before the rules, so the clocks a write exports
 * (Wsc(x) := Tsc, W(x) := Tc) contain it; a load's Msc(x) ⊔= Tsc then also contains it,
 * which adds nothing (Msc(x)(x) = stamp(x), MscU(x)(x) = stampU(x) already). F's facts are
 * never queried and not made.
 * defer (not NULL): the fact's place in x's window is left to the caller, which sets it with
 * rsan_fact_append before it releases x's lock (*defer is set when there is one to place).
 * Exact: the window is read only by queries and re-read tests of x (checks, reports), which run
 * under x's lock before the operation's rules or in later operations; between the fact's
 * epoch and its place only the rules (clocks), the race detector's part, the write history,
 * the memory operation and notes run. Meanwhile the hot location's evicted-facts entry the
 * place writes has arrived (rsan_loc_prefetch_eviction). */
static RSAN_ALWAYS_INLINE void rsan_add_fact_i(rsan_thread *t, rsan_loc *l, int *defer) {
  /* F (id 0) is not in the location table: the atomic entry points, the only callers with
   * defer, never have it, and their test is gone (it read line 3, docs/design/clocks.md §24) */
  RSAN_ASSERT(!defer || l->id != 0);
  if (!defer && RSAN_UNLIKELY(l->id == 0)) return; /* F */
  uint64_t e = ++t->epoch;
  uint32_t s = t->slot;
  if (RSAN_LIKELY(s < t->Tc.n && s < t->Ta.n && s < t->Tsc.n)) { /* own entries exist: set them */
    rsan_clk_e(&t->Tc)[s] = e;
    rsan_clk_e(&t->Ta)[s] = e;
    rsan_clk_e(&t->Tsc)[s] = e;
    uint64_t v = rsan_clk_newver3(); /* three fresh versions: v, v + 1, v + 2 */
    /* the own entry is always part of an export delta (rsan_xclk): one that held for the old
     * content holds for the new */
    if (RSAN_UNLIKELY(t->Tc.cap > RSAN_CLK_INLINE)) {
      if (t->xc.dver && t->xc.dver == t->Tc.ver) t->xc.dver = v;
      if (t->xsc.dver && t->xsc.dver == t->Tsc.ver) t->xsc.dver = v + 2;
    }
    t->Tc.ver = v;
    t->Ta.ver = v + 1;
    t->Tsc.ver = v + 2;
  } else {
    rsan_clk_set(&t->Tc, s, e);
    rsan_clk_set(&t->Ta, s, e);
    rsan_clk_set(&t->Tsc, s, e);
  }
  if (defer) *defer = 1;
  else rsan_loc_add_fact_i(l, s, e);
}
/* the deferred fact's place (rsan_add_fact_i): the thread's newest epoch, made in this
 * operation */
static RSAN_ALWAYS_INLINE void rsan_fact_append(rsan_thread *t, rsan_loc *l, int made) {
  if (made) rsan_loc_add_fact_i(l, t->slot, t->epoch);
}

/* The first epoch of the facts this thread made since the engine first checked it here: the
 * facts of its slot from this epoch on are its own (a slot has one owner while it lives), made
 * while its clocks only grew (Ta and Tsc are never lowered in a thread's life: joins, own
 * entries; Tc := Ta keeps the chain). Kept per OS thread, for the thread record and the test
 * generation it was taken for; anything else starts it again, later: fewer facts trusted. */
extern __thread const rsan_thread *rsan_tls_fact_thread __attribute__((tls_model("initial-exec")));
extern __thread uint64_t rsan_tls_fact_epoch0 __attribute__((tls_model("initial-exec")));
extern __thread uint64_t rsan_tls_fact_gen __attribute__((tls_model("initial-exec")));
static inline uint64_t rsan_thread_own_epoch0(const rsan_thread *t) {
  uint64_t g = __atomic_load_n(&rsan_thread_generation, __ATOMIC_RELAXED);
  if (RSAN_UNLIKELY(rsan_tls_fact_thread != t || rsan_tls_fact_gen != g)) {
    rsan_tls_fact_thread = t;
    rsan_tls_fact_gen = g;
    rsan_tls_fact_epoch0 = t->epoch + 1;
  }
  return rsan_tls_fact_epoch0;
}

/* A load's fact. Returns 1 when the load re-reads the write its thread's own earlier access
 * of x read or made (its slot has a fact with x's current timestamps, made by this thread):
 * then the thread's clocks already hold what the write's clocks give a reader, Wsc(x) ⊑ Tsc
 * and W(x) ⊑ Ta, and those joins are skipped. Why exact: W(x) and Wsc(x) change only at
 * writes to x (rules below, through rsan_sc_write / rsan_hb_store / rsan_hb_rmw; location.c
 * clears them only with the facts), and every write makes a fact with a new stamp, so no
 * write to x came after that fact. If the fact was a load's, that load joined
 * Tsc ⊔= Wsc(x) and Ta ⊔= W(x) in the same step; if a write's, it set Wsc(x) := Tsc and
 * W(x) := Tc or Tr, or W(x) ⊔= Tc or Tr after Ta ⊔= W(x), all ⊑ Ta (Tr ⊑ Tc ⊑ Ta, §3.4).
 * Tsc and Ta only grew since (rsan_thread_own_epoch0). Otherwise (no such fact, or one of
 * the slot's previous owner) the fact is made as before and 0 returned. */
/* A load's fact that adds nothing (docs/design/clocks.md §26): x's newest fact G holds x's current
 * timestamps and the loading thread's Tc will contain it once the load's rules ran: Tc contains
 * it already, or the load acquires (mo, >= 0; -1: never) and W(x) contains it (Tc ⊔= W(x)).
 * Then every clock that would contain the load's fact N contains G, which has the same
 * timestamps: no query of any clock at any location answers differently without N, and N (its
 * epoch, the thread's own entries and versions, its place in x's window and the eviction it
 * causes) is not made. The load's joins are made as for any load. Why exact: N's epoch would
 * reach a clock only from t's Tc, Ta, Tsc (Tr only through a later release fence, Tr := Tc)
 * from the moment its own entries are set, at the start of the load's rules; Tsc ⊒ Ta ⊒ Tc
 * (algorithm.md §3.4) and each contains G from then on: Tc before the load, or, for an
 * acquire, W(x) ⊑ Wsc(x), which Tsc joins before the load exports it (Msc(x) ⊔= Tsc), and
 * which Ta and Tc join in the hb step; clocks only grow, Tc := Ta and Tr := Tc keep G. Any
 * clock with t's entry at or past N's epoch got it through joins and copies from those, each
 * of which carries G's entry too. Epochs after N's are one lower, which changes no containment
 * (an order-preserving renaming of t's epochs in every clock and fact at once). */
static RSAN_ALWAYS_INLINE int rsan_load_fact_redundant(const rsan_thread *t, const rsan_loc *l, int mo) {
  if (RSAN_UNLIKELY(l->nfacts == l->fold)) return 0;
  const rsan_fact *g = &rsan_loc_facts(l)[(l->nfacts - 1) & (l->fcap - 1)];
  /* (every write adds a fact: the newest one holds the current timestamps; checked anyway) */
  if (RSAN_UNLIKELY(g->ts16 != (uint16_t)l->stamp || g->tsU16 != (uint16_t)l->stampU)) return 0;
  if (g->epoch <= rsan_clk_at(&t->Tc, g->slot)) return 1;
  if (!mo_acq(mo)) return 0;
  const rsan_clk *w = rsan_loc_w(l);
  uint64_t we = RSAN_LIKELY(w->cap <= RSAN_CLK_INLINE) ? (g->slot < w->n ? w->u.inl[g->slot] : 0)
                                                       : rsan_clk_get(w, g->slot);
  return g->epoch <= we;
}
/* Also 1 for a re-read of a write whose earlier read by t had its fact elided: t's entry of x
 * in t->elided names that write (x's id, which no other location ever has, and its timestamps,
 * which every write changes), so that read's joins left Wsc(x) ⊑ Tsc and W(x) ⊑ Ta, and
 * neither changed since (a write to x would have changed the timestamps; t's clocks only grow
 * in its record's life, and a scheduler's restore restores the entries with the clocks); its
 * fact is elided again (the fact that made it redundant still holds the current timestamps,
 * and Tc still contains it). */
static RSAN_ALWAYS_INLINE int rsan_load_fact_i(rsan_thread *t, rsan_loc *l, int mo, int *defer) {
  uint64_t e = rsan_loc_current_fact(l, t->slot);
  /* a re-read: the older fact is the same (a write changed the stamp: it always adds one) */
  if (e) return e >= rsan_thread_own_epoch0(t);
  if (mo >= 0) {
    __typeof__(t->elided[0]) *m = &t->elided[l->id & (RSAN_ELIDED - 1)];
    if (m->id == l->id && m->stamp == l->stamp && m->stampU == l->stampU) return 1;
    if (rsan_load_fact_redundant(t, l, mo)) {
      m->id = l->id;
      m->stamp = l->stamp;
      m->stampU = l->stampU;
      return 0;
    }
  }
  rsan_add_fact_i(t, l, defer);
  return 0;
}

/* The record class a write (store, RMW, successful CAS) of order mo by t needs
 * (docs/design/clocks.md §19): Wsc(x) := Tsc is never ⊥ (it holds the write's fact), and
 * W(x) := Tc or W(x) ⊔= Tc (release) is not either; W(x) := Tr or W(x) ⊔= Tr (otherwise)
 * leaves W(x) = ⊥ when Tr is ⊥ (version 0). Tr is t's own and no rule of the write changes it.
 * A load needs no line: W(x) and Wsc(x) are only read, ⊥ when missing. */
static inline unsigned rsan_write_cls(const rsan_thread *t, int mo) {
  return mo_rel(mo) || t->Tr.ver ? RSAN_LOC_FULL : RSAN_LOC_NOW;
}
/* the location of addr for a write of order mo by t, locked, of the class it needs */
static RSAN_ALWAYS_INLINE rsan_loc *rsan_loc_acquire_write(rsan_thread *t, uintptr_t addr, int mo) {
  rsan_loc *l = rsan_loc_lookup_c(addr, 1);
  if (RSAN_UNLIKELY(l == NULL)) l = rsan_loc_acquire_slow(addr, rsan_write_cls(t, mo)); /* its class */
  if (RSAN_UNLIKELY(l->cls != RSAN_LOC_FULL)) l = rsan_loc_fit(l, rsan_write_cls(t, mo));
  return l;
}

/* ---- hb_SC side: algorithm.md §3.2 ---- */
/* Load: Msc(x) ⊔= Tsc; Tsc ⊔= Wsc(x) (and the U pair: MscU(x) ⊔= TscU; TscU ⊔= WscU(x)),
 * applied in the other order, which gives the same clocks: Msc(x) ⊔ (Tsc ⊔ Wsc(x)) =
 * Msc(x) ⊔ Tsc, as Wsc(x) ⊑ Msc(x) (§3.4). Then Tsc ⊒ Wsc(x), so while Msc(x) = Wsc(x)
 * (since the last write) Msc(x) ⊔ Tsc is Tsc: one copy, which a location clock of many slots
 * shares with the thread (rsan_clk_export) instead of an array of its own.
 * Returns what rsan_load_fact_i returned: 1 when W(x) ⊑ Ta is known (for rsan_hb_load_i).
 * mo: the load's order (an atomic load, a failed CAS), whose fact may then be elided
 * (rsan_load_fact_redundant); -1: never. */
static RSAN_ALWAYS_INLINE int rsan_sc_load_mo_i(rsan_thread *t, rsan_loc *l, int mo, int *defer) {
  int known = rsan_load_fact_i(t, l, mo, defer);
  if (!known) rsan_join_t(t, RSAN_X_SC, rsan_loc_wsc(l)); /* known: Wsc(x) ⊑ Tsc already */
  RSAN_ASSERT(rsan_clk_leq(rsan_loc_wsc(l), &t->Tsc));
  /* Msc(x) only grows while x lives (a write's Msc(x) := Tsc follows Tsc ⊔= Msc(x)), so once
   * it contains a version of Tsc, joining that version again adds nothing: a re-read that
   * changed no clock (a spin loop) costs no join. The version it is known to contain: Wsc's
   * while Msc = Wsc (since the last write), else msc_in (set by the load that ended that) */
  if (t->Tsc.ver != (l->msc_wsc ? l->Wsc.ver : l->msc_in)) {
    if (l->msc_wsc) { /* Msc(x) = Wsc(x) ⊑ Tsc */
      rsan_export_t(&l->Msc, t, RSAN_X_SC);
      l->msc_wsc = 0;
    } else {
      rsan_join_loc_t(&l->Msc, t, RSAN_X_SC);
    }
    l->msc_in = t->Tsc.ver;
  }
  return known;
}
/* the same without the fact's elision (the out-of-line rules: sync primitives, waits) */
static RSAN_ALWAYS_INLINE int rsan_sc_load_i(rsan_thread *t, rsan_loc *l, int *defer) {
  return rsan_sc_load_mo_i(t, l, -1, defer);
}

/* Store (tU != 0) or RMW / successful CAS / F-RMW (tU == 0: no U increment):
 * Msc(x) ⊔= x@t; Tsc ⊔= Msc(x); Wsc(x) := Tsc; Msc(x) := Tsc (U: x@tU, or nothing).
 * x@t (with stampU) is the fact, already in Tsc. */
static RSAN_ALWAYS_INLINE void rsan_sc_write_i(rsan_thread *t, rsan_loc *l, uint64_t ts, uint64_t tU,
                                               int *defer) {
  (void)ts;
  (void)tU;
  RSAN_ASSERT(ts == l->stamp && (!tU || tU == l->stampU));
  RSAN_ASSERT(l->cls <= RSAN_LOC_NOW); /* Wsc's line (rsan_write_cls) */
  rsan_add_fact_i(t, l, defer); /* a write's stamp is new: no fact has it yet */
  rsan_join_t(t, RSAN_X_SC, rsan_loc_msc(l));
  rsan_export_t(&l->Wsc, t, RSAN_X_SC);
  /* Msc(x) := Tsc, which Wsc(x) now holds: one copy instead of two. While msc_wsc, the
   * version Msc(x) is known to contain is Wsc(x)'s (Tsc's now: the same content), so msc_in
   * is not stored: a write leaves the record's line 5 unwritten (docs/design/clocks.md §17) */
  l->msc_wsc = 1;
}

/* ---- hb side (RC20): algorithm.md §3.3 ---- */
/* Ta ⊔= src, and Tc ⊔= src when acq */
static RSAN_ALWAYS_INLINE void rsan_join_hb_i(rsan_thread *t, const rsan_clk *src, int acq) {
  rsan_join_t(t, RSAN_X_A, src);
  if (acq) rsan_join_t(t, RSAN_X_C, src);
}
/* Load(mo): Ta ⊔= W(x); mo ⊒ acq: Tc ⊔= W(x), else Tc ⊔= W(x)|x (the fact). known: W(x) ⊑ Ta
 * already (rsan_load_fact_i), so only Tc's join is left. */
static RSAN_ALWAYS_INLINE void rsan_hb_load_i(rsan_thread *t, rsan_loc *l, int mo, int known) {
  const rsan_clk *w = rsan_loc_w(l);
  if (!known) rsan_join_t(t, RSAN_X_A, w);
  if (mo_acq(mo)) rsan_join_t(t, RSAN_X_C, w);
}
/* Store(mo): Ta, Tc ⊔= x@t (the fact); mo ⊒ rel: W(x) := Tc, else W(x) := Tr ⊔ x@t, kept as
 * W(x) := Tr: x@t would only ever reach a reader of x, whose own fact covers it. */
static RSAN_ALWAYS_INLINE void rsan_hb_store_i(rsan_thread *t, rsan_loc *l, int mo) {
  if (mo_rel(mo)) {
    RSAN_ASSERT(l->cls == RSAN_LOC_FULL); /* rsan_write_cls */
    rsan_export_t(&l->W, t, RSAN_X_C);
  } else if (RSAN_LIKELY(l->cls == RSAN_LOC_FULL)) {
    rsan_export_t(&l->W, t, RSAN_X_R);
  } else { /* W(x) = ⊥ := Tr = ⊥ (rsan_write_cls) */
    RSAN_ASSERT(!t->Tr.ver);
  }
}
/* RMW(mo): W(x) ⊔= x@t; Ta, Tc ⊔= x@t (the fact). Read part: Ta ⊔= W(x); mo ⊒ acq:
 * Tc ⊔= W(x), else TcU ⊔= WU(x)|x (the fact). Write part, joined (release sequences run
 * through RMWs): mo ⊒ rel: W(x) ⊔= Tc (:= Tc when acquire too: Tc ⊒ W(x) then), else
 * W(x) ⊔= Tr. W(x)'s own x@t is dropped as in a relaxed store. */
static RSAN_ALWAYS_INLINE void rsan_hb_rmw_i(rsan_thread *t, rsan_loc *l, int mo) {
  if (RSAN_UNLIKELY(l->cls != RSAN_LOC_FULL)) { /* joins with W(x) = ⊥, W(x) ⊔= Tr = ⊥ */
    RSAN_ASSERT(!mo_rel(mo) && !t->Tr.ver);
    return;
  }
  rsan_join_hb_i(t, &l->W, mo_acq(mo));
  if (mo_rel(mo) && mo_acq(mo)) {
    RSAN_ASSERT(rsan_clk_leq(&l->W, &t->Tc));
    rsan_export_t(&l->W, t, RSAN_X_C);
  } else if (mo_rel(mo)) {
    rsan_join_loc_t(&l->W, t, RSAN_X_C);
  } else {
    rsan_join_loc_t(&l->W, t, RSAN_X_R);
  }
}

void rsan_fence_acq(rsan_thread *t);
void rsan_fence_rel(rsan_thread *t);
void rsan_fence_sc(rsan_thread *t);
void rsan_fence_sc_step(rsan_thread *t); /* a scheduling point, then rsan_fence_sc without its race part */

/* ---- the real memory operations (seq_cst hardware atomics) ---- */
static inline uint64_t mem_load(const void *p, int size) {
  switch (size) {
  case 1: return __atomic_load_n((const uint8_t *)p, __ATOMIC_SEQ_CST);
  case 2: return __atomic_load_n((const uint16_t *)p, __ATOMIC_SEQ_CST);
  case 4: return __atomic_load_n((const uint32_t *)p, __ATOMIC_SEQ_CST);
  default: return __atomic_load_n((const uint64_t *)p, __ATOMIC_SEQ_CST);
  }
}

static inline void mem_store(void *p, uint64_t v, int size) {
  switch (size) {
  case 1: __atomic_store_n((uint8_t *)p, (uint8_t)v, __ATOMIC_SEQ_CST); break;
  case 2: __atomic_store_n((uint16_t *)p, (uint16_t)v, __ATOMIC_SEQ_CST); break;
  case 4: __atomic_store_n((uint32_t *)p, (uint32_t)v, __ATOMIC_SEQ_CST); break;
  default: __atomic_store_n((uint64_t *)p, v, __ATOMIC_SEQ_CST); break;
  }
}

/* Returns 1 on success; *old receives the value read. */
static inline int mem_cas(void *p, uint64_t *old, uint64_t des, int weak, int size) {
  switch (size) {
  case 1: {
    uint8_t e = (uint8_t)*old;
    int ok = __atomic_compare_exchange_n((uint8_t *)p, &e, (uint8_t)des, weak, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST);
    *old = e;
    return ok;
  }
  case 2: {
    uint16_t e = (uint16_t)*old;
    int ok = __atomic_compare_exchange_n((uint16_t *)p, &e, (uint16_t)des, weak, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST);
    *old = e;
    return ok;
  }
  case 4: {
    uint32_t e = (uint32_t)*old;
    int ok = __atomic_compare_exchange_n((uint32_t *)p, &e, (uint32_t)des, weak, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST);
    *old = e;
    return ok;
  }
  default: {
    uint64_t e = *old;
    int ok = __atomic_compare_exchange_n((uint64_t *)p, &e, des, weak, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *old = e;
    return ok;
  }
  }
}

static inline uint64_t size_mask(int size) { return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1; }
static inline int64_t sext(uint64_t v, int size) {
  int sh = 64 - 8 * size;
  return sh ? (int64_t)(v << sh) >> sh : (int64_t)v;
}


/* A write's history entry (history.c), fetched for ownership while the checks and rules run: a
 * line another thread wrote last, a miss if found out only when used. Its address is in line 0,
 * so it is asked for once the lock is held (the memory the write writes was asked for before
 * the lock, rsan_loc_prefetch_early). Returns that entry when the ring is in its steady state
 * (hist_next >= RSAN_HIST: the entry of write hist_next, rsan_hist_next), for
 * rsan_hist_record_at; NULL while the ring may still grow (the record then takes the entry). */
static inline rsan_hist *rsan_loc_prefetch_write(const rsan_loc *l, const void *p) {
  (void)p;
  if (RSAN_UNLIKELY(l->hist == NULL)) return NULL;
  rsan_hist *h = &l->hist[l->hist_next % RSAN_HIST]; /* one line */
  rsan_prefetchw(h);
  return RSAN_LIKELY(l->hist_next >= RSAN_HIST) ? h : NULL;
}

static inline void rsan_loc_touch(rsan_loc *l, const void *p, int size) {
  if (RSAN_UNLIKELY(!l->init_known)) {
    l->init_value = mem_load(p, size);
    l->init_known = 1;
  }
}


/* algorithm.md §3.1, on the thread's clocks at x (rsan_loc_query). With exact values the
 * check is the rule itself. When the window of facts overflowed, a violation is reported only
 * when certain (lo(Tsc) > hi(Tc)); a check the bounds cannot decide is counted in
 * rsan_undecided_checks and not reported (a miss, never a false alarm). */
typedef struct rsan_view {
  rsan_q c, sc; /* Tc and Tsc at x (and their U twins) */
} rsan_view;
static inline void rsan_view_get(const rsan_thread *t, rsan_loc *l, rsan_view *v) {
  rsan_loc_query2(l, &t->Tc, &t->Tsc, &v->c, &v->sc);
}
/* The common case of every check, answered without the query: the newest window fact that Tc
 * or Tsc contains is contained in both. Facts are in the window in lock order with
 * non-decreasing timestamps, and rsan_loc_query2 answers each clock's value at x from the
 * newest window fact it contains (§3: the newest contained fact is the max): when that fact is
 * the same one for both clocks, both answers are its timestamps, Tc(x) = Tsc(x) and
 * TcU(x) = TscU(x), exact, and the query has no side effect. So no read, write or value check
 * can find a violation, nor be undecided: each returns 0 here. 0: not shown (the query
 * decides). The newest fact first (two compares; no order between Tc and Tsc is assumed); the
 * next ones (rsan_loc_same_older, facts.c) only when it is in neither clock: a read of a
 * write its thread does not know yet, as a completed wait's (docs/design/clocks.md §32). */
static RSAN_ALWAYS_INLINE int rsan_view_same_at_i(const rsan_thread *t, const rsan_loc *l) {
  if (RSAN_UNLIKELY(l->nfacts == l->fold)) return 0; /* no fact in the window */
  const rsan_fact *f = &rsan_loc_facts(l)[(l->nfacts - 1) & (l->fcap - 1)];
  if (RSAN_LIKELY(f->epoch <= rsan_clk_at(&t->Tc, f->slot))) return f->epoch <= rsan_clk_at(&t->Tsc, f->slot);
  if (f->epoch <= rsan_clk_at(&t->Tsc, f->slot)) return 0; /* in Tsc only */
  return rsan_loc_same_older(l, &t->Tc, &t->Tsc);
}
/* (RSAN_DEBUG: every 1 checked against the query's scan, rsan_loc_same_checked) */
static RSAN_ALWAYS_INLINE int rsan_view_same_at(const rsan_thread *t, const rsan_loc *l) {
  int same = rsan_view_same_at_i(t, l);
  RSAN_ASSERT(!same || rsan_loc_same_checked(l, &t->Tc, &t->Tsc));
  return same;
}
static inline int rsan_view_exact(const rsan_view *v) {
  return v->c.lo == v->c.hi && v->c.loU == v->c.hiU && v->sc.lo == v->sc.hi && v->sc.loU == v->sc.hiU;
}
/* sc > c for certain; counts the undecided case */
static inline int rsan_certainly_after(uint64_t sc_lo, uint64_t sc_hi, uint64_t c_lo, uint64_t c_hi) {
  if (sc_lo > c_hi) return 1;
  if (RSAN_UNLIKELY(sc_hi > c_lo)) __atomic_fetch_add(&rsan_undecided_checks, 1, __ATOMIC_RELAXED);
  return 0;
}
static RSAN_ALWAYS_INLINE int rsan_read_violation(const rsan_thread *t, rsan_loc *l) {
  if (RSAN_LIKELY(rsan_view_same_at(t, l))) return 0;
  rsan_view v;
  rsan_view_get(t, l, &v);
  return rsan_certainly_after(v.sc.lo, v.sc.hi, v.c.lo, v.c.hi);
}
static RSAN_ALWAYS_INLINE int rsan_write_violation(const rsan_thread *t, rsan_loc *l) {
  if (RSAN_LIKELY(rsan_view_same_at(t, l))) return 0;
  rsan_view v;
  rsan_view_get(t, l, &v);
  return rsan_certainly_after(v.sc.loU, v.sc.hiU, v.c.loU, v.c.hiU);
}

static inline int rsan_checks_on(const rsan_loc *l) { return rsan_flag.report_robustness && !l->nocheck; }

/* The floating-point operations of rsan_rmw_apply, out of line (memop.c). */
uint64_t rsan_rmw_apply_fp(int op, uint64_t old, uint64_t v, int size);
/* The new value of an atomicrmw (rsan_interface.h, enum rsan_rmw_op), at the access size. */
static inline uint64_t rsan_rmw_apply(int op, uint64_t old, uint64_t v, int size) {
  uint64_t m = size_mask(size);
  old &= m;
  v &= m;
  uint64_t r;
  switch (op) {
  case RSAN_RMW_XCHG: r = v; break;
  case RSAN_RMW_ADD: r = old + v; break;
  case RSAN_RMW_SUB: r = old - v; break;
  case RSAN_RMW_AND: r = old & v; break;
  case RSAN_RMW_NAND: r = ~(old & v); break;
  case RSAN_RMW_OR: r = old | v; break;
  case RSAN_RMW_XOR: r = old ^ v; break;
  case RSAN_RMW_MAX: r = sext(old, size) >= sext(v, size) ? old : v; break;
  case RSAN_RMW_MIN: r = sext(old, size) <= sext(v, size) ? old : v; break;
  case RSAN_RMW_UMAX: r = old >= v ? old : v; break;
  case RSAN_RMW_UMIN: r = old <= v ? old : v; break;
  case RSAN_RMW_FADD:
  case RSAN_RMW_FSUB:
  case RSAN_RMW_FMAX:
  case RSAN_RMW_FMIN:
  case RSAN_RMW_FMAXIMUM:
  case RSAN_RMW_FMINIMUM: r = rsan_rmw_apply_fp(op, old, v, size); break;
  case RSAN_RMW_UINC_WRAP: r = old >= v ? 0 : old + 1; break;
  case RSAN_RMW_UDEC_WRAP: r = (old == 0 || old > v) ? v : old - 1; break;
  case RSAN_RMW_USUB_COND: r = old >= v ? old - v : old; break;
  case RSAN_RMW_USUB_SAT: r = old >= v ? old - v : 0; break;
  default: r = old; break; /* unknown op: leave memory unchanged */
  }
  return r & m;
}

/* Performs the RMW op (enum rsan_rmw_op); returns the old value, *newv the new one. The
 * integer operations the hardware has are one atomic instruction (one exclusive access to the
 * memory's line instead of a load and a CAS); the others a CAS loop (memop.c). */
uint64_t rsan_mem_rmw_loop(void *p, int op, uint64_t v, int size, uint64_t *newv);
#define RSAN_RMW_FETCH(T, FN) ((uint64_t)FN((T *)p, (T)v, __ATOMIC_SEQ_CST))
#define RSAN_RMW_SIZED(FN) \
  (size == 1   ? RSAN_RMW_FETCH(uint8_t, FN) \
   : size == 2 ? RSAN_RMW_FETCH(uint16_t, FN) \
   : size == 4 ? RSAN_RMW_FETCH(uint32_t, FN) \
               : RSAN_RMW_FETCH(uint64_t, FN))
static inline uint64_t rsan_mem_rmw(void *p, int op, uint64_t v, int size, uint64_t *newv) {
  uint64_t old;
  v &= size_mask(size);
  switch (op) {
  case RSAN_RMW_XCHG: old = RSAN_RMW_SIZED(__atomic_exchange_n); break;
  case RSAN_RMW_ADD: old = RSAN_RMW_SIZED(__atomic_fetch_add); break;
  case RSAN_RMW_SUB: old = RSAN_RMW_SIZED(__atomic_fetch_sub); break;
  case RSAN_RMW_AND: old = RSAN_RMW_SIZED(__atomic_fetch_and); break;
  case RSAN_RMW_OR: old = RSAN_RMW_SIZED(__atomic_fetch_or); break;
  case RSAN_RMW_XOR: old = RSAN_RMW_SIZED(__atomic_fetch_xor); break;
  default: return rsan_mem_rmw_loop(p, op, v, size, newv);
  }
  *newv = rsan_rmw_apply(op, old, v, size);
  return old;
}
#undef RSAN_RMW_SIZED
#undef RSAN_RMW_FETCH

/* ---- history.c ---- */
/* history.c: a key the thread's cache lacks, from the pool, left in the cache's slot */
uint32_t rsan_hist_key_miss(rsan_thread *t, const rsan_hkey *k, unsigned slot);
/* The index of the write's key (rsan_location.h; site, the stack s0..s3 innermost first, its
 * kind): from the thread's cache when it has it (a write from the same site, call path and kind
 * as one of its recent ones), else the pool's. The cache is direct-mapped by the site's and the
 * innermost caller's low bits (a site id's low half is its index in its module: neighbouring
 * sites, neighbouring slots); a slot holds one key and its index, so a hit compares every byte:
 * the index is the key's whatever the slot; an empty (zeroed) slot matches no write's key, whose
 * kind has a size >= 1 (docs/design/clocks.md §28). The key is in registers: compared with the
 * slot's six words as one OR of their differences (one branch), and stored as an rsan_hkey only
 * on a miss, for the pool (docs/design/clocks.md §30). */
static RSAN_ALWAYS_INLINE uint32_t rsan_hist_key_i(rsan_thread *t, uint64_t site, uint64_t s0, uint64_t s1,
                                                   uint64_t s2, uint64_t s3, uint64_t kind) {
  unsigned slot = ((unsigned)site ^ (unsigned)s0 * 3u) & (RSAN_HKC - 1);
  const rsan_hkc *c = &t->hkc[slot];
  if (RSAN_LIKELY(((c->k.site ^ site) | (c->k.stack[0] ^ s0) | (c->k.stack[1] ^ s1) | (c->k.stack[2] ^ s2) |
                   (c->k.stack[3] ^ s3) | (c->k.kind ^ kind)) == 0))
    return c->idx;
  _Static_assert(RSAN_HIST_STACK == 4, "the key's stack in four values");
  rsan_hkey k = {.site = site, .stack = {s0, s1, s2, s3}, .kind = kind};
  return rsan_hist_key_miss(t, &k, slot);
}
/* A write's history entry (inline in the atomic entry points: every write makes one), in h
 * when rsan_loc_prefetch_write gave it (hist and hist_next are as they were then: only a
 * write's record changes them, docs/design/clocks.md §24), else the ring's next. Its key's
 * call stack is rsan_thread_stack(t, fa, ., RSAN_HIST_STACK)'s, walked here. */
static RSAN_ALWAYS_INLINE void rsan_hist_record_at(rsan_loc *l, rsan_hist *h, rsan_thread *t, uintptr_t fa,
                                                   uint64_t ts, int rmw, uint64_t site, uint64_t value,
                                                   int order, int op, int rmw_op, int size) {
  /* The walk of rsan_thread_stack(t, fa, ., RSAN_HIST_STACK) in registers: when the innermost
   * min(depth, 4) frames are all fresh (above the hook's frame fa: none left stale by a longjmp),
   * the walk takes exactly those, innermost first, and stops (at 4, or at the stack's bottom);
   * else rsan_thread_stack itself (docs/design/clocks.md §30). */
  uint32_t d = t->depth;
  const uintptr_t *fr = t->shadow_frame + d;
  const uint64_t *st = t->shadow_site + d;
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int fresh = 1;
  if (d >= 1) {
    fresh &= fr[-1] > fa, s0 = st[-1];
    if (d >= 2) {
      fresh &= fr[-2] > fa, s1 = st[-2];
      if (d >= 3) {
        fresh &= fr[-3] > fa, s2 = st[-3];
        if (d >= 4) fresh &= fr[-4] > fa, s3 = st[-4];
      }
    }
  }
  if (RSAN_UNLIKELY(!fresh)) {
    uint64_t out[RSAN_HIST_STACK] = {0};
    rsan_thread_stack(t, fa, out, RSAN_HIST_STACK);
    s0 = out[0], s1 = out[1], s2 = out[2], s3 = out[3];
  }
  uint32_t key = rsan_hist_key_i(t, site, s0, s1, s2, s3, rsan_hkey_kind(order, op, rmw_op, size));
  if (RSAN_LIKELY(h != NULL)) {
    RSAN_ASSERT(l->hist_next >= RSAN_HIST && h == &l->hist[l->hist_next % RSAN_HIST]);
    l->hist_next++;
  } else {
    h = rsan_hist_next(l); /* grows the ring on demand (rsan_internal.h) */
  }
  h->ts = ts;
  h->tsU = l->stampU;
  h->value = value;
  h->key = key << 1 | (uint32_t)(rmw != 0);
  h->tid = t->tid;
}
static RSAN_ALWAYS_INLINE void rsan_hist_record(rsan_loc *l, rsan_thread *t, uintptr_t fa, uint64_t ts,
                                                int rmw, uint64_t site, uint64_t value, int order, int op,
                                                int rmw_op, int size) {
  rsan_hist_record_at(l, NULL, t, fa, ts, rmw, site, value, order, op, rmw_op, size);
}

/* 0: the report would repeat one the thread already met (dropped by the dedup); r untouched */
int rsan_fill_report(rsan_report_info *r, rsan_thread *t, rsan_loc *l, int is_write, int op, int rmw_op,
                     int order, int size, uint64_t site, uintptr_t fa);

/* ---- value.c: the value checks (algorithm.md §4) ---- */
int rsan_stale_value_read(const rsan_thread *t, rsan_loc *l, uint64_t v, uint64_t m, int want_eq);
int rsan_stale_value_rmw(const rsan_thread *t, rsan_loc *l, uint64_t e, uint64_t m);

#endif /* RSAN_ENGINE_H */
