/* The race detector's vector-clock rules (algorithm.md §5, the RSAN paper §4.2 and Appendix B):
 * thread create and join, atomic loads, stores and RMWs (under the location lock), fences.
 * race.c checks accesses against the shadow cells with the clocks these rules keep.
 *
 * Thread clocks: C (current), R (released by the last release fence), A (pending acquire:
 * what a later acquire fence makes visible). Location clock: S_x, the sync clock of an
 * atomic (in its rsan_loc, guarded by the location lock). An access's epoch is C[τ] at the
 * access; C[τ] is bumped after every release, so an epoch e of thread u happens before a
 * thread whose clock has C[u] >= e. Every release exports the clock once and then bumps, so
 * the clocks a thread exports at one epoch are all one value: what S_x's owner epoch rests on
 * (rsan_race.h rsan_vcoded, docs/design/races.md §9). */
#include "rsan_race_rules.h"

static inline int on(void) { return rsan_race_on(); }
/* Per thread slot, what the thin export of its C needs (docs/design/races.md §10): C_FRESH,
 * the slot's C base equals C but for C's own entry (then S_x := C is thin: O(1)); C_MOVED,
 * another entry of C changed since the slot's last export of C. Written only by the slot's
 * thread (a child's by its creator, before it runs). Every change of C but the bump of its
 * own entry goes through c_moved: the joins into C (acquire loads and RMWs, acquire fences,
 * join) when they change an entry, create and init. */
/* C_SAME1: one SAME export made sparse since C last moved (the count is in the bits from it on) */
enum { C_FRESH = 1, C_MOVED = 2, C_SAME1 = 4, C_SAME_MAX = 4 };
static uint8_t c_state[TID_MASK + 1];
static inline void c_moved(const rsan_thread *t) {
  uint32_t u = rsan_race_index(t);
  if (u <= TID_MASK) c_state[u] = C_MOVED;
}
/* ---- threads: algorithm.md §5 "create / join", architecture.md (R := ⊥ for the child) ---- */
void rsan_race_thread_init(rsan_thread *t) {
  c_moved(t); /* a new C: the slot's base is a previous owner's, if any */
  t->race_epoch = 1;
  rsan_vc_set(&t->C, rsan_race_index(t), 1);
  rsan_race_set_cur(t);
}

void rsan_race_thread_create(rsan_thread *parent, rsan_thread *child) {
  /* child C := A := parent C, R := ⊥; then bump both epochs, so that the parent's later
   * accesses are not ordered before the child's */
  rsan_vc_assign_published(&child->C, &parent->C);
  c_moved(child);
  rsan_vc_assign(&child->A, &parent->C);
  /* a reused slot continues after its previous owner's epochs (thread.c) */
  child->race_epoch = rsan_vc_get(&parent->C, rsan_race_index(child)) + 1;
  rsan_vc_set(&child->C, rsan_race_index(child), child->race_epoch);
  rsan_race_set_cur(child);
  rsan_race_bump(parent);
}

void rsan_race_thread_join(rsan_thread *joiner, rsan_thread *joinee) {
  /* joiner C ⊔= joinee C (and A, which must stay ⊒ what C saw) */
  if (rsan_vc_join_published(&joiner->C, &joinee->C)) c_moved(joiner);
  rsan_vc_join(&joiner->A, &joinee->C);
  rsan_race_census_sample(); /* verbosity >= 1 only (race_census.c) */
}

void rsan_race_thread_free(rsan_thread *t) {
  rsan_vc_free(&t->C);
  rsan_vc_free(&t->R);
  rsan_vc_free(&t->A);
}

/* ---- atomics: algorithm.md §5 table, under the location lock ---- */
/* dst ⊔= src, with the test for an empty source (S_x of a location no release reached, R of a
 * thread that ran no release fence: a join with ⊥ changes nothing) inline */
static inline void vc_join(rsan_vc *dst, const rsan_vc *src) {
  if (src->n) rsan_vc_join(dst, src);
}
/* rlx load: A ⊔= S_x; acq load: C ⊔= S_x, A ⊔= S_x. A join S_x's owner epoch shows to be
 * contained already (rsan_vc_sx_in: S_x ⊑ A, S_x ⊑ C) changes nothing and is skipped. */
static inline __attribute__((always_inline)) void load_rules(rsan_thread *t, rsan_loc *l, int mo) {
  if (RSAN_LIKELY(rsan_race_load_small(t, l, mo_acq(mo)))) {
  } else if (l->S.cap != RSAN_VC_CODED) { /* dense (few slots): no owner epoch */
    vc_join(&t->A, &l->S);
    if (mo_acq(mo) && rsan_vc_join_published(&t->C, &l->S)) c_moved(t);
  } else if (rsan_race_sx_below_floor(&l->S)) { /* in every live thread's C: dropped (§17) */
    RSAN_ASSERT(rsan_vc_leq(&l->S, &t->C));
    rsan_vc_free(&l->S);
  } else {
    if (!rsan_vc_sx_in(&l->S, &t->A)) rsan_vc_join(&t->A, &l->S);
    else RSAN_ASSERT(rsan_vc_leq(&l->S, &t->A));
    if (!mo_acq(mo)) {
    } else if (!rsan_vc_sx_in(&l->S, &t->C)) {
      if (rsan_vc_join_published(&t->C, &l->S)) c_moved(t);
    } else {
      RSAN_ASSERT(rsan_vc_leq(&l->S, &t->C));
    }
  }
  /* nobody knows a later epoch of this thread than the thread itself */
  RSAN_ASSERT(rsan_vc_get(&t->C, rsan_race_index(t)) == t->race_epoch);
  RSAN_ASSERT(!mo_acq(mo) || rsan_vc_leq(&l->S, &t->C));
}
void rsan_race_load(rsan_thread *t, rsan_loc *l, int mo) {
  if (on()) load_rules(t, l, mo);
}

/* The bases S_x is coded on (vclock.c, docs/design/races.md §8): per thread slot, one for the
 * exports of its C and one for those of its R. Only the slot's thread uses its entries (the
 * rules run on the accessing thread; a slot is reused only after its owner was joined), and
 * any base codes exactly or not at all (rsan_vc_export checks every entry), so a base left by
 * a slot's previous owner is merely less likely to fit. */
static rsan_vslot race_bases[2][TID_MASK + 1];
static inline rsan_vslot *base_of(const rsan_thread *t, int which) {
  uint32_t u = rsan_race_index(t);
  return u <= TID_MASK ? &race_bases[which][u] : NULL;
}
/* How an export of C codes S_x (rsan_race.h RSAN_EXPORT_*; docs/design/races.md §20): thin
 * when the slot's base is fresh; when C moved since the last export, the entries that differ
 * from the slot's current base (sparse) when at most 64 do, else a new base, then thin; when C
 * is what the slot exported last time (C did not move since), sparse when at most 8 differ,
 * else a new base, then thin, and a new base at the fifth such export in a row (a thread that
 * acquires nothing new between its releases exports the same C again and again: they share the
 * new base, O(1) each). R (which 1) is always CODE. The rule that keeps it exact: a thin S_x
 * decodes to exactly C, since the base equals C but for C's own entry (C_FRESH is cleared by
 * every change of another entry: c_moved; asserted in debug builds by vclock.c thin_fits); a
 * sparse one keeps every entry that differs from its base's. */
static inline int export_how(const rsan_thread *t, int which) {
  uint32_t u = rsan_race_index(t);
  if (which || u > TID_MASK) return RSAN_EXPORT_CODE;
  return c_state[u] & C_FRESH                 ? RSAN_EXPORT_THIN
         : c_state[u] & C_MOVED               ? RSAN_EXPORT_CODE
         : c_state[u] >= C_SAME1 * C_SAME_MAX ? RSAN_EXPORT_REBASE
                                              : RSAN_EXPORT_SAME;
}
/* r: rsan_vc_export's result */
static inline void exported(const rsan_thread *t, int which, int r) {
  uint32_t u = rsan_race_index(t);
  if (!which && u <= TID_MASK) c_state[u] = r == 1 ? C_FRESH : r == 2 ? (uint8_t)(c_state[u] + C_SAME1) : 0;
}

/* S_x ⊔= src (C: which 0, R: 1): the test for an empty source inline, and with few slots
 * (both dense: a coded clock has RSAN_VC_DENSE entries or more) the plain join */
static inline void sx_join(rsan_thread *t, rsan_loc *l, const rsan_vc *src, int which) {
  if (RSAN_LIKELY(rsan_race_join_small(l, src))) return;
  if ((src->n | l->S.n) < RSAN_VC_DENSE) {
    rsan_vc_join(&l->S, src);
    return;
  }
  int how = export_how(t, which);
  exported(t, which, rsan_vc_join_export(&l->S, src, base_of(t, which), rsan_race_index(t), how));
}

/* S_x := src (C: which 0, R: 1); with few slots the plain copy */
static inline void sx_export(rsan_thread *t, rsan_loc *l, const rsan_vc *src, int which) {
  if (RSAN_LIKELY(rsan_race_export_small(l, src))) return;
  if (src->n < RSAN_VC_DENSE) {
    rsan_vc_assign(&l->S, src);
    return;
  }
  int how = export_how(t, which);
  exported(t, which, rsan_vc_export(&l->S, src, base_of(t, which), rsan_race_index(t), how));
}

/* rlx store: S_x := R (a plain store breaks release sequences, C++20); rel store: S_x := C,
 * then C[τ]++. Returns the store's epoch (before the bump). */
uint64_t rsan_race_store(rsan_thread *t, rsan_loc *l, int mo) {
  if (!on()) return 0;
  uint64_t e = rsan_race_epoch(t);
  if (mo_rel(mo)) {
    sx_export(t, l, &t->C, 0);
    rsan_race_bump(t);
  } else {
    sx_export(t, l, &t->R, 1);
  }
  return e;
}

/* RMW: read part as a load by mo; then S_x ⊔= (mo ⊒ rel ? C : R) (release sequences run
 * through RMWs); if rel, C[τ]++. Returns the RMW's epoch (before the bump). */
uint64_t rsan_race_rmw(rsan_thread *t, rsan_loc *l, int mo) {
  if (!on()) return 0;
  uint64_t e = rsan_race_epoch(t); /* the read part bumps nothing */
  if (mo_acq(mo) && mo_rel(mo) && RSAN_LIKELY(rsan_race_acq_rel_small(t, l))) {
    rsan_race_bump(t);
    return e;
  }
  load_rules(t, l, mo);
  if (mo_rel(mo)) {
    sx_join(t, l, &t->C, 0);
    rsan_race_bump(t);
  } else {
    sx_join(t, l, &t->R, 1);
  }
  return e;
}

/* fence acq: C ⊔= A */
void rsan_race_fence_acq(rsan_thread *t) {
  if (on() && rsan_vc_join_published(&t->C, &t->A)) c_moved(t);
}

/* fence rel: R := C; C[τ]++ (an SC fence is acq then rel for races, rules.c) */
void rsan_race_fence_rel(rsan_thread *t) {
  if (!on()) return;
  rsan_vc_assign(&t->R, &t->C);
  rsan_race_bump(t);
}
