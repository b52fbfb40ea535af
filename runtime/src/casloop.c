/* CAS retry loops that are atomic read-modify-writes (passes/casloops.py; docs/reports.md
 * §1): `old = load(x); do { new = f(old); } while (!CAS(x, &old, new));` with no other
 * effect is the RMW x := f(x). The first read and the failed attempts create no events and
 * are not checked (a stale value only makes an attempt fail; the retry starts from the value
 * the failed attempt read); the successful attempt is one RMW with the success order and the
 * RMW write check (algorithm.md §3.1: any value may be read, so no value refinement).
 * The passes only recognise loops whose reads are ordered no more strongly than the success
 * order's read part, which is what makes dropping them exact. */
#include "rsan_engine.h"
#include "rsan_sched.h"

/* The first read: the real load (under the location lock, so it reads a whole write), the
 * location's initial value noted; nothing else. */
static uint64_t op_casloop_load(void *p, int size) {
  rsan_ensure_init();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
  rsan_loc_touch(l, p, size);
  uint64_t v = mem_load(p, size);
  rsan_loc_release(l);
  return v;
}

/* One attempt. A seq_cst access in sc_accesses=fenced is F_sc; RMW; F_sc, and the fences
 * belong to the event: they are made only when the attempt can succeed (memory holds the
 * expected value when looked at first), as for a recognised spin load. A real attempt that
 * still fails (another thread wrote in between) is a failed attempt; its leading fence only
 * adds order (a miss at worst, never a false alarm). */
static rsan_cas_ret op_casloop_cas(void *p, uint64_t expected, uint64_t desired, int size, int succ, int fail,
                                   int weak, uint64_t site, uintptr_t fa) {
  (void)fail;
  (void)weak; /* the real attempt is strong: a spurious failure is one more failed attempt */
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_current();
  uint64_t m = size_mask(size);
  int fenced = succ == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int ms = succ == RSAN_SEQ_CST ? RSAN_ACQ_REL : succ;
  rsan_cas_ret r = {0, 0};
  RSAN_SCHED_POINT(RSAN_SK_RMW, p, 1);
  if (fenced) {
    rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
    uint64_t got = mem_load(p, size);
    rsan_loc_release(l);
    if (got != (expected & m)) {
      r.old = got;
      if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, got, 0);
      return r;
    }
    rsan_fence_sc_step(t);
  }
  rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
  rsan_loc_touch(l, p, size);
  uint64_t old = expected & m;
  int ok = mem_cas(p, &old, desired & m, 0, size);
  rsan_report_info rep;
  int bad = 0;
  if (ok) {
    bad = rsan_checks_on(l) && rsan_write_violation(t, l);
    if (RSAN_UNLIKELY(bad)) bad = rsan_fill_report(&rep, t, l, 1, RSAN_OP_CASLOOP, 0, succ, size, site, fa);
    uint64_t ts = ++l->stamp; /* an RMW: no U increment */
    rsan_sc_write(t, l, ts, 0);
    rsan_hb_rmw(t, l, ms, ts);
    uint64_t race_epoch = rsan_race_rmw(t, l, ms);
    rsan_hist_record(l, t, fa, ts, 1, site, desired & m, succ, RSAN_OP_CASLOOP, 0, size);
    rsan_thread_note_access(t, site, l, RSAN_OP_CASLOOP, 0, size);
    rsan_loc_check_invariants(l);
    if (rsan_flag.report_races) rsan_race_access(t, (uintptr_t)p, (uint64_t)size, 1, 1, race_epoch, site, fa);
  }
  rsan_loc_release(l);
  if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, ok ? desired & m : old, ok);
  if (ok) {
    rsan_thread_check_invariants(t);
    if (fenced) rsan_fence_sc_step(t);
  }
  r.old = old;
  r.ok = (uint64_t)ok;
  return r;
}

#define RSAN_DEF_CASLOOP(N) \
  RSAN_EXPORT RSAN_NOINLINE uint64_t __rsan_casloop_load_##N(void *p, int32_t order, uint64_t site) { \
    (void)order; \
    (void)site; \
    return op_casloop_load(p, N); \
  } \
  RSAN_EXPORT RSAN_NOINLINE rsan_cas_ret __rsan_casloop_cas_##N(void *p, uint64_t expected, \
                                                                uint64_t desired, int32_t succ, \
                                                                int32_t fail, int32_t weak, uint64_t site) { \
    return op_casloop_cas(p, expected, desired, N, succ, fail, weak, site, \
                          (uintptr_t)__builtin_frame_address(0)); \
  }

RSAN_DEF_CASLOOP(1)
RSAN_DEF_CASLOOP(2)
RSAN_DEF_CASLOOP(4)
RSAN_DEF_CASLOOP(8)
