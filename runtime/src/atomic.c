/* The atomic entry points of rsan_interface.h (loads, stores, RMWs, CAS, wait, BCAS, track,
 * fences): each takes the location lock, checks, applies the clock rules (rules.c), records the
 * write (history.c), performs the real memory operation with a seq_cst hardware atomic while
 * still holding the lock (so the lock order per location is mo and rf: the observed run is SC,
 * algorithm.md §3 "Order per op"), and renders any report after unlocking. */
#include <sched.h>
#include <string.h>

#include "rsan_engine.h"
#include "rsan_explain.h"
#include "rsan_race_rules.h"
#include "rsan_sched.h"
#include "rsan_sched_closure.h"
#include "rsan_signal.h"

/* The shadow part of an atomic access (algorithm.md §5: atomics are recorded too, so that
 * mixed atomic / plain races are found). Made under the location lock: a thread that
 * synchronises with this access (it takes the lock later) must find the cell already there,
 * or its own plain access would be checked first and this one then reported against it. A
 * race report made here takes only leaf locks (report, sites, threads, heap blocks). */
static RSAN_ALWAYS_INLINE void race_atomic(rsan_thread *t, const void *p, int size, int wr, uint64_t epoch,
                                           uint64_t site, uintptr_t fa) {
  if (rsan_flag.report_races && !rsan_race_atomic_fast(t, (uintptr_t)p, (uint64_t)size, wr, epoch, site))
    rsan_race_access_general(t, (uintptr_t)p, (uint64_t)size, wr, 1, epoch, site, fa);
}
/* The same for the hot entry points, with the granule's cells rsan_race_prefetch found when the
 * operation locked its location (rc; NULL: the general path decides, as when the fast case
 * does not settle the access) */
static RSAN_ALWAYS_INLINE void race_atomic_at(rsan_thread *t, rsan_cell *rc, const void *p, int size, int wr,
                                              uint64_t epoch, uint64_t site, uintptr_t fa) {
  if (rsan_flag.report_races &&
      !(RSAN_LIKELY(rc != NULL) && rsan_race_atomic_at(t, rc, (uintptr_t)p, (uint64_t)size, wr, epoch, site)))
    rsan_race_access_general(t, (uintptr_t)p, (uint64_t)size, wr, 1, epoch, site, fa);
}

/* ---- the operations ---- */
static RSAN_ALWAYS_INLINE uint64_t op_load(void *p, int size, int order, uint64_t site, uintptr_t fa) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_fast();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_ACQUIRE : order;
  if (fenced) rsan_fence_sc_step(t);
  RSAN_SCHED_POINT(RSAN_SK_LOAD, p, 0);
  rsan_loc *l = rsan_loc_acquire_i((uintptr_t)p);
  rsan_loc_touch(l, p, size);
  rsan_loc_prefetch_eviction(l);
  rsan_cell *rc = rsan_race_prefetch(l, p);
  rsan_report_info rep;
  int bad = rsan_checks_on(l) && rsan_read_violation(t, l);
  if (RSAN_UNLIKELY(bad)) bad = rsan_fill_report(&rep, t, l, 0, RSAN_OP_LOAD, 0, order, size, site, fa);
  int fact = 0;
  int known = rsan_sc_load_mo_i(t, l, mo, &fact);
  rsan_hb_load_i(t, l, mo, known);
  rsan_race_load_i(t, l, mo);
  uint64_t v = mem_load(p, size);
  rsan_thread_note_access_i(t, site, l, RSAN_OP_LOAD, 0, size);
  RSAN_EXPLAIN(rsan_explain_access(t, l, RSAN_OP_LOAD, 0, order, size, 1, v, 0, 0, site));
  rsan_fact_append(t, l, fact);
  rsan_loc_check_invariants(l);
  race_atomic_at(t, rc, p, size, 0, rsan_race_epoch(t), site, fa);
  /* a never-written location whose record may fit a compact one (docs/design/clocks.md §21):
   * only after a new fact, so a location is made compact at most RSAN_LOC_COMPACT_FACTS times */
  int shrink = RSAN_UNLIKELY(l->cls == RSAN_LOC_COLD) && fact && l->nfacts <= RSAN_LOC_COMPACT_FACTS;
  rsan_loc_release(l);
  if (RSAN_UNLIKELY(shrink)) rsan_loc_shrink((uintptr_t)p);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, v, 0);
  if (fenced) rsan_fence_sc_step(t);
  return v;
}

static RSAN_ALWAYS_INLINE void op_store(void *p, uint64_t v, int size, int order, uint64_t site,
                                        uintptr_t fa) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_fast();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_RELEASE : order;
  if (fenced) rsan_fence_sc_step(t);
  RSAN_SCHED_POINT(RSAN_SK_STORE, p, 1);
  rsan_loc *l = rsan_loc_acquire_write(t, (uintptr_t)p, mo);
  rsan_loc_touch(l, p, size);
  rsan_loc_prefetch_eviction(l);
  rsan_cell *rc = rsan_race_prefetch(l, p);
  rsan_hist *hist = rsan_loc_prefetch_write(l, p);
  rsan_report_info rep;
  int bad = rsan_checks_on(l) && rsan_write_violation(t, l);
  if (RSAN_UNLIKELY(bad)) bad = rsan_fill_report(&rep, t, l, 1, RSAN_OP_STORE, 0, order, size, site, fa);
  uint64_t ts = ++l->stamp, tU = ++l->stampU;
  int fact = 0;
  rsan_sc_write_i(t, l, ts, tU, &fact);
  rsan_hb_store_i(t, l, mo);
  uint64_t race_epoch = rsan_race_store_i(t, l, mo);
  v &= size_mask(size);
  rsan_hist_record_at(l, hist, t, fa, ts, 0, site, v, order, RSAN_OP_STORE, 0, size);
  mem_store(p, v, size);
  rsan_thread_note_access_i(t, site, l, RSAN_OP_STORE, 0, size);
  RSAN_EXPLAIN(rsan_explain_access(t, l, RSAN_OP_STORE, 0, order, size, 0, 0, 1, v, site));
  rsan_fact_append(t, l, fact);
  rsan_loc_check_invariants(l);
  race_atomic_at(t, rc, p, size, 1, race_epoch, site, fa);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, v, 1);
  if (fenced) rsan_fence_sc_step(t);
}

static RSAN_ALWAYS_INLINE uint64_t op_rmw(void *p, uint64_t v, int op, int size, int order, uint64_t site,
                                          uintptr_t fa) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_fast();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_ACQ_REL : order;
  if (fenced) rsan_fence_sc_step(t);
  RSAN_SCHED_POINT(RSAN_SK_RMW, p, 1);
  rsan_loc *l = rsan_loc_acquire_write(t, (uintptr_t)p, mo);
  rsan_loc_touch(l, p, size);
  rsan_loc_prefetch_eviction(l);
  rsan_cell *rc = rsan_race_prefetch(l, p);
  rsan_hist *hist = rsan_loc_prefetch_write(l, p);
  rsan_report_info rep;
  int bad = rsan_checks_on(l) && rsan_write_violation(t, l);
  if (RSAN_UNLIKELY(bad)) bad = rsan_fill_report(&rep, t, l, 1, RSAN_OP_RMW, op, order, size, site, fa);
  uint64_t ts = ++l->stamp; /* no U increment for RMW */
  int fact = 0;
  rsan_sc_write_i(t, l, ts, 0, &fact);
  rsan_hb_rmw_i(t, l, mo);
  uint64_t race_epoch = rsan_race_rmw_i(t, l, mo);
  uint64_t newv;
  uint64_t old = rsan_mem_rmw(p, op, v, size, &newv);
  rsan_hist_record_at(l, hist, t, fa, ts, 1, site, newv, order, RSAN_OP_RMW, op, size);
  rsan_thread_note_access_i(t, site, l, RSAN_OP_RMW, op, size);
  RSAN_EXPLAIN(rsan_explain_access(t, l, RSAN_OP_RMW, op, order, size, 1, old, 1, newv, site));
  rsan_fact_append(t, l, fact);
  rsan_loc_check_invariants(l);
  race_atomic_at(t, rc, p, size, 1, race_epoch, site, fa);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) {
    rep.rmw_op = op;
    rsan_report_robustness(&rep);
  }
  /* an RMW that leaves memory as it was (test-and-set on a held flag) may be a spin loop */
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, old, newv != (old & size_mask(size)));
  if (fenced) rsan_fence_sc_step(t);
  return old;
}

static RSAN_ALWAYS_INLINE rsan_cas_ret op_cas(void *p, uint64_t expected, uint64_t desired, int size,
                                              int succ, int fail, int weak, uint64_t site, uintptr_t fa) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_fast();
  int fenced = (succ == RSAN_SEQ_CST || fail == RSAN_SEQ_CST) && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int ms = succ == RSAN_SEQ_CST ? RSAN_ACQ_REL : succ;
  int mf = fail == RSAN_SEQ_CST || fail == RSAN_ACQ_REL ? RSAN_ACQUIRE : fail;
  if (mf == RSAN_RELEASE) mf = RSAN_RELAXED; /* not a valid failure order */
  int opk = weak ? RSAN_OP_CAS_WEAK : RSAN_OP_CAS_STRONG;
  if (fenced) rsan_fence_sc_step(t);
  RSAN_SCHED_POINT(RSAN_SK_RMW, p, 1);
  /* the class a success needs (a failure, a load, needs none: it may promote for nothing) */
  rsan_loc *l = rsan_loc_acquire_write(t, (uintptr_t)p, ms);
  rsan_loc_touch(l, p, size);
  rsan_loc_prefetch_eviction(l);
  rsan_cell *rc = rsan_race_prefetch(l, p);
  rsan_hist *hist = rsan_loc_prefetch_write(l, p);
  rsan_report_info rep;
  uint64_t m = size_mask(size);
  /* weak CAS: the read check (it may fail reading any stale write). Strong CAS, exact
   * (algorithm.md §4, architecture.md "Value tracking"): write-type if it can succeed reading
   * a stale write of the expected value, read-type if it can fail reading a stale write of
   * another value. */
  int bad = 0, bad_write = 0;
  if (rsan_checks_on(l)) {
    if (weak) {
      bad = rsan_read_violation(t, l);
    } else if (rsan_stale_value_rmw(t, l, expected, m)) {
      bad = bad_write = 1;
    } else {
      bad = rsan_stale_value_read(t, l, expected, m, 0);
    }
  }
  if (RSAN_UNLIKELY(bad)) {
    bad = rsan_fill_report(&rep, t, l, bad_write, opk, 0, succ, size, site, fa);
    rep.has_expected = 1; /* reports: a read-type CAS report is a failure (report_robustness.c) */
    rep.expected = expected & m;
  }
  uint64_t old = expected & m;
  int ok = mem_cas(p, &old, desired & m, weak != 0, size);
  uint64_t race_epoch;
  int fact = 0;
  if (ok) { /* success: RMW(mo_s) */
    uint64_t ts = ++l->stamp;
    rsan_sc_write_i(t, l, ts, 0, &fact);
    rsan_hb_rmw_i(t, l, ms);
    race_epoch = rsan_race_rmw_i(t, l, ms);
    rsan_hist_record_at(l, hist, t, fa, ts, 1, site, desired & m, succ, opk, 0, size);
  } else { /* failure: Load(mo_f) */
    int known = rsan_sc_load_mo_i(t, l, mf, &fact);
    rsan_hb_load_i(t, l, mf, known);
    rsan_race_load_i(t, l, mf);
    race_epoch = rsan_race_epoch(t);
  }
  rsan_thread_note_access_i(t, site, l, opk, 0, size);
  RSAN_EXPLAIN(rsan_explain_access(t, l, opk, 0, ok ? succ : fail, size, 1, old, ok, desired & m, site));
  rsan_fact_append(t, l, fact);
  rsan_loc_check_invariants(l);
  race_atomic_at(t, rc, p, size, ok, race_epoch, site, fa);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
  /* a failed CAS writes nothing: a CAS retry loop is a spin loop */
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, old, ok);
  if (fenced) rsan_fence_sc_step(t);
  rsan_cas_ret r = {old, (uint64_t)ok};
  return r;
}

/* wait(x = v) (RSAN paper §4.3, algorithm.md §4): blocks until x holds v. Failed attempts
 * create no events: each attempt re-reads memory under the location lock and, when the value
 * differs, drops the lock and yields. The thread's clocks do not change between attempts
 * (it makes no event), so the check is made once, at the first attempt, before blocking: a
 * stale write of v with a timestamp in [Tc(x), Tsc(x)) (Tc(x) <= Tval(x,v)). Checking before
 * blocking matters: in BARW₀,₀ one wait blocks forever in every SC run. The successful read
 * is a Load(mo). block: 1 blocks; 0 (tests) one attempt, checked; WAIT_SPIN one attempt of a
 * recognised spin loop (__rsan_spin_load_N): no check and no event unless it reads v (the
 * check is then made at the successful read); *seen gets the value read. WAIT_SPIN_NE: the
 * same for a loop that leaves on any value other than v (wait(x != v)): its successful read
 * reads some value other than v, so it is stale iff a known write of another value has a
 * timestamp in [Tc(x), Tsc(x)) (the read check of a failing strong CAS). */
#define WAIT_SPIN 2
#define WAIT_SPIN_NE 3
/* a recognised loop that waits on some bits of x (`while ((load(x) & 0xffff) != t)`): one
 * attempt of wait((x & mask) = v) (NE: != v); the same rules with the value read and the
 * writes compared through the mask (rsan_stale_value_read takes it). The schedule closure
 * does not replay these kinds (sched_closure.c: a log holding one is left to the engine). */
#define WAIT_SPIN_MASK 4
#define WAIT_SPIN_MASK_NE 5

/* A failed attempt without the lock (sched=os). A failed attempt of wait, of BCAS or of a
 * recognised spin loop creates no event and changes no clock: under the lock it only reads
 * memory (a failed BCAS's compare-exchange writes nothing) and touches x (rsan_loc_touch) the
 * first time. Every write of x through the runtime happens under x's lock, so a read of memory
 * without it returns the value a locked attempt would have read at some point between the same
 * two writes: the same failed attempt, without taking the lock that the writer the loop waits
 * for needs (a spinning reader took it at every attempt). It is taken only when the touch is
 * known to be done: the thread's last locked attempt was at the same address and found x's
 * initial value known, and no location has been retired since (rsan_loc_retire_gen is bumped
 * before a location is retired, so x is still that live location with its initial value
 * known). Under a controlled scheduler every attempt is a scheduling point: the locked way. */
static __thread uintptr_t spin_addr __attribute__((tls_model("initial-exec")));
static __thread uint64_t spin_gen __attribute__((tls_model("initial-exec")));

/* after a locked attempt at p (x locked; gen read before the lock was taken) */
static inline void spin_note(const rsan_loc *l, void *p, uint64_t gen) {
  if (l->init_known) {
    spin_addr = (uintptr_t)p;
    spin_gen = gen;
  } else {
    spin_addr = 0;
  }
}

/* 1: memory shows that an attempt at p fails now (*seen: the value read); 0: take the lock */
static inline int spin_peek_fails(void *p, uint64_t v, uint64_t m, int size, int ne, uint64_t *seen) {
  if ((uintptr_t)p != spin_addr || __atomic_load_n(&rsan_loc_retire_gen, __ATOMIC_SEQ_CST) != spin_gen)
    return 0;
  uint64_t got = mem_load(p, size);
  if (((got & m) == v) != ne) return 0;
  if (seen) *seen = got;
  return 1;
}
/* inline in the recognised spin loops' entry points, built for AVX2 and the baseline as the other hot
 * entry points (docs/design/clocks.md §30); op_wait below for the blocking wait and the tests */
static RSAN_ALWAYS_INLINE int op_wait_i(void *p, uint64_t v, uint64_t m, int size, int order, uint64_t site,
                                        uintptr_t fa, int block, uint64_t *seen) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_fast();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_ACQUIRE : order;
  m &= size_mask(size); /* the bits compared: all of x but for a masked wait */
  v &= m;
  int spin = block >= WAIT_SPIN, ne = block == WAIT_SPIN_NE || block == WAIT_SPIN_MASK_NE;
  if (spin && !rsan_sched_on && spin_peek_fails(p, v, m, size, ne, seen)) return 0;
  if (RSAN_UNLIKELY(rsan_closure_logging)) rsan_closure_note_wait(t, v, block); /* sched_closure.c */
  if (fenced && spin) { /* the fence belongs to the event: only when it may happen */
    RSAN_SCHED_WAIT_POINT(p, v, m, size, ne); /* under exploration: enabled by memory (sched_wait.c) */
    uint64_t gen = __atomic_load_n(&rsan_loc_retire_gen, __ATOMIC_SEQ_CST);
    rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
    uint64_t got = mem_load(p, size);
    spin_note(l, p, gen);
    rsan_loc_release(l);
    if (((got & m) == v) == ne) {
      *seen = got;
      /* a failed attempt: no point in retrying before another thread writes x */
      if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_retry_after_write(p);
      return 0;
    }
  }
  if (fenced) rsan_fence_sc_step(t);
  for (int first = 1;; first = 0) {
    /* Enabled by memory (sched_wait.c) unless the attempt must be able to fail: a test's single
     * attempt, a blocking wait's first (its check), a fenced spin's read after its fence (its
     * failure is followed by a new fence before the next read: a read that waits would not) */
    if (block == 0 || (block == 1 && first) || (fenced && spin)) RSAN_SCHED_POINT(RSAN_SK_WAIT, p, 0);
    else RSAN_SCHED_WAIT_POINT(p, v, m, size, ne);
    uint64_t gen = __atomic_load_n(&rsan_loc_retire_gen, __ATOMIC_SEQ_CST);
    /* rsan_loc_acquire inline: a full record (the class a wait needs, test_location_class.py) */
    rsan_loc *l = rsan_loc_fit(rsan_loc_acquire_c((uintptr_t)p, RSAN_LOC_FULL), RSAN_LOC_FULL);
    rsan_loc_touch(l, p, size);
    rsan_report_info rep;
    uint64_t got = mem_load(p, size);
    int ok = ((got & m) == v) != ne;
    if (!ok) spin_note(l, p, gen);
    if (spin) *seen = got;
    int bad = first && (ok || !spin) && rsan_checks_on(l) && rsan_stale_value_read(t, l, v, m, !ne);
    if (RSAN_UNLIKELY(bad)) bad = rsan_fill_report(&rep, t, l, 0, RSAN_OP_WAIT, 0, order, size, site, fa);
    if (ok) { /* op_load's rules, inline (docs/design/clocks.md §30) */
      int fact = 0;
      int known = rsan_sc_load_mo_i(t, l, mo, &fact);
      rsan_hb_load_i(t, l, mo, known);
      rsan_race_load_i(t, l, mo);
      rsan_thread_note_access_i(t, site, l, RSAN_OP_WAIT, 0, size);
      RSAN_EXPLAIN(rsan_explain_access(t, l, RSAN_OP_WAIT, 0, order, size, 1, got, 0, 0, site));
      rsan_fact_append(t, l, fact);
      rsan_loc_check_invariants(l);
    }
    if (ok) race_atomic(t, p, size, 0, rsan_race_epoch(t), site, fa);
    rsan_loc_release(l);
    if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
    if (ok) break;
    /* controlled scheduler: the thread is disabled until another thread writes x */
    if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_retry_after_write(p);
    if (block != 1) return 0; /* tests, spin loads: one attempt, no event */
    if (!rsan_sched_on) {
      /* the next locked attempt when memory holds v (or x may have been retired) */
      do sched_yield();
      while (spin_peek_fails(p, v, m, size, ne, NULL));
    }
  }
  rsan_thread_check_invariants(t);
  if (fenced) rsan_fence_sc_step(t);
  return 1;
}
static RSAN_NOINLINE int op_wait(void *p, uint64_t v, int size, int order, uint64_t site, uintptr_t fa,
                                 int block, uint64_t *seen) {
  return op_wait_i(p, v, size_mask(size), size, order, site, fa, block, seen);
}

/* BCAS(x, e -> d) (RSAN paper §4.3, algorithm.md §4): a strong CAS retried until it succeeds;
 * failed attempts create no events, success is one RMW(mo). Checked once at the first
 * attempt (as wait): write-type iff it can succeed reading a stale write of e that ends a
 * block (TcU(x) <= TvalU(x,e)). */
static int op_bcas(void *p, uint64_t e, uint64_t d, int size, int order, uint64_t site, uintptr_t fa,
                   int block) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_fast();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_ACQ_REL : order;
  uint64_t m = size_mask(size);
  e &= m;
  d &= m;
  if (fenced) rsan_fence_sc_step(t);
  for (int first = 1;; first = 0) {
    RSAN_SCHED_POINT(RSAN_SK_RMW, p, 1);
    uint64_t gen = __atomic_load_n(&rsan_loc_retire_gen, __ATOMIC_SEQ_CST);
    rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
    rsan_loc_touch(l, p, size);
    rsan_report_info rep;
    int bad = first && rsan_checks_on(l) && rsan_stale_value_rmw(t, l, e, m);
    if (RSAN_UNLIKELY(bad)) bad = rsan_fill_report(&rep, t, l, 1, RSAN_OP_BCAS, 0, order, size, site, fa);
    uint64_t old = e, race_epoch = 0;
    int ok = mem_cas(p, &old, d, 0, size);
    if (ok) {
      uint64_t ts = ++l->stamp; /* an RMW: no U increment */
      rsan_sc_write(t, l, ts, 0);
      rsan_hb_rmw(t, l, mo, ts);
      race_epoch = rsan_race_rmw(t, l, mo);
      rsan_hist_record(l, t, fa, ts, 1, site, d, order, RSAN_OP_BCAS, 0, size);
      rsan_thread_note_access(t, site, l, RSAN_OP_BCAS, 0, size);
      RSAN_EXPLAIN(rsan_explain_access(t, l, RSAN_OP_BCAS, 0, order, size, 1, e, 1, d, site));
      rsan_loc_check_invariants(l);
    }
    if (ok) race_atomic(t, p, size, 1, race_epoch, site, fa);
    else spin_note(l, p, gen);
    rsan_loc_release(l);
    if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
    if (ok) {
      if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, d, 1);
      break;
    }
    if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_retry_after_write(p);
    if (!block) return 0; /* tests: one attempt, no event */
    if (!rsan_sched_on) {
      /* the next locked attempt when memory holds e (a failed CAS is a failed attempt) */
      do sched_yield();
      while (spin_peek_fails(p, e, size_mask(size), size, 0, NULL));
    }
  }
  rsan_thread_check_invariants(t);
  if (fenced) rsan_fence_sc_step(t);
  return 1;
}

/* track(x, v): declares (x, v) critical. With the equivalent reading of value tracking
 * (architecture.md) every value is tracked exactly inside the history window, so this only
 * records the location's initial value if x was never touched. */
static void op_track(void *p, int size) {
  rsan_ensure_init();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
  rsan_loc_touch(l, p, size);
  rsan_loc_release(l);
}

/* ---- ABI entry points (rsan_interface.h). Each records its own frame address for the
 * shadow call stack before calling the shared implementation. ---- */
/* The hot entry points are built twice, for AVX2 and the baseline, picked at load time
 * (target_clones, as clock.c's joins): their inlined joins and copies of inline clocks
 * (rsan_clk_join_inline, rsan_clk_assign_inline: 6 entries) are then a few vector
 * instructions (docs/design/clocks.md §17). The same code, compiled for two targets. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define RSAN_ENTRY_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef RSAN_ENTRY_CLONES
#define RSAN_ENTRY_CLONES
#endif
#define RSAN_DEF_SIZE(N) \
  RSAN_EXPORT RSAN_NOINLINE RSAN_ENTRY_CLONES uint64_t __rsan_load_##N(void *p, int32_t order, \
                                                                       uint64_t site) { \
    RSAN_RT_GUARD; \
    return op_load(p, N, order, site, (uintptr_t)__builtin_frame_address(0)); \
  } \
  RSAN_EXPORT RSAN_NOINLINE RSAN_ENTRY_CLONES void __rsan_store_##N(void *p, uint64_t v, int32_t order, \
                                                                    uint64_t site) { \
    RSAN_RT_GUARD; \
    op_store(p, v, N, order, site, (uintptr_t)__builtin_frame_address(0)); \
  } \
  RSAN_EXPORT RSAN_NOINLINE RSAN_ENTRY_CLONES uint64_t __rsan_rmw_##N(void *p, uint64_t v, int32_t op, \
                                                                      int32_t order, uint64_t site) { \
    RSAN_RT_GUARD; \
    return op_rmw(p, v, op, N, order, site, (uintptr_t)__builtin_frame_address(0)); \
  } \
  RSAN_EXPORT RSAN_NOINLINE RSAN_ENTRY_CLONES rsan_cas_ret __rsan_cas_##N( \
      void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail, int32_t weak, \
      uint64_t site) { \
    RSAN_RT_GUARD; \
    return op_cas(p, expected, desired, N, succ, fail, weak, site, (uintptr_t)__builtin_frame_address(0)); \
  }

/* one attempt of wait((x & mask) = v), or != v (ne): a v with a bit outside the mask is never
 * equal, so that wait never succeeds and the != one is a wait for any value (mask 0, != 0
 * turned into == 0 on no bits), checked and run as such */
static RSAN_ALWAYS_INLINE uint64_t spin_load_mask(void *p, uint64_t v, uint64_t mask, int ne, int size,
                                                  int order, uint64_t site, uintptr_t fa) {
  uint64_t seen = 0;
  mask &= size_mask(size);
  if (v & ~mask) v = 0, mask = 0, ne = !ne;
  int ok = op_wait_i(p, v, mask, size, order, site, fa, ne ? WAIT_SPIN_MASK_NE : WAIT_SPIN_MASK, &seen);
  rsan_thread_fast()->spin_failed = !ok;
  return seen;
}

#define RSAN_DEF_VALUE(N) \
  RSAN_EXPORT RSAN_NOINLINE void __rsan_wait_##N(void *p, uint64_t v, int32_t order, uint64_t site) { \
    /* blocking: no guard (a handler may be what it waits for); its locks defer signals */ \
    op_wait(p, v, N, order, site, (uintptr_t)__builtin_frame_address(0), 1, NULL); \
  } \
  RSAN_EXPORT RSAN_NOINLINE RSAN_ENTRY_CLONES uint64_t __rsan_spin_load_##N(void *p, uint64_t expected, \
                                                                            int32_t order, uint64_t site) { \
    RSAN_RT_GUARD; \
    uint64_t seen = 0; \
    int ok = op_wait_i(p, expected, ~0ull, N, order, site, (uintptr_t)__builtin_frame_address(0), WAIT_SPIN, \
                       &seen); \
    rsan_thread_fast()->spin_failed = !ok; \
    return seen; \
  } \
  RSAN_EXPORT RSAN_NOINLINE RSAN_ENTRY_CLONES uint64_t __rsan_spin_load_ne_##N( \
      void *p, uint64_t unexpected, int32_t order, uint64_t site) { \
    RSAN_RT_GUARD; \
    uint64_t seen = 0; \
    int ok = op_wait_i(p, unexpected, ~0ull, N, order, site, (uintptr_t)__builtin_frame_address(0), \
                       WAIT_SPIN_NE, &seen); \
    rsan_thread_fast()->spin_failed = !ok; \
    return seen; \
  } \
  RSAN_EXPORT RSAN_NOINLINE RSAN_ENTRY_CLONES uint64_t __rsan_spin_load_mask_##N( \
      void *p, uint64_t expected, uint64_t mask, int32_t order, uint64_t site) { \
    RSAN_RT_GUARD; \
    return spin_load_mask(p, expected, mask, 0, N, order, site, (uintptr_t)__builtin_frame_address(0)); \
  } \
  RSAN_EXPORT RSAN_NOINLINE RSAN_ENTRY_CLONES uint64_t __rsan_spin_load_mask_ne_##N( \
      void *p, uint64_t unexpected, uint64_t mask, int32_t order, uint64_t site) { \
    RSAN_RT_GUARD; \
    return spin_load_mask(p, unexpected, mask, 1, N, order, site, (uintptr_t)__builtin_frame_address(0)); \
  } \
  RSAN_EXPORT RSAN_NOINLINE void __rsan_bcas_##N(void *p, uint64_t expected, uint64_t desired, \
                                                 int32_t order, uint64_t site) { \
    op_bcas(p, expected, desired, N, order, site, (uintptr_t)__builtin_frame_address(0), 1); \
  } \
  RSAN_EXPORT void __rsan_track_##N(void *p, uint64_t v, uint64_t site) { \
    RSAN_RT_GUARD; \
    (void)v; \
    (void)site; \
    op_track(p, N); \
  }

RSAN_DEF_VALUE(1)
RSAN_DEF_VALUE(2)
RSAN_DEF_VALUE(4)
RSAN_DEF_VALUE(8)

/* Tests (testsuite/reference/explore.py drives one thread at a time and cannot block): one
 * attempt of wait / BCAS, with its check and, when memory holds the value, the operation
 * (1); otherwise nothing happens after the check (0): the attempt creates no event. */
RSAN_EXPORT int __rsan_test_wait_once(void *p, uint64_t v, int32_t size, int32_t order, uint64_t site) {
  RSAN_RT_GUARD;
  return op_wait(p, v, size, order, site, (uintptr_t)__builtin_frame_address(0), 0, NULL);
}
RSAN_EXPORT int __rsan_test_bcas_once(void *p, uint64_t expected, uint64_t desired, int32_t size,
                                      int32_t order, uint64_t site) {
  RSAN_RT_GUARD;
  return op_bcas(p, expected, desired, size, order, site, (uintptr_t)__builtin_frame_address(0), 0);
}

RSAN_DEF_SIZE(1)
RSAN_DEF_SIZE(2)
RSAN_DEF_SIZE(4)
RSAN_DEF_SIZE(8)

static void op_fence(int32_t order, uint64_t site) {
  RSAN_SCHED_POINT(order == RSAN_SEQ_CST ? RSAN_SK_FENCE_SC : RSAN_SK_FENCE, NULL, 0);
  rsan_thread *t = rsan_thread_fast();
  RSAN_EXPLAIN(rsan_explain_fence(t, order, site));
  switch (order) {
  case RSAN_CONSUME:
  case RSAN_ACQUIRE: rsan_fence_acq(t); break;
  case RSAN_RELEASE: rsan_fence_rel(t); break;
  case RSAN_ACQ_REL:
    rsan_fence_acq(t);
    rsan_fence_rel(t);
    break;
  case RSAN_SEQ_CST: rsan_fence_sc(t); break; /* both models: SC fences are RMWs on F */
  default: break;
  }
  rsan_thread_check_invariants(t);
}

RSAN_EXPORT void __rsan_fence(int32_t order, int32_t singlethread, uint64_t site) {
  RSAN_RT_GUARD;
  if (singlethread) return; /* syncscope("singlethread"): a compiler barrier only */
  rsan_ensure_init();
  op_fence(order, site);
}

/* A repair fence next to the load of a recognised spin loop (rsan_interface.h): a failed
 * attempt creates no event, so while one is pending the fence is not yet "after the loop"
 * (nor, for a fence before the load, still "before" it): nothing happens, not even a
 * scheduling point, and the loop stays a wait for the scheduler. */
RSAN_EXPORT void __rsan_fence_spin(int32_t order, uint64_t site) {
  RSAN_RT_GUARD;
  rsan_ensure_init();
  if (rsan_thread_fast()->spin_failed) return;
  op_fence(order, site);
}
