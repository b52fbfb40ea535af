/* The repair a robustness report suggests (docs/reports.md §2): the cheapest
 * first (an acquire on an earlier read, an acquire fence, SC fences between two points,
 * stronger orders), its one-line reason, and its structured form for the JSON line and
 * `pyrsan fix`. Benign consequences get the reason no change is needed. */
#include <stdio.h>
#include <string.h>

#include "rsan_report.h"

/* Why the fence suggestion works (one line): an SC fence in each thread of the cycle puts the
 * write SC requires before the access in hb (RC20 SC fences, RSAN paper §2; algorithm.md §3
 * "Fence seq_cst"), so the access can no longer miss it. */
static const char *fence_why(const rsan_report_info *r) {
  return r->is_write ? "SC fences between them order the write SC places first before this one in hb, "
                       "so this write can no longer be placed before it in modification order"
                     : "SC fences between them put the write SC requires this access to see before it in hb, "
                       "so the stale value can no longer be read";
}

static int missing_fences(const rsan_report_info *r);
static int before_on_same_line(const rsan_report_info *r);

static const char *order_why(const rsan_report_info *r) {
  if (r->have_before && before_on_same_line(r))
    return "the thread's earlier atomic access to another location is on the same source line (one statement, "
           "or one instruction that a loop runs again), where no fence can separate the two; stronger "
           "orders are the next candidate (pyrsan fix checks them), or an SC fence before that line if the "
           "thread's stores come earlier";
  if (r->have_before && !missing_fences(r))
    return "the SC fences a fence repair would add are already in the code (between the thread's earlier "
           "access and this one, and after the write SC requires), so the cycle goes through other accesses; "
           "stronger orders are the next candidate (pyrsan fix checks them)";
  return "the thread has no earlier atomic access to another location to separate this one from with a "
         "fence, so only stronger orders can make it see the write SC requires (verify with sc_accesses=ra)";
}

static const char *acquire_why(void) {
  return "the thread has already read, without acquire, a write that releases the write SC requires (its "
         "pending-acquire view has it); acquiring that read (the thread's latest read of another location is "
         "named) or an acquire fence makes the required write happen before this access, so it can no longer "
         "read an older one";
}

static const char *benign_why(const rsan_report_info *r) {
  if (!strcmp(rsan_report_consequence(r), "library"))
    return "no change is needed in the program: the access is a library's own (its code, in a system header, and "
           "its location are the implementation of a synchronisation object the program uses, e.g. std::barrier, "
           "atomic wait/notify or a lock-free queue), which gives the program the ordering its specification "
           "promises";
  if (!strcmp(rsan_report_consequence(r), "write-only"))
    return "no change is needed: no code of the program reads this global (it is static, and its address "
           "is only ever used to store to it), so the order of its writes is something no read can see";
  return "no change is needed: only a failing compare_exchange can read the stale value (a success reads "
         "the latest write), and the failure only feeds a retry of the same compare_exchange, which starts "
         "from the value the failure read";
}

/* ---- SC fences already in the code ----
 * A suggestion must never name a fence that is there: with it the program still reported, so
 * the cycle goes through other accesses and the same fence again fixes nothing. The passes
 * number a module's sites in instruction order, so the sites between two sites of one
 * function (its outermost frame: the function the code was inlined into) are the atomic
 * operations between them in that function's code; a seq_cst access under
 * sc_accesses=fenced counts as an SC fence on each side of it (F_sc; access; F_sc). */
static const rsan_frame *outer_frame(const rsan_site *s) {
  return s && s->nframes ? &s->frames[s->nframes - 1] : NULL;
}

static int same_function(const rsan_site *a, const rsan_site *b) {
  const rsan_frame *fa = outer_frame(a), *fb = outer_frame(b);
  return fa && fb && fa->function && fb->function && fa->file && fb->file &&
         !strcmp(fa->function, fb->function) && !strcmp(fa->file, fb->file);
}

static int is_atomic_kind(uint32_t kind) { return kind <= RSAN_SITE_FENCE; }

static int fenced_sc(const rsan_site *s) {
  return s && s->kind != RSAN_SITE_FENCE && is_atomic_kind(s->kind) &&
         rsan_flag.sc_accesses == RSAN_SC_FENCED &&
         (s->order == RSAN_SEQ_CST || (s->kind == RSAN_SITE_CAS && s->order_fail == RSAN_SEQ_CST));
}

static int is_sc_fence(const rsan_site *s) {
  return s && s->kind == RSAN_SITE_FENCE && s->order == RSAN_SEQ_CST;
}

/* Sites of one source point (the innermost frame's file, line and column) are copies of one
 * operation: the cases of a switch over a memory order only known at run time (one atomic
 * instruction per order, a seq_cst one among them), duplicated instructions. They lie between
 * the two sites in code order but on other paths, so they are never "a fence in between". */
static int same_point(const rsan_site *a, const rsan_site *b) {
  if (!a || !b || !a->nframes || !b->nframes) return 0;
  const rsan_frame *fa = &a->frames[0], *fb = &b->frames[0];
  return fa->line == fb->line && fa->column == fb->column && fa->file && fb->file &&
         !strcmp(fa->file, fb->file);
}

/* an SC fence in the code between sites a and b (a before b in one function) */
static int rsan_repair_fence_between(uint64_t a, uint64_t b) {
  const rsan_site *sa = rsan_site_lookup(a), *sb = rsan_site_lookup(b);
  if (!sa || !sb) return 0;
  if (fenced_sc(sa) || fenced_sc(sb)) return 1;
  if ((a >> 32) != (b >> 32) || (uint32_t)a >= (uint32_t)b || !same_function(sa, sb)) return 0;
  for (uint64_t k = a + 1; k < b; k++) {
    const rsan_site *s = rsan_site_lookup(k);
    if (s && same_function(s, sa) && !same_point(s, sa) && !same_point(s, sb) &&
        (is_sc_fence(s) || fenced_sc(s)))
      return 1;
  }
  return 0;
}

/* an SC fence in the code right after site w: the next atomic operation of its function */
static int rsan_repair_fence_after(uint64_t w) {
  const rsan_site *sw = rsan_site_lookup(w);
  if (!sw) return 0;
  if (fenced_sc(sw)) return 1;
  for (uint64_t k = w + 1;; k++) {
    const rsan_site *s = rsan_site_lookup(k);
    if (!s || !same_function(s, sw)) return 0;
    if (is_atomic_kind(s->kind) && !same_point(s, sw)) return is_sc_fence(s) || fenced_sc(s);
  }
}

/* which of the two fences of the fence suggestion are missing: 1 between the earlier access
 * and this one, 2 in the writer's thread after the write SC requires */
static int missing_fences(const rsan_report_info *r) {
  int m = rsan_repair_fence_between(r->before.site, r->site) ? 0 : 1;
  if (r->forced_state == 1 && r->forced.tid != r->tid && !rsan_repair_fence_after(r->forced.site)) m |= 2;
  return m;
}

/* ---- the two points of a fence between the thread's earlier access and this one ----
 * Named in one function: when the access is in a helper (an inline function of a header, or a
 * call at -O0, whose caller the access's stack names) and the earlier access is in the caller,
 * "between b.c:5 and shared.h:6" would put the fence inside the helper, for every caller. The
 * frames are aligned from the outermost function of the earlier access (its site's inline
 * frames: it has no stack), found in the access's frames, inward while both stacks go through
 * the same call; the first level where they part names the two points. No such function: the
 * primary frames, as every other place of the report names them. */
static int same_frame_function(const rsan_frame *a, const rsan_frame *b) {
  return a->function && b->function && a->file && b->file && !strcmp(a->function, b->function) &&
         !strcmp(a->file, b->file);
}

static void between_points(const rsan_report_info *r, const rsan_frame **there, const rsan_frame **here) {
  rsan_frames acc, bef;
  rsan_frames_build(&acc, r->site, r->stack, r->nstack);
  rsan_frames_build(&bef, r->before.site, NULL, 0);
  *there = rsan_frames_primary(&bef);
  *here = rsan_frames_primary(&acc);
  if (!bef.n || !acc.n) return;
  const rsan_frame *outer = bef.f[bef.n - 1];
  uint32_t a = acc.n; /* acc.f[a - 1]: the outermost access frame in outer's function */
  while (a && !same_frame_function(acc.f[a - 1], outer)) a--;
  if (!a) {
    /* the earlier access ran in a call that has returned (an out-of-line helper: libstdc++'s
     * __fetch_add_flt, a function at -O0): its call stack is not kept, so no point of the
     * access's functions is known to follow it but the access itself; a fence right before the
     * access is between the two in program order whatever called what (*there = NULL) */
    *there = NULL;
    return;
  }
  uint32_t b = bef.n;
  for (;;) {
    const rsan_frame *fa = acc.f[a - 1], *fb = bef.f[b - 1];
    int same_call = fa->line == fb->line && fa->column == fb->column;
    if (!same_call || a == 1 || b == 1 || !same_frame_function(acc.f[a - 2], bef.f[b - 2])) {
      *there = fb, *here = fa;
      return;
    }
    a--, b--;
  }
}

static void frame_short(char *out, size_t n, const rsan_frame *p, int with_col) {
  if (p && with_col) snprintf(out, n, "%s:%u:%u", rsan_basename(p->file), p->line, p->column);
  else if (p) snprintf(out, n, "%s:%u", rsan_basename(p->file), p->line);
  else snprintf(out, n, "<unknown site>");
}

/* the fence suggestion's two points are one file:line (no fence can go between them) */
static int before_on_same_line(const rsan_report_info *r) {
  char there[300], here[300];
  const rsan_frame *ft, *fh;
  between_points(r, &ft, &fh);
  if (!ft) return 0;
  frame_short(there, sizeof there, ft, 0);
  frame_short(here, sizeof here, fh, 0);
  return !strcmp(there, here);
}

/* The cheapest repair first (issue 19): how the suggestion is chosen. */
int rsan_repair_kind(const rsan_report_info *r) {
  if (rsan_report_benign(r)) return RSAN_FIX_NONE;
  /* MP shape: Ta already has the write SC requires. An acquire on the earlier read that
   * brought it (the latest read of another location, when it lacks acquire), or an acquire
   * fence right before the access (Tc := Ta), makes this access see it. */
  if (!r->is_write && r->ta_covers) {
    /* only when that read is the one that brought it (report_robustness.c sole_carrier) */
    if (r->have_before && r->before_sole_carrier && rsan_op_is_read(r->before.op) && r->before.site) {
      const rsan_site *b = rsan_site_lookup(r->before.site);
      int acq = b && (mo_acq((int)b->order) && (!rsan_op_is_cas(r->before.op) || mo_acq((int)b->order_fail)));
      if (b && !acq) return RSAN_FIX_ACQUIRE;
    }
    return RSAN_FIX_ACQUIRE_FENCE;
  }
  if (r->have_before) {
    /* a fence between two points of one statement is no repair a maintainer can write; nor
     * are fences that are all there already */
    if (!before_on_same_line(r) && missing_fences(r)) return RSAN_FIX_FENCES;
  }
  return RSAN_FIX_ORDERS;
}

/* "acquire" / "acq_rel" (with an acquire failure order for a CAS) for the earlier read */
static void acquire_orders(const rsan_site *b, int op, const char **succ, const char **fail) {
  int o = (int)b->order;
  *succ = (o == RSAN_RELEASE || o == RSAN_ACQ_REL) ? "acq_rel" : o == RSAN_SEQ_CST ? "seq_cst" : "acquire";
  if (op == RSAN_OP_LOAD || op == RSAN_OP_WAIT) *succ = o == RSAN_SEQ_CST ? "seq_cst" : "acquire";
  *fail = rsan_op_is_cas(op) ? "acquire" : NULL;
}

void rsan_repair_text(rsan_buf *b, const rsan_report_info *r, const char *obj, int kind) {
  char here[300];
  rsan_site_short(here, sizeof here, r->site);
  const char *op = rsan_op_name(r->op, r->rmw_op);
  if (kind == RSAN_FIX_NONE) {
    rsan_buf_puts(b, benign_why(r));
    return;
  }
  if (kind == RSAN_FIX_ACQUIRE) {
    char there[300], bobj[300];
    int known;
    rsan_block_info blk;
    const rsan_site *bs = rsan_site_lookup(r->before.site);
    const char *succ, *fail;
    acquire_orders(bs, r->before.op, &succ, &fail);
    rsan_site_short(there, sizeof there, r->before.site);
    rsan_location_name(bobj, sizeof bobj, r->before.addr, &known, &blk);
    rsan_buf_printf(b, "make the %s %s %s at %s memory_order_%s",
                    rsan_op_name(r->before.op, r->before.rmw_op), rsan_op_prep(r->before.op), bobj, there,
                    succ);
    if (fail) rsan_buf_printf(b, " with failure order memory_order_%s", fail);
    rsan_buf_printf(b, " (currently %s", rsan_order_name((int)bs->order));
    if (fail) rsan_buf_printf(b, "/%s", rsan_order_name((int)bs->order_fail));
    rsan_buf_printf(b,
                    "; cost: 1 order, no fence), or else insert atomic_thread_fence(memory_order_acquire) "
                    "right before %s (cost: 1 acquire fence): %s",
                    here, acquire_why());
    return;
  }
  if (kind == RSAN_FIX_ACQUIRE_FENCE) {
    rsan_buf_printf(
        b,
        "insert atomic_thread_fence(memory_order_acquire) in thread %d right before %s (%s %s %s; "
        "cost: 1 acquire fence): %s",
        r->tid, here, op, rsan_op_prep(r->op), obj, acquire_why());
    return;
  }
  if (kind == RSAN_FIX_FENCES) {
    char there[300], bobj[300];
    int known, nf = 0, missing = missing_fences(r);
    rsan_block_info blk;
    const rsan_frame *ft, *fh;
    between_points(r, &ft, &fh);
    int returned = ft == NULL; /* the earlier access was in a call that has returned */
    if (returned) rsan_site_short(there, sizeof there, r->before.site);
    else frame_short(there, sizeof there, ft, 0);
    frame_short(here, sizeof here, fh, 0);
    if (!returned && !strcmp(there, here)) { /* same line: tell them apart by column */
      frame_short(there, sizeof there, ft, 1);
      frame_short(here, sizeof here, fh, 1);
    }
    rsan_location_name(bobj, sizeof bobj, r->before.addr, &known, &blk);
    if ((missing & 1) && returned) {
      rsan_buf_printf(
          b,
          "insert atomic_thread_fence(memory_order_seq_cst) in thread %d right before %s (%s %s %s), "
          "after the %s %s %s at %s (in a call that has returned)",
          r->tid, here, op, rsan_op_prep(r->op), obj, rsan_op_name(r->before.op, r->before.rmw_op),
          rsan_op_prep(r->before.op), bobj, there);
      nf = 1;
    } else if (missing & 1) {
      rsan_buf_printf(
          b,
          "insert atomic_thread_fence(memory_order_seq_cst) in thread %d between %s (%s %s %s) and "
          "%s (%s %s %s)",
          r->tid, there, rsan_op_name(r->before.op, r->before.rmw_op), rsan_op_prep(r->before.op), bobj, here,
          op, rsan_op_prep(r->op), obj);
      nf = 1;
    }
    /* A fence on one side alone does not close an SB- or MP-shaped cycle: the writer's
     * thread needs one too, right after the write SC forces this access to see. */
    if (missing & 2) {
      /* named by its first frame outside system headers (its remembered call stack): the
       * write of a libstdc++ helper (atomic_base.h) is the user's call of it */
      char fsite[300];
      rsan_frames ff;
      rsan_frames_build(&ff, r->forced.site, r->forced.stack, RSAN_HIST_STACK);
      const rsan_frame *fp = rsan_frames_primary(&ff);
      if (fp) frame_short(fsite, sizeof fsite, fp, 0);
      else rsan_site_short(fsite, sizeof fsite, r->forced.site);
      rsan_buf_printf(b, "%s in thread %d right after %s (the %s %s %s that SC requires it to see)",
                      nf ? ", and one" : "insert atomic_thread_fence(memory_order_seq_cst)", r->forced.tid,
                      fsite, rsan_op_name(r->forced.op, r->forced.rmw_op), rsan_op_prep(r->forced.op), obj);
      nf++;
    }
    rsan_buf_printf(b, " (cost: %d seq_cst fence%s)", nf, nf > 1 ? "s" : "");
    if (!(missing & 1)) rsan_buf_printf(b, "; the fence between %s and %s is already there", there, here);
    rsan_buf_printf(b, ": %s", fence_why(r));
    return;
  }
  int no = 1;
  rsan_buf_printf(b, "strengthen the %s at %s (currently %s)", op, here, rsan_order_name(r->order));
  if (r->prev_state == 1 && r->prev.site != r->site) {
    char there[300];
    rsan_site_short(there, sizeof there, r->prev.site);
    rsan_buf_printf(b, " and the %s at %s (currently %s)", rsan_op_name(r->prev.op, r->prev.rmw_op), there,
                    rsan_order_name(r->prev.order));
    no = 2;
  }
  rsan_buf_printf(b, " to memory_order_seq_cst (cost: %d order%s): %s", no, no > 1 ? "s" : "", order_why(r));
}

/* {"site": ..., "operation": ..., "order": ..., "file": ..., "line": ..., "column": ..., "function": ...}
 * of an access the repair names (its primary frame only). order < 0: not known. */
static void json_repair_site(rsan_buf *b, uint64_t site, int op, int rmw_op, int order) {
  rsan_frames fr;
  rsan_frames_build(&fr, site, NULL, 0);
  const rsan_frame *p = rsan_frames_primary(&fr);
  rsan_buf_printf(b, "{\"site\": \"0x%016llx\", \"operation\": \"%s\"", (unsigned long long)site,
                  rsan_op_name(op, rmw_op));
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
 * tries first for this report; "cost" counts fences and orders. */
void rsan_repair_json(rsan_buf *b, const rsan_report_info *r, int kind) {
  if (kind == RSAN_FIX_NONE) {
    rsan_buf_puts(b, "{\"kind\": \"none\", \"cost\": {\"fences\": 0, \"orders\": 0}, \"why\": ");
    rsan_buf_json_str(b, benign_why(r));
    rsan_buf_puts(b, "}");
    return;
  }
  if (kind == RSAN_FIX_ACQUIRE) {
    const rsan_site *bs = rsan_site_lookup(r->before.site);
    const char *succ, *fail;
    acquire_orders(bs, r->before.op, &succ, &fail);
    rsan_buf_printf(b, "{\"kind\": \"order\", \"order\": \"%s\"", succ);
    if (fail) rsan_buf_printf(b, ", \"order_fail\": \"%s\"", fail);
    rsan_buf_puts(b, ", \"accesses\": [");
    json_repair_site(b, r->before.site, r->before.op, r->before.rmw_op, (int)bs->order);
    rsan_buf_puts(b, "], \"cost\": {\"fences\": 0, \"orders\": 1}, \"why\": ");
    rsan_buf_json_str(b, acquire_why());
    rsan_buf_puts(b, "}");
    return;
  }
  if (kind == RSAN_FIX_ACQUIRE_FENCE) {
    rsan_buf_printf(b, "{\"kind\": \"fence\", \"order\": \"acquire\", \"thread\": %d, \"before\": ", r->tid);
    json_repair_site(b, r->site, r->op, r->rmw_op, r->order);
    rsan_buf_puts(b, ", \"cost\": {\"fences\": 1, \"orders\": 0}, \"why\": ");
    rsan_buf_json_str(b, acquire_why());
    rsan_buf_puts(b, "}");
    return;
  }
  if (kind == RSAN_FIX_FENCES) {
    int missing = missing_fences(r), two = (missing & 2) != 0;
    if (!(missing & 1)) { /* the writer's fence alone */
      rsan_buf_printf(b, "{\"kind\": \"fence\", \"thread\": %d, \"after\": ", r->forced.tid);
      json_repair_site(b, r->forced.site, r->forced.op, r->forced.rmw_op, r->forced.order);
      rsan_buf_puts(b, ", \"cost\": {\"fences\": 1, \"orders\": 0}, \"why\": ");
      rsan_buf_json_str(b, fence_why(r));
      rsan_buf_puts(b, "}");
      return;
    }
    rsan_buf_printf(b, "{\"kind\": \"fence\", \"thread\": %d, \"after\": ", r->tid);
    json_repair_site(b, r->before.site, r->before.op, r->before.rmw_op, -1);
    rsan_buf_puts(b, ", \"before\": ");
    json_repair_site(b, r->site, r->op, r->rmw_op, r->order);
    if (two) {
      rsan_buf_printf(b, ", \"writer\": {\"thread\": %d, \"after\": ", r->forced.tid);
      json_repair_site(b, r->forced.site, r->forced.op, r->forced.rmw_op, r->forced.order);
      rsan_buf_puts(b, "}");
    }
    rsan_buf_printf(b, ", \"cost\": {\"fences\": %d, \"orders\": 0}, \"why\": ", two ? 2 : 1);
    rsan_buf_json_str(b, fence_why(r));
    rsan_buf_puts(b, "}");
    return;
  }
  int two = r->prev_state == 1 && r->prev.site != r->site;
  rsan_buf_puts(b, "{\"kind\": \"order\", \"order\": \"seq_cst\", \"accesses\": [");
  json_repair_site(b, r->site, r->op, r->rmw_op, r->order);
  if (two) {
    rsan_buf_puts(b, ", ");
    json_repair_site(b, r->prev.site, r->prev.op, r->prev.rmw_op, r->prev.order);
  }
  rsan_buf_printf(b, "], \"cost\": {\"fences\": 0, \"orders\": %d}, \"why\": ", two ? 2 : 1);
  rsan_buf_json_str(b, order_why(r));
  rsan_buf_puts(b, "}");
}
