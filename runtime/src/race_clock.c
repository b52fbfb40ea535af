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
#include "rsan_race.h"

static inline int on(void) { return rsan_race_on(); }
/* t->race_cur: the thread's epoch and slot as a cell holds them, so that the hot path builds an
 * access's cell with one OR; 0 for a thread whose slot a cell cannot hold (not checked) */
static inline void set_cur(rsan_thread *t) {
  t->race_cur = rsan_race_index(t) <= MAX_TID ? w_pack(t->race_epoch, rsan_race_index(t), 0, 0, 0) : 0;
}
/* Per thread slot, what the thin export of its C needs (docs/design/races.md §10): C_FRESH,
 * the slot's C base equals C but for C's own entry (then S_x := C is thin: O(1)); C_MOVED,
 * another entry of C changed since the slot's last export of C. Written only by the slot's
 * thread (a child's by its creator, before it runs). Every change of C but the bump of its
 * own entry goes through c_moved: the joins into C (acquire loads and RMWs, acquire fences,
 * join) when they change an entry, create and init. */
enum { C_FRESH = 1, C_MOVED = 2 };
static uint8_t c_state[TID_MASK + 1];
static inline void c_moved(const rsan_thread *t) {
  uint32_t u = rsan_race_index(t);
  if (u <= TID_MASK) c_state[u] = C_MOVED;
}
/* C[τ]++ (rsan_vc_set inline when C has the entry: a relaxed atomic store, as it makes) */
static inline void bump(rsan_thread *t) {
  uint32_t u = rsan_race_index(t);
  RSAN_ASSERT(rsan_vc_get(&t->C, u) == t->race_epoch);
  uint64_t e = ++t->race_epoch;
  if (RSAN_LIKELY(u < t->C.n)) __atomic_store_n(&t->C.e[u], e, __ATOMIC_RELAXED);
  else rsan_vc_set(&t->C, u, e);
  set_cur(t);
}

/* ---- the few-slot case, inline (docs/design/races.md §11) ----
 * With fewer than RSAN_VC_DENSE slots every clock is a dense array (only a location's S_x is
 * ever coded, and only from RSAN_VC_DENSE entries on). When no join grows its destination
 * (the common case once the threads exist: every C, A and S_x has an entry per slot), the
 * rules below do, in one loop over the entries and with no call, exactly what the calls of
 * the general path do: the same entries written the same way (C's with relaxed atomic
 * stores, as rsan_vc_join_published; S_x's size with a release store, as rsan_vc_assign), and
 * no change of C's size, so no c_moved (rsan_vc_join_published tracks only growth below
 * RSAN_VC_DENSE). Anything else (a growth, a coded S_x, many slots) takes the general path. */
static inline int vc_small(const rsan_vc *v) { return v->cap != RSAN_VC_CODED && v->n < RSAN_VC_DENSE; }

/* A ⊔= S_x, and C ⊔= S_x if acq: 1 when done inline */
static inline __attribute__((always_inline)) int load_small(rsan_thread *t, const rsan_loc *l, int acq) {
  uint32_t n = l->S.n;
  if (!n) return 1; /* S_x = ⊥: both joins change nothing */
  if (l->S.cap == RSAN_VC_CODED || n > t->A.n || n > t->C.n || t->C.n >= RSAN_VC_DENSE) return 0;
  const uint64_t *s = l->S.e;
  uint64_t *a = t->A.e, *c = t->C.e;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t v = s[i];
    if (v > a[i]) a[i] = v;
    if (acq && v > c[i]) __atomic_store_n(&c[i], v, __ATOMIC_RELAXED);
  }
  return 1;
}

/* S_x := src (C or R) with few slots: 1 when done inline */
static inline __attribute__((always_inline)) int export_small(rsan_loc *l, const rsan_vc *src) {
  uint32_t n = src->n;
  if (n >= RSAN_VC_DENSE || l->S.cap == RSAN_VC_CODED || l->S.cap < n) return 0;
  uint64_t *d = l->S.e;
  for (uint32_t i = 0; i < n; i++) d[i] = src->e[i];
  __atomic_store_n(&l->S.n, n, __ATOMIC_RELEASE);
  return 1;
}

/* S_x ⊔= src (C or R) with few slots: 1 when done inline */
static inline __attribute__((always_inline)) int join_small(rsan_loc *l, const rsan_vc *src) {
  uint32_t n = src->n;
  if (!n) return 1; /* a join with ⊥ */
  if (!vc_small(&l->S) || n > l->S.n) return 0;
  uint64_t *d = l->S.e;
  for (uint32_t i = 0; i < n; i++)
    if (src->e[i] > d[i]) d[i] = src->e[i];
  return 1;
}

/* An RMW that both acquires and releases (acq_rel, seq_cst) with few slots: A ⊔= S_x,
 * C ⊔= S_x, then S_x ⊔= C, in one pass over the entries instead of load_small's and
 * join_small's two (docs/design/races.md §16). After C ⊔= S_x, C ⊒ S_x, so S_x ⊔= C is
 * S_x := C: entry i of S_x becomes max(S_x[i], C[i]), which is C's new entry i, and the
 * entries of C beyond S_x's n (those of S_x are 0 there: rsan_vc) are copied. The same
 * entries are written the same way as load_small and join_small / export_small write them
 * (C's with relaxed atomic stores, S_x's size with a release store when it grows), and C's
 * size does not change (no c_moved, as in load_small). 1 when done inline; else (a coded S_x,
 * many slots, a clock that would grow, an S_x array with no room for C's entries) 0, and the
 * general path decides from the start. */
static inline __attribute__((always_inline)) int acq_rel_small(rsan_thread *t, rsan_loc *l) {
  uint32_t n = l->S.n, m = t->C.n;
  if (l->S.cap == RSAN_VC_CODED || m >= RSAN_VC_DENSE || n > m || n > t->A.n || l->S.cap < m) return 0;
  uint64_t *s = l->S.e, *a = t->A.e, *c = t->C.e;
  uint32_t i = 0;
  for (; i < n; i++) {
    uint64_t v = s[i], ci = c[i];
    if (v > a[i]) a[i] = v;
    if (v > ci) __atomic_store_n(&c[i], ci = v, __ATOMIC_RELAXED);
    s[i] = ci;
  }
  for (; i < m; i++) s[i] = c[i];
  if (m != n) __atomic_store_n(&l->S.n, m, __ATOMIC_RELEASE);
  RSAN_ASSERT(rsan_vc_leq(&l->S, &t->C) && rsan_vc_leq(&t->C, &l->S));
  return 1;
}

/* ---- threads: algorithm.md §5 "create / join", architecture.md (R := ⊥ for the child) ---- */
void rsan_race_thread_init(rsan_thread *t) {
  c_moved(t); /* a new C: the slot's base is a previous owner's, if any */
  t->race_epoch = 1;
  rsan_vc_set(&t->C, rsan_race_index(t), 1);
  set_cur(t);
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
  set_cur(child);
  bump(parent);
}

void rsan_race_thread_join(rsan_thread *joiner, rsan_thread *joinee) {
  /* joiner C ⊔= joinee C (and A, which must stay ⊒ what C saw) */
  if (rsan_vc_join_published(&joiner->C, &joinee->C)) c_moved(joiner);
  rsan_vc_join(&joiner->A, &joinee->C);
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
  if (RSAN_LIKELY(load_small(t, l, mo_acq(mo)))) {
  } else if (l->S.cap != RSAN_VC_CODED) { /* dense (few slots): no owner epoch */
    vc_join(&t->A, &l->S);
    if (mo_acq(mo) && rsan_vc_join_published(&t->C, &l->S)) c_moved(t);
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
static rsan_vbase *race_bases[2][TID_MASK + 1];
static inline rsan_vbase **base_of(const rsan_thread *t, int which) {
  uint32_t u = rsan_race_index(t);
  return u <= TID_MASK ? &race_bases[which][u] : NULL;
}
/* How an export of C codes S_x (rsan_race.h RSAN_EXPORT_*): thin when the slot's base is
 * fresh; a new base, then thin, when C is what the slot exported last time (C did not move
 * since: a thread that acquires nothing new between its releases exports the same C again and
 * again, and they share the new base); else offsets on the base (a C that moves between every
 * two exports would make a base per export, 4x the offsets' memory). R (which 1) is always
 * coded with offsets. The rule that keeps it exact: a thin S_x decodes to exactly C, since the
 * base equals C but for C's own entry (C_FRESH is cleared by every change of another entry:
 * c_moved; asserted in debug builds by vclock.c thin_fits). */
static inline int export_how(const rsan_thread *t, int which) {
  uint32_t u = rsan_race_index(t);
  if (which || u > TID_MASK) return RSAN_EXPORT_CODE;
  return c_state[u] & C_FRESH   ? RSAN_EXPORT_THIN
         : c_state[u] & C_MOVED ? RSAN_EXPORT_CODE
                                : RSAN_EXPORT_REBASE;
}
static inline void exported(const rsan_thread *t, int which, int fresh) {
  uint32_t u = rsan_race_index(t);
  if (!which && u <= TID_MASK) c_state[u] = fresh ? C_FRESH : 0;
}

/* S_x ⊔= src (C: which 0, R: 1): the test for an empty source inline, and with few slots
 * (both dense: a coded clock has RSAN_VC_DENSE entries or more) the plain join */
static inline void sx_join(rsan_thread *t, rsan_loc *l, const rsan_vc *src, int which) {
  if (RSAN_LIKELY(join_small(l, src))) return;
  if ((src->n | l->S.n) < RSAN_VC_DENSE) {
    rsan_vc_join(&l->S, src);
    return;
  }
  int how = export_how(t, which);
  exported(t, which, rsan_vc_join_export(&l->S, src, base_of(t, which), rsan_race_index(t), how));
}

/* S_x := src (C: which 0, R: 1); with few slots the plain copy */
static inline void sx_export(rsan_thread *t, rsan_loc *l, const rsan_vc *src, int which) {
  if (RSAN_LIKELY(export_small(l, src))) return;
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
    bump(t);
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
  if (mo_acq(mo) && mo_rel(mo) && RSAN_LIKELY(acq_rel_small(t, l))) {
    bump(t);
    return e;
  }
  load_rules(t, l, mo);
  if (mo_rel(mo)) {
    sx_join(t, l, &t->C, 0);
    bump(t);
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
  bump(t);
}
