/* The clock rules: algorithm.md §3.2 (hb_SC side), §3.3 (hb side, fences) with
 * architecture.md "Decisions and pitfalls" (SC fence on both sides, timestamps computed once
 * per operation by the caller). Each function is one rule, applied to a clock and its U twin
 * at once (rsan_internal.h, fused clocks); the caller holds the location lock. */
#include "rsan_engine.h"
#include "rsan_sched.h"

/* ---- invariants (algorithm.md §3.4), debug builds only ---- */
void rsan_loc_check_invariants(const rsan_loc *l) {
#ifdef RSAN_DEBUG
  RSAN_ASSERT(rsan_clk_get(&l->W, l->id) == l->stamp);
  RSAN_ASSERT(rsan_clk_get(&l->Wsc, l->id) == l->stamp);
  RSAN_ASSERT(rsan_clk_getU(&l->W, l->id) == l->stampU);
  RSAN_ASSERT(rsan_clk_leq(&l->W, &l->Wsc, 1));
  RSAN_ASSERT(rsan_clk_leq(&l->Wsc, &l->Msc, 1));
#else
  (void)l;
#endif
}

/* Clocks are fused with their U twins (rsan_internal.h): each rule below is the rule of
 * algorithm.md for the plain clock and, in the same call, for its U twin. Where a rule gives
 * the plain side x@t and the U side nothing (RMW), the call passes tsU = 0 (max with 0).
 *
 * Two thread clocks holding the same value (e.g. Tc and Ta after an acquire fence) that get
 * the same update are updated once and shared again: one copy instead of two. a is the higher
 * clock (Ta before Tc): a lower clock never gets ahead of a higher one (rsan_internal.h). */
static inline void set_max2(rsan_clk *a, rsan_clk *b, uint64_t id, uint64_t ts, uint64_t tsU) {
  if (rsan_clk_same(a, b)) {
    rsan_clk_set_max(a, id, ts, tsU);
    rsan_clk_assign(b, a);
  } else {
    rsan_clk_set_max(a, id, ts, tsU);
    rsan_clk_set_max(b, id, ts, tsU);
  }
}

/* ---- hb_SC side: algorithm.md §3.2 ---- */
/* Load: Msc(x) ⊔= Tsc; Tsc ⊔= Wsc(x) (and the U pair: MscU(x) ⊔= TscU; TscU ⊔= WscU(x)). */
void rsan_sc_load(rsan_thread *t, rsan_loc *l) {
  rsan_clk_join(&l->Msc, &t->Tsc);
  rsan_clk_join(&t->Tsc, &l->Wsc);
}

/* Store (tU != 0) or RMW / successful CAS / F-RMW (tU == 0: no U increment):
 * Msc(x) ⊔= x@t; Tsc ⊔= Msc(x); Wsc(x) := Tsc; Msc(x) := Tsc (U: x@tU, or nothing).
 * Computed as Tsc ⊔= Msc(x); Tsc ⊔= x@t (the same value: Msc(x) is overwritten anyway), so
 * Msc(x) is never copied; Wsc(x) and Msc(x) then share Tsc's buffer. */
void rsan_sc_write(rsan_thread *t, rsan_loc *l, uint64_t ts, uint64_t tU) {
  rsan_clk_join(&t->Tsc, &l->Msc);
  rsan_clk_set_max(&t->Tsc, l->id, ts, tU);
  rsan_clk_assign(&l->Wsc, &t->Tsc);
  rsan_clk_assign(&l->Msc, &t->Tsc);
}

/* ---- hb side (RC20): algorithm.md §3.3 ---- */
/* Load(mo): Ta ⊔= W(x); mo ⊒ acq: Tc ⊔= W(x), else Tc ⊔= W(x)|x (coherence only); U alike. */
void rsan_hb_load(rsan_thread *t, rsan_loc *l, int mo) {
  int same = rsan_clk_same(&t->Tc, &t->Ta);
  rsan_clk_join(&t->Ta, &l->W);
  if (mo_acq(mo)) {
    if (same) /* Tc = Ta before: Tc ⊔ W(x) = Ta ⊔ W(x) */
      rsan_clk_assign(&t->Tc, &t->Ta);
    else
      rsan_clk_join(&t->Tc, &l->W);
  } else {
    rsan_clk_join_restricted(&t->Tc, &l->W, l->id);
  }
}

/* Store(mo): Ta, Tc ⊔= x@t (U: x@tU); mo ⊒ rel: W(x) := Tc, else W(x) := Tr ⊔ x@t (a relaxed
 * store releases only what a release fence did). (W(x) ⊔= x@t first is subsumed.) */
void rsan_hb_store(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts, uint64_t tU) {
  set_max2(&t->Ta, &t->Tc, l->id, ts, tU);
  if (mo_rel(mo)) {
    rsan_clk_assign(&l->W, &t->Tc);
  } else {
    rsan_clk_assign(&l->W, &t->Tr);
    rsan_clk_set_max(&l->W, l->id, ts, tU);
  }
}

/* RMW(mo): W(x) ⊔= x@t; Ta, Tc ⊔= x@t (no U increment). Read part: Ta ⊔= W(x); mo ⊒ acq:
 * Tc ⊔= W(x), else TcU ⊔= WU(x)|x. Write part, joined (release sequences run through RMWs):
 * mo ⊒ rel: W(x) ⊔= Tc, else W(x) ⊔= Tr.
 * Computed with W(x) ⊔= x@t moved to the end (the same values: Ta and Tc get x@t anyway, and
 * W(x)'s final value contains x@t either through Tc or explicitly), so W(x) is not copied
 * before it is replaced; the restricted join covers both sides (the plain side is a no-op:
 * Tc(x) = t already). */
void rsan_hb_rmw(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts) {
  int same = rsan_clk_same(&t->Tc, &t->Ta);
  rsan_clk_join(&t->Ta, &l->W);
  rsan_clk_set_max(&t->Ta, l->id, ts, 0);
  if (mo_acq(mo)) {
    if (same)
      rsan_clk_assign(&t->Tc, &t->Ta);
    else {
      rsan_clk_join(&t->Tc, &l->W);
      rsan_clk_set_max(&t->Tc, l->id, ts, 0);
    }
  } else {
    rsan_clk_join_restricted(&t->Tc, &l->W, l->id);
    rsan_clk_set_max(&t->Tc, l->id, ts, 0);
  }
  if (mo_rel(mo) && mo_acq(mo)) {
    RSAN_ASSERT(rsan_clk_leq(&l->W, &t->Tc, 3));
    rsan_clk_assign(&l->W, &t->Tc); /* Tc ⊒ W(x) ⊔ x@t here: W(x) ⊔ x@t ⊔ Tc = Tc */
  } else if (mo_rel(mo)) {
    rsan_clk_join(&l->W, &t->Tc);
  } else {
    rsan_clk_join(&l->W, &t->Tr);
    rsan_clk_set_max(&l->W, l->id, ts, 0);
  }
}

/* ---- fences: algorithm.md §3.3 and architecture.md (SC fence on both sides) ---- */
/* Tc := Ta (U alike): shares Ta's buffer, nothing when they are already equal. race: also the
 * race detector's acquire fence (algorithm.md §5) */
static void fence_acq(rsan_thread *t, int race) {
  if (!rsan_clk_same(&t->Tc, &t->Ta)) rsan_clk_assign(&t->Tc, &t->Ta);
  if (race) rsan_race_fence_acq(t); /* algorithm.md §5, fence acq */
}
void rsan_fence_acq(rsan_thread *t) { fence_acq(t, 1); }
/* Tr := Tc (U alike) */
static void fence_rel(rsan_thread *t, int race) {
  if (!rsan_clk_same(&t->Tr, &t->Tc)) rsan_clk_assign(&t->Tr, &t->Tc);
  if (race) rsan_race_fence_rel(t); /* algorithm.md §5, fence rel */
}
void rsan_fence_rel(rsan_thread *t) { fence_rel(t, 1); }
/* acquire part; RMW(F, acq_rel) on both robustness sides under the global SC lock (F's entry
 * lives inline in every clock, so bumping it copies nothing; joins with F's clocks are skipped
 * when they are known to be contained, e.g. when this thread made the last fence); release
 * part. For races (algorithm.md §5 row "fence sc") an SC fence is an acq_rel fence and F is
 * not touched: C11/RC11 hb has no psc edges. race = 0 (the fences around a seq_cst access
 * under sc_accesses=fenced): no race clock changes at all, the access itself is acq/rel. */
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
}
void rsan_fence_sc(rsan_thread *t) { fence_sc(t, 1); }

/* The SC fence of a seq_cst access under sc_accesses=fenced, as its own scheduling point:
 * a controlled scheduler must be able to preempt between the leading fence, the access and
 * the trailing fence (docs/scheduling.md; testsuite/reference FENCED_SC_STORE). */
void rsan_fence_sc_step(rsan_thread *t) {
  RSAN_SCHED_POINT(RSAN_SK_FENCE_SC, NULL, 0);
  fence_sc(t, 0);
}
