/* The clock rules: algorithm.md §3.2 (hb_SC side), §3.3 (hb side, fences) with
 * architecture.md "Decisions and pitfalls" (SC fence on both sides, timestamps computed once
 * per operation by the caller). Each function is one rule, applied to a clock and its U twin
 * at once (rsan_internal.h, fused clocks); the caller holds the location lock. */
#include "rsan_engine.h"
#include "rsan_sched.h"
#include "rsan_sched_fence.h"

/* ---- invariants (algorithm.md §3.4 on the vector clocks), debug builds only ----
 * W(x) ⊑ Wsc(x) ⊑ Msc(x) pointwise. (W(x)(x) = stamp(x) no longer holds of the vector clock:
 * a relaxed store's W(x) := Tr ⊔ x@t keeps only Tr, docs/design/clocks.md; every reader adds
 * its own fact on x, which covers x@t.) */
#ifdef RSAN_DEBUG
void rsan_loc_check_invariants(const rsan_loc *l) {
  RSAN_ASSERT(rsan_clk_leq(&l->W, &l->Wsc));
  RSAN_ASSERT(rsan_clk_leq(&l->Wsc, rsan_loc_msc(l)));
}
#endif

/* ---- facts (docs/design/clocks.md) ----
 * Every singleton a rule of §3.2/§3.3 gives a thread clock is the access's fact
 * (x, stamp(x), stampU(x)) after the operation: a store's x@t / x@tU, a load's coherence
 * W(x)|x (W(x)(x) = stamp(x), WU(x)(x) = stampU(x), §3.4), an RMW's x@t with WU(x)|x. Tc, Ta
 * and Tsc all receive it, Tr does not: the fact gets the thread's next epoch, which Tc, Ta
 * and Tsc hold at the thread's slot. Made before the rules, so the clocks a write exports
 * (Wsc(x) := Tsc, W(x) := Tc) contain it; a load's Msc(x) ⊔= Tsc then also contains it,
 * which adds nothing (Msc(x)(x) = stamp(x), MscU(x)(x) = stampU(x) already). F's facts are
 * never queried and not made. */
static inline void add_fact(rsan_thread *t, rsan_loc *l, int write) {
  if (RSAN_UNLIKELY(l->id == 0)) return; /* F */
  /* a re-read: the older fact is the same (a write changed the stamp: it always adds one) */
  if (!write && rsan_loc_has_current_fact(l, t->slot)) return;
  uint64_t e = ++t->epoch;
  uint32_t s = t->slot;
  if (RSAN_LIKELY(s < t->Tc.n && s < t->Ta.n && s < t->Tsc.n)) { /* own entries exist: set them */
    rsan_clk_e(&t->Tc)[s] = e;
    rsan_clk_e(&t->Ta)[s] = e;
    rsan_clk_e(&t->Tsc)[s] = e;
    t->Tc.ver = rsan_clk_newver();
    t->Ta.ver = rsan_clk_newver();
    t->Tsc.ver = rsan_clk_newver();
  } else {
    rsan_clk_set(&t->Tc, s, e);
    rsan_clk_set(&t->Ta, s, e);
    rsan_clk_set(&t->Tsc, s, e);
  }
  rsan_loc_add_fact(l, s, e);
}

/* Tsc ⊔= src */
static inline void join_sc(rsan_thread *t, const rsan_clk *src) { rsan_clk_join(&t->Tsc, src); }
/* Ta ⊔= src, and Tc ⊔= src when acq */
static inline void join_hb(rsan_thread *t, const rsan_clk *src, int acq) {
  rsan_clk_join(&t->Ta, src);
  if (acq) rsan_clk_join(&t->Tc, src);
}

/* ---- hb_SC side: algorithm.md §3.2 ---- */
/* Load: Msc(x) ⊔= Tsc; Tsc ⊔= Wsc(x) (and the U pair: MscU(x) ⊔= TscU; TscU ⊔= WscU(x)). */
void rsan_sc_load(rsan_thread *t, rsan_loc *l) {
  add_fact(t, l, 0);
  /* Msc(x) only grows while x lives (a write's Msc(x) := Tsc follows Tsc ⊔= Msc(x)), so once
   * it contains a version of Tsc, joining that version again adds nothing: a re-read that
   * changed no clock (a spin loop) costs no join */
  if (t->Tsc.ver != l->msc_in) {
    if (l->msc_wsc) { /* Msc(x) = Wsc(x) since the last write: materialise it */
      rsan_clk_assign(&l->Msc, &l->Wsc);
      l->msc_wsc = 0;
    }
    rsan_clk_join(&l->Msc, &t->Tsc);
    l->msc_in = t->Tsc.ver;
  }
  join_sc(t, &l->Wsc);
}

/* Store (tU != 0) or RMW / successful CAS / F-RMW (tU == 0: no U increment):
 * Msc(x) ⊔= x@t; Tsc ⊔= Msc(x); Wsc(x) := Tsc; Msc(x) := Tsc (U: x@tU, or nothing).
 * x@t (with stampU) is the fact, already in Tsc. */
void rsan_sc_write(rsan_thread *t, rsan_loc *l, uint64_t ts, uint64_t tU) {
  (void)ts;
  (void)tU;
  RSAN_ASSERT(ts == l->stamp && (!tU || tU == l->stampU));
  add_fact(t, l, 1);
  join_sc(t, rsan_loc_msc(l));
  rsan_clk_assign(&l->Wsc, &t->Tsc);
  l->msc_wsc = 1; /* Msc(x) := Tsc, which Wsc(x) now holds: one copy instead of two */
  l->msc_in = t->Tsc.ver;
}

/* ---- hb side (RC20): algorithm.md §3.3 ---- */
/* Load(mo): Ta ⊔= W(x); mo ⊒ acq: Tc ⊔= W(x), else Tc ⊔= W(x)|x (the fact). */
void rsan_hb_load(rsan_thread *t, rsan_loc *l, int mo) { join_hb(t, &l->W, mo_acq(mo)); }

/* Store(mo): Ta, Tc ⊔= x@t (the fact); mo ⊒ rel: W(x) := Tc, else W(x) := Tr ⊔ x@t, kept as
 * W(x) := Tr: x@t would only ever reach a reader of x, whose own fact covers it. */
void rsan_hb_store(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts, uint64_t tU) {
  (void)ts;
  (void)tU;
  rsan_clk_assign(&l->W, mo_rel(mo) ? &t->Tc : &t->Tr);
}

/* RMW(mo): W(x) ⊔= x@t; Ta, Tc ⊔= x@t (the fact). Read part: Ta ⊔= W(x); mo ⊒ acq:
 * Tc ⊔= W(x), else TcU ⊔= WU(x)|x (the fact). Write part, joined (release sequences run
 * through RMWs): mo ⊒ rel: W(x) ⊔= Tc (:= Tc when acquire too: Tc ⊒ W(x) then), else
 * W(x) ⊔= Tr. W(x)'s own x@t is dropped as in a relaxed store. */
void rsan_hb_rmw(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts) {
  (void)ts;
  join_hb(t, &l->W, mo_acq(mo));
  if (mo_rel(mo) && mo_acq(mo)) {
    RSAN_ASSERT(rsan_clk_leq(&l->W, &t->Tc));
    rsan_clk_assign(&l->W, &t->Tc);
  } else if (mo_rel(mo)) {
    rsan_clk_join(&l->W, &t->Tc);
  } else {
    rsan_clk_join(&l->W, &t->Tr);
  }
}

/* ---- fences: algorithm.md §3.3 and architecture.md (SC fence on both sides) ---- */
/* Tc := Ta (U alike). race: also the race detector's acquire fence (algorithm.md §5) */
static void fence_acq(rsan_thread *t, int race) {
  rsan_clk_assign(&t->Tc, &t->Ta);
  if (race) rsan_race_fence_acq(t); /* algorithm.md §5, fence acq */
}
void rsan_fence_acq(rsan_thread *t) { fence_acq(t, 1); }
/* Tr := Tc (U alike) */
static void fence_rel(rsan_thread *t, int race) {
  rsan_clk_assign(&t->Tr, &t->Tc);
  if (race) rsan_race_fence_rel(t); /* algorithm.md §5, fence rel */
}
void rsan_fence_rel(rsan_thread *t) { fence_rel(t, 1); }
/* acquire part; RMW(F, acq_rel) on both robustness sides under the global SC lock (F's facts
 * are never queried, so none is made: only F's clocks matter); release part. For races
 * (algorithm.md §5 row "fence sc") an SC fence is an acq_rel fence and F is not touched:
 * C11/RC11 hb has no psc edges. race = 0 (the fences around a seq_cst access under
 * sc_accesses=fenced): no race clock changes at all, the access itself is acq/rel. */
static void fence_sc(rsan_thread *t, int race) {
  fence_acq(t, race);
  rsan_loc *f = rsan_loc_fence(); /* its lock is the global SC lock */
  rsan_spin_lock(&f->lock);
  uint64_t ts = ++f->stamp; /* RMW on F: no check, no U increment */
  rsan_sc_write(t, f, ts, 0);
  rsan_hb_rmw(t, f, RSAN_ACQ_REL, ts);
  rsan_loc_check_invariants(f);
  rsan_spin_unlock(&f->lock);
  fence_rel(t, race);
  rsan_thread_check_invariants(t);
  rsan_fence_sc_done(t); /* for the scheduler's clean-fence label (sched_fence.c) */
}
void rsan_fence_sc(rsan_thread *t) { fence_sc(t, 1); }

/* The SC fence of a seq_cst access under sc_accesses=fenced, as its own scheduling point:
 * a controlled scheduler must be able to preempt between the leading fence, the access and
 * the trailing fence (docs/scheduling.md; testsuite/reference FENCED_SC_STORE). */
void rsan_fence_sc_step(rsan_thread *t) {
  RSAN_SCHED_POINT(RSAN_SK_FENCE_SC, NULL, 0);
  fence_sc(t, 0);
}
