/* The robustness report (docs/interfaces.md §2, "kind": "robustness"): text block, JSON line,
 * the two writes, the suggestion and the structured repair. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_explain.h"
#include "rsan_report.h"
#include "rsan_sched.h"

/* ---- the report ---- */
static void describe_write(rsan_buf *b, const rsan_hist *h, const char *obj) {
  char where[300];
  rsan_site_short(where, sizeof where, h->site);
  rsan_buf_printf(b, "%s %s %s by thread T%d at %s (value %llu)", rsan_op_name(h->op, h->rmw_op), rsan_op_prep(h->op),
           obj, h->tid, where, (unsigned long long)h->value);
}

static void text_write(rsan_buf *b, const char *title, int state, const rsan_hist *h, uint64_t ts,
                       const char *obj, int is_write) {
  const char *unit = is_write ? "non-RMW write" : "write";
  if (state == 0) {
    rsan_buf_printf(b, "  %s: the initial value of %s (%s timestamp 0)\n", title, obj, unit);
    return;
  }
  if (state == 2) {
    rsan_buf_printf(b, "  %s: an older write (%s timestamp %llu, no longer in the history)\n", title, unit,
             (unsigned long long)ts);
    return;
  }
  rsan_buf_printf(b, "  %s: atomic %s of size %u (%s, value %llu) by thread T%d, %s timestamp %llu:\n",
           title, rsan_op_name(h->op, h->rmw_op), h->size, rsan_order_name(h->order),
           (unsigned long long)h->value, h->tid, unit, (unsigned long long)ts);
  rsan_frames fr;
  rsan_frames_build(&fr, h->site, h->stack, RSAN_HIST_STACK);
  rsan_text_frames(b, &fr);
}

static void json_write(rsan_buf *b, int state, const rsan_hist *h, const char *obj) {
  if (state == 0) {
    rsan_buf_puts(b, "{\"initial\": true, \"description\": ");
    char d[300];
    snprintf(d, sizeof d, "the initial value of %s", obj);
    rsan_buf_json_str(b, d);
    rsan_buf_puts(b, "}");
    return;
  }
  if (state == 2) {
    rsan_buf_puts(b, "{\"description\": \"an older write\"}");
    return;
  }
  rsan_frames fr;
  rsan_frames_build(&fr, h->site, h->stack, RSAN_HIST_STACK);
  rsan_buf_printf(b, "{\"site\": \"0x%016llx\", \"thread\": %d, \"operation\": \"%s\", \"order\": \"%s\", \"size\": %u",
           (unsigned long long)h->site, h->tid, rsan_op_name(h->op, h->rmw_op), rsan_order_name(h->order),
           h->size);
  rsan_json_frame_fields(b, &fr);
  rsan_buf_printf(b, ", \"value\": %llu, \"initial\": false, \"description\": ", (unsigned long long)h->value);
  rsan_buf d = {0};
  describe_write(&d, h, obj);
  rsan_buf_json_str(b, d.p);
  rsan_buf_free(&d);
  rsan_buf_puts(b, "}");
}

/* Why the fence suggestion works (one line): an SC fence in each thread of the cycle puts the
 * write SC requires before the access in hb (RC20 SC fences, papers/002 §2; algorithm.md §3
 * "Fence seq_cst"), so the access can no longer miss it. */
static const char *fence_why(const rsan_report_info *r) {
  return r->is_write ? "SC fences between them order the write SC places first before this one in hb, "
                       "so this write can no longer be placed before it in modification order"
                     : "SC fences between them put the write SC requires this access to see before it in hb, "
                       "so the stale value can no longer be read";
}

static const char *order_why(void) {
  return "the thread has no earlier atomic access to another location to separate this one from with a "
         "fence, so only stronger orders can make it see the write SC requires (verify with sc_accesses=ra)";
}

static void suggestion(rsan_buf *b, const rsan_report_info *r, const char *obj) {
  char here[300];
  rsan_site_short(here, sizeof here, r->site);
  const char *op = rsan_op_name(r->op, r->rmw_op);
  if (r->have_before) {
    char there[300], bobj[300];
    int known;
    rsan_site_short(there, sizeof there, r->before.site);
    if (!strcmp(there, here)) { /* same line: tell them apart by column */
      rsan_site_short_col(there, sizeof there, r->before.site, 1);
      rsan_site_short_col(here, sizeof here, r->site, 1);
    }
    rsan_object_name(bobj, sizeof bobj, r->before.addr, &known);
    rsan_buf_printf(b,
             "insert atomic_thread_fence(memory_order_seq_cst) in thread %d between %s (%s %s %s) and "
             "%s (%s %s %s)",
             r->tid, there, rsan_op_name(r->before.op, r->before.rmw_op), rsan_op_prep(r->before.op), bobj, here,
             op, rsan_op_prep(r->op), obj);
    /* A fence on one side alone does not close an SB- or MP-shaped cycle: the writer's
     * thread needs one too, right after the write SC forces this access to see. */
    if (r->forced_state == 1 && r->forced.tid != r->tid) {
      char fsite[300];
      rsan_site_short(fsite, sizeof fsite, r->forced.site);
      rsan_buf_printf(b, ", and one in thread %d right after %s (the %s %s %s that SC requires it to see)",
               r->forced.tid, fsite, rsan_op_name(r->forced.op, r->forced.rmw_op), rsan_op_prep(r->forced.op), obj);
    }
    rsan_buf_printf(b, ": %s", fence_why(r));
    return;
  }
  rsan_buf_printf(b, "strengthen the %s at %s (currently %s)", op, here, rsan_order_name(r->order));
  if (r->prev_state == 1) {
    char there[300];
    rsan_site_short(there, sizeof there, r->prev.site);
    rsan_buf_printf(b, " and the %s at %s (currently %s)", rsan_op_name(r->prev.op, r->prev.rmw_op), there,
             rsan_order_name(r->prev.order));
  }
  rsan_buf_printf(b, " to memory_order_seq_cst: %s", order_why());
}

/* {"site": ..., "operation": ..., "order": ..., "file": ..., "line": ..., "column": ..., "function": ...}
 * of an access the repair names (its primary frame only). order < 0: not known. */
static void json_repair_site(rsan_buf *b, uint64_t site, int op, int rmw_op, int order) {
  rsan_frames fr;
  rsan_frames_build(&fr, site, NULL, 0);
  const rsan_frame *p = rsan_frames_primary(&fr);
  rsan_buf_printf(b, "{\"site\": \"0x%016llx\", \"operation\": \"%s\"", (unsigned long long)site, rsan_op_name(op, rmw_op));
  if (order >= 0) rsan_buf_printf(b, ", \"order\": \"%s\"", rsan_order_name(order));
  if (p) {
    rsan_buf_puts(b, ", \"file\": ");
    rsan_buf_json_str(b, p->file ? p->file : "");
    rsan_buf_printf(b, ", \"line\": %u, \"column\": %u, \"function\": ", p->line, p->column);
    rsan_buf_json_str(b, p->function ? p->function : "");
  }
  rsan_buf_puts(b, "}");
}

/* The structured twin of the suggestion (docs/interfaces.md §2, "repair"): what `pyrsan fix`
 * tries first for this report. */
static void json_repair(rsan_buf *b, const rsan_report_info *r) {
  if (r->have_before) {
    rsan_buf_printf(b, "{\"kind\": \"fence\", \"thread\": %d, \"after\": ", r->tid);
    json_repair_site(b, r->before.site, r->before.op, r->before.rmw_op, -1);
    rsan_buf_puts(b, ", \"before\": ");
    json_repair_site(b, r->site, r->op, r->rmw_op, r->order);
    if (r->forced_state == 1 && r->forced.tid != r->tid) {
      rsan_buf_printf(b, ", \"writer\": {\"thread\": %d, \"after\": ", r->forced.tid);
      json_repair_site(b, r->forced.site, r->forced.op, r->forced.rmw_op, r->forced.order);
      rsan_buf_puts(b, "}");
    }
    rsan_buf_puts(b, ", \"why\": ");
    rsan_buf_json_str(b, fence_why(r));
    rsan_buf_puts(b, "}");
    return;
  }
  rsan_buf_puts(b, "{\"kind\": \"order\", \"order\": \"seq_cst\", \"accesses\": [");
  json_repair_site(b, r->site, r->op, r->rmw_op, r->order);
  if (r->prev_state == 1) {
    rsan_buf_puts(b, ", ");
    json_repair_site(b, r->prev.site, r->prev.op, r->prev.rmw_op, r->prev.order);
  }
  rsan_buf_puts(b, "], \"why\": ");
  rsan_buf_json_str(b, order_why());
  rsan_buf_puts(b, "}");
}

void rsan_report_robustness(rsan_report_info *r) {
  const char *type = r->is_write ? "write" : "read";
  uint64_t prev_site = r->prev_state == 1 ? r->prev.site : 0;
  rsan_spin_lock(&rsan_report_lock);
  if (!rsan_dedup_insert(r->site, prev_site, r->is_write ? 2 : 1)) {
    rsan_spin_unlock(&rsan_report_lock);
    return;
  }
  rsan_frames acc;
  rsan_frames_build(&acc, r->site, r->stack, r->nstack);
  if (rsan_nsupps) {
    rsan_frames pf, ff;
    pf.n = ff.n = 0;
    if (r->prev_state == 1) rsan_frames_build(&pf, r->prev.site, r->prev.stack, RSAN_HIST_STACK);
    if (r->forced_state == 1) rsan_frames_build(&ff, r->forced.site, r->forced.stack, RSAN_HIST_STACK);
    const rsan_frames *stacks[3] = {&acc, &pf, &ff};
    rsan_supp *sp = rsan_supp_find(RSAN_SUPP_ROBUSTNESS, stacks, 3);
    if (sp) {
      sp->hits++;
      rsan_nsuppressed++;
      rsan_json_suppressed("robustness", type, sp, r->site, prev_site);
      rsan_spin_unlock(&rsan_report_lock);
      return;
    }
  }
  rsan_nreports++;
  int pid = (int)getpid();
  char obj[300];
  int obj_known;
  rsan_object_name(obj, sizeof obj, r->addr, &obj_known);
  char model[64];
  snprintf(model, sizeof model, "RC20 (sc_accesses=%s)", rsan_flag.sc_accesses == RSAN_SC_RA ? "ra" : "fenced");
  const rsan_frame *prim = rsan_frames_primary(&acc);
  const char *opn = rsan_op_name(r->op, r->rmw_op);
  rsan_buf sug = {0};
  suggestion(&sug, r, obj);

  /* text block */
  rsan_buf t = {0};
  rsan_buf_puts(&t, "==================\n");
  rsan_buf_printf(&t, "WARNING: pyrsan: robustness violation (%s) (pid=%d)\n", type, pid);
  rsan_buf_printf(&t, "  Atomic %s of size %d at 0x%llx (%s) by thread T%d:\n", opn, r->size,
           (unsigned long long)r->addr, rsan_order_name(r->order), r->tid);
  rsan_text_frames(&t, &acc);
  if (r->is_write)
    rsan_buf_printf(&t, "  may be ordered before writes to %s that SC places before it: thread T%d is hb-aware "
                 "of non-RMW write %llu only, but SC forces non-RMW write %llu.\n",
             obj, r->tid, (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  else
    rsan_buf_printf(&t, "  may read a stale value of %s: thread T%d is hb-aware of write %llu only, but SC "
                 "forces it to see write %llu.\n",
             obj, r->tid, (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  text_write(&t, r->is_write ? "Write it may overwrite out of order" : "Stale write it may still read",
             r->prev_state, &r->prev, r->ts_hb, obj, r->is_write);
  text_write(&t, "Write SC forces it to see", r->forced_state, &r->forced, r->ts_sc, obj, r->is_write);
  if (obj_known) rsan_buf_printf(&t, "  Location is global '%s' at 0x%llx\n", obj, (unsigned long long)r->addr);
  else rsan_buf_printf(&t, "  Location is 0x%llx (not a known global)\n", (unsigned long long)r->addr);
  rsan_buf_printf(&t, "  Timestamps: hb %llu, sc %llu\n", (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  rsan_buf_printf(&t, "  Model: %s\n", model);
  if (r->strong_cas) rsan_buf_puts(&t, "  Note: strong CAS, value tracking off\n");
  rsan_buf_printf(&t, "  Suggestion: %s\n", sug.p);
  if (prim)
    rsan_buf_printf(&t, "SUMMARY: pyrsan: robustness violation %s:%u in %s\n", prim->file ? prim->file : "??",
             prim->line, prim->function ? prim->function : "??");
  else
    rsan_buf_printf(&t, "SUMMARY: pyrsan: robustness violation at site 0x%016llx\n", (unsigned long long)r->site);
  rsan_buf_puts(&t, "==================\n");

  /* JSON line */
  rsan_buf j = {0};
  rsan_buf_printf(&j, "{\"kind\": \"robustness\", \"type\": \"%s\", \"pid\": %d, \"model\": ", type, pid);
  rsan_buf_json_str(&j, model);
  rsan_buf_printf(&j, ", \"location\": {\"address\": \"0x%llx\"", (unsigned long long)r->addr);
  if (obj_known) {
    rsan_buf_puts(&j, ", \"name\": ");
    rsan_buf_json_str(&j, obj);
  }
  rsan_buf_printf(&j, "}, \"access\": {\"site\": \"0x%016llx\", \"thread\": %d, \"operation\": \"%s\", "
               "\"order\": \"%s\", \"size\": %d",
           (unsigned long long)r->site, r->tid, opn, rsan_order_name(r->order), r->size);
  rsan_json_frame_fields(&j, &acc);
  rsan_buf_puts(&j, "}, \"previous\": ");
  json_write(&j, r->prev_state, &r->prev, obj);
  rsan_buf_puts(&j, ", \"forced\": ");
  json_write(&j, r->forced_state, &r->forced, obj);
  rsan_buf_printf(&j, ", \"timestamps\": {\"hb\": %llu, \"sc\": %llu}, \"suggestion\": ",
           (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  rsan_buf_json_str(&j, sug.p);
  rsan_buf_puts(&j, ", \"repair\": ");
  json_repair(&j, r);
  if (r->strong_cas) rsan_buf_puts(&j, ", \"note\": \"strong CAS, value tracking off\"");
  rsan_json_schedule_fields(&j);
  rsan_buf_printf(&j, ", \"key\": \"0x%016llx/0x%016llx/%s\", \"text\": ", (unsigned long long)r->site,
           (unsigned long long)prev_site, type);
  rsan_buf_json_str(&j, t.p);
  rsan_buf_puts(&j, "}\n");

  rsan_buf_free(&sug);
  RSAN_EXPLAIN(rsan_explain_report(r->tid, r->site, prev_site, type));
  rsan_publish_and_unlock(&t, &j, 1);
}

