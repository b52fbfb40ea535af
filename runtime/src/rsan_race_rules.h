/* The race detector's clock rules of an atomic access in their common cases, inline for the
 * atomic entry points (atomic.c, through rsan_race_load_i, rsan_race_store_i, rsan_race_rmw_i
 * below) and used by race_clock.c's general rules (algorithm.md §5; docs/design/races.md §11,
 * §16). Each case writes what race_clock.c's general path writes; anything else goes there. */
#ifndef RSAN_RACE_RULES_H
#define RSAN_RACE_RULES_H

#include "rsan_race.h"

/* t->race_cur: the thread's epoch and slot as a cell holds them, so that the hot path builds an
 * access's cell with one OR; 0 for a thread whose slot a cell cannot hold (not checked) */
static inline void rsan_race_set_cur(rsan_thread *t) {
  t->race_cur = rsan_race_index(t) <= MAX_TID ? w_pack(t->race_epoch, rsan_race_index(t), 0, 0, 0) : 0;
}
/* C[τ]++ (rsan_vc_set inline when C has the entry: a relaxed atomic store, as it makes) */
static inline void rsan_race_bump(rsan_thread *t) {
  uint32_t u = rsan_race_index(t);
  RSAN_ASSERT(rsan_vc_get(&t->C, u) == t->race_epoch);
  uint64_t e = ++t->race_epoch;
  if (RSAN_LIKELY(u < t->C.n)) __atomic_store_n(&t->C.e[u], e, __ATOMIC_RELAXED);
  else rsan_vc_set(&t->C, u, e);
  rsan_race_set_cur(t);
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
static inline int rsan_race_vc_small(const rsan_vc *v) {
  return v->cap != RSAN_VC_CODED && v->n < RSAN_VC_DENSE;
}

/* A ⊔= S_x, and C ⊔= S_x if acq: 1 when done inline */
static inline __attribute__((always_inline)) int rsan_race_load_small(rsan_thread *t, const rsan_loc *l,
                                                                      int acq) {
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
static inline __attribute__((always_inline)) int rsan_race_export_small(rsan_loc *l, const rsan_vc *src) {
  uint32_t n = src->n;
  if (n >= RSAN_VC_DENSE || l->S.cap == RSAN_VC_CODED || l->S.cap < n) return 0;
  uint64_t *d = l->S.e;
  for (uint32_t i = 0; i < n; i++) d[i] = src->e[i];
  __atomic_store_n(&l->S.n, n, __ATOMIC_RELEASE);
  return 1;
}

/* S_x ⊔= src (C or R) with few slots: 1 when done inline */
static inline __attribute__((always_inline)) int rsan_race_join_small(rsan_loc *l, const rsan_vc *src) {
  uint32_t n = src->n;
  if (!n) return 1; /* a join with ⊥ */
  if (!rsan_race_vc_small(&l->S) || n > l->S.n) return 0;
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
static inline __attribute__((always_inline)) int rsan_race_acq_rel_small(rsan_thread *t, rsan_loc *l) {
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

/* ---- the rules of an atomic entry point (atomic.c), with their common cases inline ---- */
/* Load (and a failed CAS): A ⊔= S_x, and C ⊔= S_x if acquire. With S_x = ⊥ both joins change
 * nothing (no call); with few slots the one loop of rsan_race_load_small; else rsan_race_load. */
static inline __attribute__((always_inline)) void rsan_race_load_i(rsan_thread *t, rsan_loc *l, int mo) {
  if (!l->S.n) return;
  if (RSAN_LIKELY(rsan_race_on()) && RSAN_LIKELY(rsan_race_load_small(t, l, mo_acq(mo)))) return;
  rsan_race_load(t, l, mo);
}
/* Store: a relaxed one S_x := R (with S_x = ⊥ and R = ⊥: nothing), a release one S_x := C
 * and the bump (with few slots: rsan_race_export_small); else rsan_race_store. Returns the
 * store's epoch (before the bump). */
static inline __attribute__((always_inline)) uint64_t rsan_race_store_i(rsan_thread *t, rsan_loc *l, int mo) {
  if (RSAN_LIKELY(rsan_race_on())) {
    uint64_t e = rsan_race_epoch(t);
    if (!mo_rel(mo)) {
      /* S_x := R with R = ⊥ (no release fence): S_x := ⊥, export_small's copy of no entry
       * (its size 0, with a release store; a coded S_x takes the general path) */
      if (!t->R.n && l->S.cap != RSAN_VC_CODED) {
        if (l->S.n) __atomic_store_n(&l->S.n, 0, __ATOMIC_RELEASE);
        return e;
      }
    } else if (RSAN_LIKELY(rsan_race_export_small(l, &t->C))) {
      rsan_race_bump(t);
      return e;
    }
  }
  return rsan_race_store(t, l, mo);
}
/* RMW (and a successful CAS): a relaxed one with S_x = ⊥ and R = ⊥ only returns the epoch (A ⊔=
 * S_x and S_x ⊔= R are joins with ⊥); an acq_rel one with few slots is
 * rsan_race_acq_rel_small and the bump; else rsan_race_rmw. Returns the RMW's epoch. */
static inline __attribute__((always_inline)) uint64_t rsan_race_rmw_i(rsan_thread *t, rsan_loc *l, int mo) {
  if (RSAN_LIKELY(rsan_race_on())) {
    uint64_t e = rsan_race_epoch(t);
    if (mo == RSAN_RELAXED) {
      /* A ⊔= S_x (load_small, as the general rule's load part runs it first), then S_x ⊔= R,
       * a join with ⊥ when R = ⊥; load_small writes nothing when it returns 0 */
      if (!t->R.n && (!l->S.n || rsan_race_load_small(t, l, 0))) return e;
    } else if (mo_acq(mo) && mo_rel(mo) && RSAN_LIKELY(rsan_race_acq_rel_small(t, l))) {
      rsan_race_bump(t);
      return e;
    }
  }
  return rsan_race_rmw(t, l, mo);
}

#endif /* RSAN_RACE_RULES_H */
