/* pyrsan runtime: what the files of the clock engine share (alloc.c, init.c, rules.c,
 * memop.c, history.c, value.c, atomic.c, sync.c). Internal; not an ABI. */
#ifndef RSAN_ENGINE_H
#define RSAN_ENGINE_H

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
void rsan_hb_store(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts, uint64_t tU);
void rsan_hb_rmw(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts);
void rsan_fence_acq(rsan_thread *t);
void rsan_fence_rel(rsan_thread *t);
void rsan_fence_sc(rsan_thread *t);
void rsan_fence_sc_step(rsan_thread *t); /* a scheduling point, then rsan_fence_sc without its race part */

/* ---- the real memory operations (seq_cst hardware atomics) ---- */
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


/* A write's history entry (history.c) and the memory it writes, fetched while the checks and
 * rules run: lines another thread wrote last, each a miss if found out only when used. */
static inline void rsan_loc_prefetch_write(const rsan_loc *l, const void *p) {
  __builtin_prefetch(p, 1);
  if (RSAN_LIKELY(l->hist != NULL)) {
    const char *h = (const char *)&l->hist[l->hist_next % RSAN_HIST];
    __builtin_prefetch(h, 1);
    __builtin_prefetch(h + sizeof(rsan_hist) - 1, 1);
  }
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
static inline int rsan_view_exact(const rsan_view *v) {
  return v->c.lo == v->c.hi && v->c.loU == v->c.hiU && v->sc.lo == v->sc.hi && v->sc.loU == v->sc.hiU;
}
/* sc > c for certain; counts the undecided case */
static inline int rsan_certainly_after(uint64_t sc_lo, uint64_t sc_hi, uint64_t c_lo, uint64_t c_hi) {
  if (sc_lo > c_hi) return 1;
  if (RSAN_UNLIKELY(sc_hi > c_lo)) __atomic_fetch_add(&rsan_undecided_checks, 1, __ATOMIC_RELAXED);
  return 0;
}
static inline int rsan_read_violation(const rsan_thread *t, rsan_loc *l) {
  rsan_view v;
  rsan_view_get(t, l, &v);
  return rsan_certainly_after(v.sc.lo, v.sc.hi, v.c.lo, v.c.hi);
}
static inline int rsan_write_violation(const rsan_thread *t, rsan_loc *l) {
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
void rsan_hist_record(rsan_loc *l, rsan_thread *t, uintptr_t fa, uint64_t ts, int rmw, uint64_t site,
                      uint64_t value, int order, int op, int rmw_op, int size);
void rsan_fill_report(rsan_report_info *r, rsan_thread *t, rsan_loc *l, int is_write, int op, int rmw_op,
                      int order, int size, uint64_t site, uintptr_t fa);

/* ---- value.c: the value checks (algorithm.md §4) ---- */
int rsan_stale_value_read(const rsan_thread *t, rsan_loc *l, uint64_t v, uint64_t m, int want_eq);
int rsan_stale_value_rmw(const rsan_thread *t, rsan_loc *l, uint64_t e, uint64_t m);

#endif /* RSAN_ENGINE_H */
