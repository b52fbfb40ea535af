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
  RSAN_ASSERT(rsan_clk_leq(rsan_loc_w(l), rsan_loc_wsc(l)));
  RSAN_ASSERT(rsan_clk_leq(rsan_loc_wsc(l), rsan_loc_msc(l)));
}
#endif

/* ---- the rules of loads and writes: rsan_engine.h (inline in the atomic entry points);
 * these are their out-of-line copies for the other callers ---- */
__thread const rsan_thread *rsan_tls_fact_thread;
__thread uint64_t rsan_tls_fact_epoch0, rsan_tls_fact_gen;

void rsan_sc_load(rsan_thread *t, rsan_loc *l) { (void)rsan_sc_load_i(t, l, NULL); }
void rsan_sc_write(rsan_thread *t, rsan_loc *l, uint64_t ts, uint64_t tU) {
  rsan_sc_write_i(t, l, ts, tU, NULL);
}
void rsan_hb_load(rsan_thread *t, rsan_loc *l, int mo) { rsan_hb_load_i(t, l, mo, 0); }
/* a completed wait's Load(mo) (atomic.c op_wait): both sides, its fact elided when it adds
 * nothing (rsan_load_fact_redundant) */
void rsan_load_mo(rsan_thread *t, rsan_loc *l, int mo) {
  int known = rsan_sc_load_mo_i(t, l, mo, NULL);
  rsan_hb_load_i(t, l, mo, known);
}
void rsan_hb_store(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts, uint64_t tU) {
  (void)ts;
  (void)tU;
  rsan_hb_store_i(t, l, mo);
}
void rsan_hb_rmw(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts) {
  (void)ts;
  rsan_hb_rmw_i(t, l, mo);
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
