/* The lock-based core of atomic16.c and atomic_asm.c (atomic_wide.h). */
#include <string.h>

#include "atomic_wide.h"
#include "rsan_sched.h"

uint64_t rsan_wide_fold(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t v = 0;
  if (n <= 8) {
    memcpy(&v, b, n); /* little-endian: the value zero-extended */
    return v;
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = 0;
    memcpy(&w, b + i, n - i < 8 ? n - i : 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}

void rsan_wide_begin(rsan_wide_op *w, void *p, int size, int order, int write) {
  rsan_ensure_init();
  w->t = rsan_thread_current();
  w->p = p;
  w->size = size;
  w->order = order;
  w->fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  if (w->fenced) rsan_fence_sc_step(w->t);
  RSAN_SCHED_POINT(write ? RSAN_SK_RMW : RSAN_SK_LOAD, p, write);
  w->l = rsan_loc_acquire((uintptr_t)p);
  if (RSAN_UNLIKELY(!w->l->init_known)) {
    w->l->init_value = rsan_wide_fold(p, (size_t)size);
    w->l->init_known = 1;
  }
}

static int report_size(int size) { return size > 8 ? 8 : size; }

void rsan_wide_end(rsan_wide_op *w, int kind, uint64_t written, uint64_t expected, int check_expected, int op,
                   int rmw_op, int order_fail, uint64_t site, uintptr_t fa) {
  rsan_thread *t = w->t;
  rsan_loc *l = w->l;
  int order = w->order, size = w->size;
  uint64_t m = size > 8 ? ~0ull : size_mask(size);
  rsan_report_info rep;
  int bad = 0, is_write = 0, wr = 1;
  uint64_t race_epoch = 0;
  if (rsan_checks_on(l)) {
    switch (kind) {
    case RSAN_WIDE_LOAD: bad = rsan_read_violation(t, l); break;
    case RSAN_WIDE_STORE:
    case RSAN_WIDE_RMW: bad = is_write = rsan_write_violation(t, l); break;
    case RSAN_WIDE_CAS_OK: bad = is_write = check_expected && rsan_stale_value_rmw(t, l, expected, m); break;
    case RSAN_WIDE_CAS_FAIL: bad = check_expected && rsan_stale_value_read(t, l, expected, m, 0); break;
    }
  }
  if (RSAN_UNLIKELY(bad))
    bad = rsan_fill_report(&rep, t, l, is_write, op, rmw_op, order, report_size(size), site, fa);
  if (kind == RSAN_WIDE_LOAD || kind == RSAN_WIDE_CAS_FAIL) {
    int mo = kind == RSAN_WIDE_LOAD ? order : order_fail;
    if (mo == RSAN_SEQ_CST || mo == RSAN_ACQ_REL) mo = RSAN_ACQUIRE;
    if (mo == RSAN_RELEASE) mo = RSAN_RELAXED;
    rsan_sc_load(t, l);
    rsan_hb_load(t, l, mo);
    rsan_race_load(t, l, mo);
    race_epoch = rsan_race_epoch(t);
    wr = 0;
  } else if (kind == RSAN_WIDE_STORE) {
    int mo = order == RSAN_SEQ_CST ? RSAN_RELEASE : order;
    uint64_t ts = ++l->stamp, tU = ++l->stampU;
    rsan_sc_write(t, l, ts, tU);
    rsan_hb_store(t, l, mo, ts, tU);
    race_epoch = rsan_race_store(t, l, mo);
    rsan_hist_record(l, t, fa, ts, 0, site, written, order, op, 0, report_size(size));
  } else {
    int mo = order == RSAN_SEQ_CST ? RSAN_ACQ_REL : order;
    uint64_t ts = ++l->stamp; /* an RMW: no U increment */
    rsan_sc_write(t, l, ts, 0);
    rsan_hb_rmw(t, l, mo, ts);
    race_epoch = rsan_race_rmw(t, l, mo);
    rsan_hist_record(l, t, fa, ts, 1, site, written, order, op, rmw_op, report_size(size));
  }
  rsan_thread_note_access(t, site, l, op, rmw_op, report_size(size));
  rsan_loc_check_invariants(l);
  if (rsan_flag.report_races)
    rsan_race_access(t, (uintptr_t)w->p, (uint64_t)size, wr, 1, race_epoch, site, fa);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) {
    rep.rmw_op = rmw_op;
    rsan_report_robustness(&rep);
  }
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(w->p, written, wr);
  if (w->fenced) rsan_fence_sc_step(t);
}
