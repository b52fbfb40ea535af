/* Per-location write history (for reports and the value checks) and the report record of a
 * robustness violation (rsan_report_info), filled under the location lock. */
#include <string.h>

#include "rsan_engine.h"

/* The history entry of the write with timestamp ts (U timestamp of a non-RMW write when
 * is_write). Returns 0 initial value, 1 found, 2 out of the window. */
static int hist_find(const rsan_loc *l, int is_write, uint64_t ts, rsan_hist *out) {
  if (ts == 0) return 0;
  if (!l->hist) return 2;
  for (int i = 0; i < RSAN_HIST; i++) {
    const rsan_hist *h = &l->hist[i];
    if (!h->ts) continue;
    if (is_write ? (!h->rmw && h->tsU == ts) : (h->ts == ts)) {
      *out = *h;
      return 1;
    }
  }
  return 2;
}

void rsan_fill_report(rsan_report_info *r, rsan_thread *t, rsan_loc *l, int is_write, int op, int rmw_op,
                      int order, int size, uint64_t site, uintptr_t fa) {
  memset(r, 0, sizeof *r);
  r->is_write = is_write;
  r->addr = l->addr;
  r->loc_id = l->id;
  r->site = site;
  r->tid = t->tid;
  r->op = op;
  r->rmw_op = rmw_op;
  r->order = order;
  r->size = size;
  r->nstack = rsan_thread_stack(t, fa, r->stack, RSAN_SHADOW_MAX);
  /* exact, or (facts overflowed) the bounds that made the violation certain */
  rsan_view v;
  rsan_view_get(t, l, &v);
  r->ts_hb = is_write ? v.c.hiU : v.c.hi;
  r->ts_sc = is_write ? v.sc.loU : v.sc.lo;
  r->prev_state = hist_find(l, is_write, r->ts_hb, &r->prev);
  r->forced_state = hist_find(l, is_write, r->ts_sc, &r->forced);
  rsan_report_note_state(r, t, l); /* report_robustness.c: candidates, initial value */
  /* the thread's latest earlier access to another location */
  for (uint32_t k = 1; k <= RSAN_RECENT && k <= t->recent_next; k++) {
    const rsan_recent *a = &t->recent[(t->recent_next - k) % RSAN_RECENT];
    if (a->loc_id != l->id || a->addr != l->addr) {
      r->have_before = 1;
      r->before = *a;
      break;
    }
  }
}
