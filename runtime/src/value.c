/* Value tracking (algorithm.md §4 in the equivalent reading of architecture.md "Decisions and
 * pitfalls"): the exact checks of wait, BCAS and strong CAS against the bounded history. */
#include "rsan_engine.h"

/* ---- value tracking: algorithm.md §4 in the equivalent reading of architecture.md ----
 * Tval(τ)(x,v) = the largest timestamp of a write of v to x below Tsc(τ)(x), so a check
 * "some stale write of v" asks for a write of v with a timestamp in [Tc(τ)(x), Tsc(τ)(x)).
 * The writes known are the initial one (timestamp 0, its value read when the location was
 * first touched) and the last RSAN_HIST ones; an older write is assumed not to exist (a
 * miss, never a false alarm). Values compare at the access size. */

/* Records the initial value (the ts-0 write) at the first access of the location. */

/* The known write with timestamp ts: 1 and its value / U stamp / rmw flag, else 0. */
static int known_write(const rsan_loc *l, uint64_t ts, uint64_t *value, uint64_t *tsU, int *rmw) {
  if (ts == 0) {
    if (!l->init_known) return 0;
    *value = l->init_value;
    *tsU = 0;
    *rmw = 0;
    return 1;
  }
  if (!l->hist) return 0;
  for (int i = 0; i < rsan_hist_len(l); i++) {
    const rsan_hist *h = &l->hist[i];
    if (h->ts == ts) {
      *value = h->value;
      *tsU = h->tsU;
      *rmw = rsan_hist_rmw(h);
      return 1;
    }
  }
  return 0;
}

/* Read-type value check: a known write with a timestamp in [Tc(x), Tsc(x)) whose value is v
 * (want_eq) or differs from v (!want_eq): a read may still see it, SC forbids it. */
int rsan_stale_value_read(const rsan_thread *t, rsan_loc *l, uint64_t v, uint64_t m, int want_eq) {
  if (RSAN_LIKELY(rsan_view_same_at(t, l))) return 0; /* Tc(x) = Tsc(x): an empty interval */
  /* [hi(Tc), lo(Tsc)) ⊆ [Tc(x), Tsc(x)): exact values, or a miss when the facts overflowed */
  rsan_view vw;
  rsan_view_get(t, l, &vw);
  if (!rsan_certainly_after(vw.sc.lo, vw.sc.hi, vw.c.lo, vw.c.hi)) return 0;
  uint64_t tc = vw.c.hi, tsc = vw.sc.lo;
  if (RSAN_UNLIKELY(!rsan_view_exact(&vw))) __atomic_fetch_add(&rsan_undecided_checks, 1, __ATOMIC_RELAXED);
  if (tc == 0 && l->init_known && ((l->init_value & m) == (v & m)) == want_eq) return 1;
  if (!l->hist) return 0;
  for (int i = 0; i < rsan_hist_len(l); i++) {
    const rsan_hist *h = &l->hist[i];
    if (h->ts && h->ts >= tc && h->ts < tsc && ((h->value & m) == (v & m)) == want_eq) return 1;
  }
  return 0;
}

/* Write-type value check of a blocking / strong CAS that succeeds reading e (algorithm.md §4,
 * TcU(x) <= TvalU(x,e)): an RMW must be placed right after the write it reads (atomicity),
 * so it can read only the last write of a block of writes (a non-RMW write and the RMWs
 * after it). Violation iff a closed block k with TcU(x) <= k < TscU(x) ends with a write of e:
 * a known write w of e with U stamp k in that range whose successor (timestamp ts(w)+1) is
 * known and not an RMW. */
static int block_ends_with(const rsan_loc *l, uint64_t ts, uint64_t tsU, uint64_t val, uint64_t tcU,
                           uint64_t tscU, uint64_t e, uint64_t m) {
  uint64_t nval, nu;
  int nrmw;
  if (tsU < tcU || tsU >= tscU || (val & m) != (e & m)) return 0;
  return known_write(l, ts + 1, &nval, &nu, &nrmw) && !nrmw;
}

int rsan_stale_value_rmw(const rsan_thread *t, rsan_loc *l, uint64_t e, uint64_t m) {
  if (RSAN_LIKELY(rsan_view_same_at(t, l))) return 0; /* TcU(x) = TscU(x): an empty interval */
  rsan_view vw;
  rsan_view_get(t, l, &vw);
  if (!rsan_certainly_after(vw.sc.loU, vw.sc.hiU, vw.c.loU, vw.c.hiU)) return 0;
  uint64_t tcU = vw.c.hiU, tscU = vw.sc.loU;
  if (RSAN_UNLIKELY(!rsan_view_exact(&vw))) __atomic_fetch_add(&rsan_undecided_checks, 1, __ATOMIC_RELAXED);
  if (l->init_known && block_ends_with(l, 0, 0, l->init_value, tcU, tscU, e, m)) return 1;
  if (!l->hist) return 0;
  for (int i = 0; i < rsan_hist_len(l); i++) {
    const rsan_hist *h = &l->hist[i];
    if (h->ts && block_ends_with(l, h->ts, h->tsU, h->value, tcU, tscU, e, m)) return 1;
  }
  return 0;
}
