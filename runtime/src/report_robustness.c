/* The robustness report (docs/interfaces.md §2, "kind": "robustness"): text block, JSON line,
 * the writes it may still see, its consequence, the suggestion and the structured repair
 * (docs/reports.md §2: consequences; issue 19). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_explain.h"
#include "rsan_report.h"
#include "rsan_sched.h"

/* Whether the thread's latest read of a location other than l is the only site that can have
 * put what Ta holds beyond Tc there (docs/reports.md §5). Ta grows only by reads without
 * acquire (a relaxed load, RMW or CAS joins the read write's released view into Ta): an
 * acquire on the latest such read repairs an MP-shaped report only when that read brought the
 * write SC requires. The runtime keeps no per-read view, so the claim is made only when the
 * thread's recent ring holds every atomic access it made (it never wrapped) and all the other
 * reads of other locations in it acquire or are at the same site (the acquire added there
 * covers them too). Otherwise the acquire fence right before the access is suggested: it makes
 * Tc cover Ta whichever read brought the write. */
static int read_acquires(uint64_t site, int op) {
  const rsan_site *s = rsan_site_lookup(site);
  if (!s) return 0;
  return mo_acq((int)s->order) && (!rsan_op_is_cas(op) || mo_acq((int)s->order_fail));
}

static int sole_carrier(const rsan_thread *t, const rsan_loc *l) {
  if (t->recent_next > RSAN_RECENT) return 0; /* older accesses are forgotten */
  uint64_t site = 0;
  for (uint32_t k = 1; k <= t->recent_next; k++) {
    const rsan_recent *a = &t->recent[(t->recent_next - k) % RSAN_RECENT];
    if (a->loc_id == l->id && a->addr == l->addr) continue;
    if (!site) {
      site = a->site; /* the latest access to another location: the suggestion's read */
      if (!rsan_op_is_read(a->op)) return 0;
      continue;
    }
    if (rsan_op_is_read(a->op) && a->site != site && !read_acquires(a->site, a->op)) return 0;
  }
  return site != 0;
}

/* ---- what the report needs from the location, under its lock (from rsan_fill_report) ---- */
void rsan_report_note_state(rsan_report_info *r, const rsan_thread *t, rsan_loc *l) {
  uint64_t lo = r->ts_hb, hi = r->ts_sc, oldest = ~0ull;
  r->init_value = l->init_value;
  r->cand_init = lo == 0 && l->init_known;
  r->ncand = 0;
  /* the known writes with a timestamp (U stamp of a non-RMW write for write-type reports)
   * in [hb, sc): the writes the access may still read (or be placed before) */
  for (int i = 0; l->hist && i < rsan_hist_len(l); i++) {
    const rsan_hist *h = &l->hist[i];
    if (!h->ts) continue;
    if (h->ts < oldest) oldest = h->ts;
    uint64_t ts = r->is_write ? h->tsU : h->ts;
    if ((r->is_write && rsan_hist_rmw(h)) || ts < lo || ts >= hi) continue;
    uint32_t k = r->ncand++;
    while (k > 0 && (r->is_write ? r->cand[k - 1].tsU : r->cand[k - 1].ts) > ts) {
      r->cand[k] = r->cand[k - 1];
      k--;
    }
    rsan_hist_decode(h, &r->cand[k]);
  }
  /* complete when no write of the range can have left the history: the range starts at the
   * initial write or at a write still kept (a read-type range in plain stamps) */
  r->cand_complete = r->cand_init || (!r->is_write && lo >= oldest && oldest != ~0ull) ||
                     (r->prev_state == 1);
  if (r->prev_state == 2 && r->ncand) { /* name the oldest candidate still known */
    r->prev = r->cand[0];
    r->prev_state = 1;
    r->prev_oldest_retained = 1;
  }
  rsan_q ta; /* Ta at x: certainly covers when its lower bound does */
  rsan_loc_query(l, &t->Ta, &ta);
  r->ta_covers = (r->is_write ? ta.loU : ta.lo) >= r->ts_sc;
  r->before_sole_carrier = sole_carrier(t, l);
}

int rsan_op_is_cas(int op) { return op == RSAN_OP_CAS_WEAK || op == RSAN_OP_CAS_STRONG; }
int rsan_op_is_read(int op) {
  return op == RSAN_OP_LOAD || op == RSAN_OP_RMW || rsan_op_is_cas(op) || op == RSAN_OP_WAIT ||
         op == RSAN_OP_BCAS || op == RSAN_OP_CASLOOP;
}

/* A read-type report of a CAS can only be a failure: a successful CAS is an RMW, which reads
 * the latest write (its staleness is the write check). When the passes proved that the
 * failure only feeds a retry of the same CAS (RSAN_SITE_CAS_RETRY), the stale value has no
 * consequence: the retry starts from the value the failure read (docs/reports.md §2). */
int rsan_report_only_failure(const rsan_report_info *r) { return rsan_op_is_cas(r->op) && !r->is_write; }

/* The headers of the atomic operations themselves (docs/reports.md §2, `library`): an access
 * whose code is in one of them acts on the atomic object its caller names. The wait headers
 * count only as callers (the wait loop loads the caller's atomic through atomic_base.h); an
 * access of their own is to the library's waiter table. */
static int atomic_api_file(const char *f, int caller) {
  static const char *const api[] = {"/bits/atomic_base.h", "/atomic", "/stdatomic.h",
                                    "/bits/shared_ptr_atomic.h"};
  static const char *const wait[] = {"/bits/atomic_wait.h", "/bits/atomic_timed_wait.h"};
  size_t n = strlen(f);
  for (size_t i = 0; i < sizeof api / sizeof *api; i++)
    if (n >= strlen(api[i]) && !strcmp(f + n - strlen(api[i]), api[i])) return 1;
  if (strstr(f, "/c++/v1/__atomic/")) return 1; /* libc++ */
  for (size_t i = 0; caller && i < sizeof wait / sizeof *wait; i++)
    if (n >= strlen(wait[i]) && !strcmp(f + n - strlen(wait[i]), wait[i])) return 1;
  return 0;
}
/* The access is the library's own: its code is in a system header, and between it and the
 * program's code (the innermost frame outside system headers) some frame is neither an atomic
 * operation nor a wait on one (std::barrier's phase word, the waiter table of atomic wait, a
 * shared_ptr count). An atomic operation is a frame of the atomic headers or one of a site's
 * innermost frames that the passes found to be an atomic primitive (RSAN_SITE_PRIMITIVE_SHIFT:
 * `AO_load_acquire`, `ck_pr_load_int`, a call of boost::atomic's load) in a header outside the
 * C++ library's (whose primitives, like the waiter count's `_M_waiting`, are its own code: for
 * it the atomic headers are the list). No frame of the program's:
 * not the library's (a thread's start routine). */
static int library_access(const rsan_report_info *r) {
  const rsan_site *s = rsan_site_lookup(r->site);
  if (!s || !s->nframes || !s->frames[0].file || !rsan_system_file(s->frames[0].file)) return 0;
  int inside = 0;
  uint32_t depth = 0; /* frames walked: the access site's, then each call site's of the stack */
  for (uint32_t k = 0; s; k++) {
    uint32_t primitive = (s->op >> RSAN_SITE_PRIMITIVE_SHIFT) & RSAN_SITE_PRIMITIVE_MASK;
    for (uint32_t i = 0; i < s->nframes; i++, depth++) {
      const char *f = s->frames[i].file;
      if (!f || !rsan_system_file(f)) return inside;
      int primitive_frame = i < primitive && !strstr(f, "/c++/"); /* the C++ library: its own list */
      if (!primitive_frame && !atomic_api_file(f, depth > 0)) inside = 1;
    }
    s = k < r->nstack && r->stack[k] ? rsan_site_lookup(r->stack[k]) : NULL;
  }
  return 0;
}
const char *rsan_report_consequence(const rsan_report_info *r) {
  const rsan_site *s = rsan_site_lookup(r->site);
  if (rsan_report_only_failure(r) && s && (s->op & RSAN_SITE_CAS_RETRY)) return "failed-cas";
  /* a store to a global nothing reads: only the order of its writes differs from SC, which no
   * read can see (docs/reports.md §2) */
  if (r->is_write && r->op == RSAN_OP_STORE && s && s->kind == RSAN_SITE_STORE &&
      (s->op & RSAN_SITE_WRITE_ONLY))
    return "write-only";
  /* a library's own atomics: its non-SC behaviour is its implementation's, specified by
   * the synchronisation its API promises (docs/reports.md §2) */
  if (library_access(r)) return "library";
  return "value";
}
int rsan_report_benign(const rsan_report_info *r) { return strcmp(rsan_report_consequence(r), "value") != 0; }

/* ---- source keys: reports of the same source merge (inlined copies, other site ids) ---- */
/* a write's frames: its site, then its call stack (rsan_location.h rsan_write) */
static void rsan_hist_frames(rsan_frames *fr, const rsan_write *h) {
  rsan_frames_build(fr, h->site, h->stack, RSAN_HIST_STACK);
}

static uint64_t fnv(uint64_t h, const char *s) {
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return (h ^ 0xff) * 0x100000001b3ull;
}
static uint64_t fnv_u(uint64_t h, uint64_t v) {
  char b[24];
  snprintf(b, sizeof b, "%llu", (unsigned long long)v);
  return fnv(h, b);
}
/* the access: every frame of its site (file:line:column and function, the inline chain) */
static uint64_t site_source_key_of(const rsan_site *s, uint64_t site, int all_frames);
/* A site's key depends only on its record's frames, which stay the same as long as the
 * registry's generation does (sites.c); a stale read in a spin loop reports again and again
 * from the same sites: a small direct-mapped cache keyed by (site, all_frames, generation). */
#define SITE_KEY_CACHE 64
static rsan_spin site_key_lock;
static struct {
  uint64_t k; /* site * 2 + all_frames + 1 (0: empty) */
  uint64_t gen;
  uint64_t key;
} site_key_cache[SITE_KEY_CACHE];
static uint64_t site_source_key(uint64_t site, int all_frames) {
  uint64_t gen;
  const rsan_site *s = rsan_site_lookup_gen(site, &gen);
  if (!s) return site_source_key_of(s, site, all_frames);
  uint64_t k = site * 2 + (all_frames != 0) + 1, h;
  unsigned i = (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 58);
  /* trylock: never waits, and a child forked while another thread held it only loses the
   * cache */
  if (rsan_spin_trylock(&site_key_lock)) {
    int hit = site_key_cache[i].k == k && site_key_cache[i].gen == gen;
    h = site_key_cache[i].key;
    rsan_spin_unlock(&site_key_lock);
    if (hit) return h;
  }
  h = site_source_key_of(s, site, all_frames);
  if (rsan_spin_trylock(&site_key_lock)) {
    site_key_cache[i].k = k;
    site_key_cache[i].gen = gen;
    site_key_cache[i].key = h;
    rsan_spin_unlock(&site_key_lock);
  }
  return h;
}
static uint64_t site_source_key_of(const rsan_site *s, uint64_t site, int all_frames) {
  uint64_t h = 0xcbf29ce484222325ull;
  if (!s || !s->nframes) return fnv_u(fnv(h, "site"), site);
  for (uint32_t i = 0; i < (all_frames ? s->nframes : 1); i++) {
    h = fnv(h, s->frames[i].file);
    h = fnv_u(fnv_u(h, s->frames[i].line), s->frames[i].column);
    h = fnv(h, s->frames[i].function);
  }
  return h;
}

/* the initial value's object: a global, a heap block (by where it was allocated) or unknown */
typedef struct init_obj {
  int kind; /* 0 unknown, 1 global, 2 heap */
  rsan_block_info blk;
} init_obj;
static void find_init_obj(init_obj *o, uintptr_t addr, int obj_known) {
  memset(o, 0, sizeof *o);
  if (obj_known) o->kind = 1;
  else if (rsan_heap_find(addr, &o->blk)) o->kind = 2;
}
static void describe_initial(char *out, size_t n, const init_obj *o, const char *obj, uint64_t v) {
  if (o->kind == 1) {
    snprintf(out, n, "the initial value of global '%s' (value %llu)", obj, (unsigned long long)v);
  } else if (o->kind == 2) { /* obj: the heap location's name (rsan_heap_name) */
    snprintf(out, n, "the value at allocation (value %llu) of %s", (unsigned long long)v, obj);
  } else {
    snprintf(out, n, "the value %s held when first accessed (value %llu)", obj, (unsigned long long)v);
  }
}
static uint64_t stale_key(const rsan_report_info *r, const init_obj *o, const char *obj) {
  uint64_t h = 0xcbf29ce484222325ull;
  if (r->prev_state == 1) return site_source_key(r->prev.site, 0);
  if (r->prev_state == 2) return fnv(h, "older write");
  h = fnv(h, "initial");
  if (o->kind == 1) return fnv(h, obj);
  if (o->kind == 2) return fnv(h, "heap") ^ (o->blk.site ? site_source_key(o->blk.site, 0) : 0);
  return fnv(h, "unknown");
}

/* Headline frame: the innermost frame outside the headers a helper is shared through (an
 * inline helper in a header names its caller; the helper stays in the stack). */
static int header_file(const char *f) {
  const char *b = rsan_basename(f), *dot = strrchr(b, '.');
  if (!dot) return f && f[0] == '/'; /* C++ standard headers have no extension */
  return !strcmp(dot, ".h") || !strcmp(dot, ".hh") || !strcmp(dot, ".hpp") || !strcmp(dot, ".hxx") ||
         !strcmp(dot, ".inc") || !strcmp(dot, ".inl");
}
static const rsan_frame *headline_frame(const rsan_frames *fr) {
  const rsan_frame *p = rsan_frames_primary(fr);
  if (!p || !header_file(p->file)) return p;
  for (uint32_t i = 0; i < fr->n; i++)
    if (fr->f[i]->file && !header_file(fr->f[i]->file)) return fr->f[i];
  return p;
}

/* ---- the report ---- */
static void describe_write(rsan_buf *b, const rsan_write *h, const char *obj) {
  char where[300];
  rsan_site_short(where, sizeof where, h->site);
  char val[48];
  rsan_buf_printf(b, "%s %s %s by thread T%d at %s (value %s)", rsan_op_name(h->op, h->rmw_op),
                  rsan_op_prep(h->op), obj, h->tid, where,
                  rsan_value_text(val, sizeof val, h->value, h->size));
}

static void text_write(rsan_buf *b, const char *title, int state, const rsan_write *h, uint64_t ts,
                       const char *init, int is_write, int oldest) {
  const char *unit = is_write ? "non-RMW write" : "write";
  if (state == 0) {
    rsan_buf_printf(b, "  %s: %s (%s timestamp 0)\n", title, init, unit);
    return;
  }
  if (state == 2) {
    rsan_buf_printf(b,
                    "  %s: an older write (%s timestamp %llu), beyond the last %d writes kept per location\n",
                    title, unit, (unsigned long long)ts, RSAN_HIST);
    return;
  }
  char val[48];
  rsan_value_text(val, sizeof val, h->value, h->size);
  if (oldest)
    rsan_buf_printf(b,
                    "  %s (the %s at timestamp %llu left the history; the oldest candidate still kept):\n"
                    "    atomic %s of size %u (%s, value %s) by thread T%d, %s timestamp %llu:\n",
                    title, unit, (unsigned long long)ts, rsan_op_name(h->op, h->rmw_op), h->size,
                    rsan_order_name(h->order), val, h->tid, unit,
                    (unsigned long long)(is_write ? h->tsU : h->ts));
  else
    rsan_buf_printf(b, "  %s: atomic %s of size %u (%s, value %s) by thread T%d, %s timestamp %llu:\n", title,
                    rsan_op_name(h->op, h->rmw_op), h->size, rsan_order_name(h->order), val, h->tid, unit,
                    (unsigned long long)ts);
  rsan_frames fr;
  rsan_hist_frames(&fr, h);
  rsan_text_frames(b, &fr);
}

static void json_write(rsan_buf *b, int state, const rsan_write *h, const char *obj, const char *init,
                       const init_obj *io, uint64_t ts, int oldest) {
  if (state == 0) {
    rsan_buf_puts(b, "{\"initial\": true, \"description\": ");
    rsan_buf_json_str(b, init);
    rsan_buf_puts(b, ", \"object\": ");
    rsan_buf_json_str(b, io->kind == 1 ? "global" : io->kind == 2 ? "heap" : "unknown");
    if (io->kind == 2) {
      rsan_buf_printf(b, ", \"allocated_by\": %d", io->blk.tid);
      if (io->blk.site) {
        rsan_frames fr;
        rsan_frames_build(&fr, io->blk.site, io->blk.stack, 4);
        rsan_json_frame_fields(b, &fr);
      }
    }
    rsan_buf_puts(b, "}");
    return;
  }
  if (state == 2) {
    rsan_buf_printf(b,
                    "{\"initial\": false, \"out_of_history\": true, \"timestamp\": %llu, "
                    "\"description\": \"an older write (timestamp %llu), beyond the last %d writes kept\"}",
                    (unsigned long long)ts, (unsigned long long)ts, RSAN_HIST);
    return;
  }
  rsan_frames fr;
  rsan_hist_frames(&fr, h);
  rsan_buf_printf(
      b, "{\"site\": \"0x%016llx\", \"thread\": %d, \"operation\": \"%s\", \"order\": \"%s\", \"size\": %u",
      (unsigned long long)h->site, h->tid, rsan_op_name(h->op, h->rmw_op), rsan_order_name(h->order),
      h->size);
  rsan_json_frame_fields(b, &fr);
  rsan_buf_printf(b, ", \"value\": %llu, \"timestamp\": %llu, \"initial\": false",
                  (unsigned long long)h->value, (unsigned long long)h->ts);
  if (oldest) rsan_buf_puts(b, ", \"oldest_retained\": true");
  rsan_buf_puts(b, ", \"description\": ");
  rsan_buf d = {0};
  describe_write(&d, h, obj);
  rsan_buf_json_str(b, d.p);
  rsan_buf_free(&d);
  rsan_buf_puts(b, "}");
}

/* the candidate writes after the one named (JSON "stale_writes": every known write the access
 * may still read or overwrite, oldest first) */
static void json_candidates(rsan_buf *j, const rsan_report_info *r, const char *obj, const char *init) {
  rsan_buf_puts(j, ", \"stale_writes\": [");
  int first = 1;
  if (r->cand_init) {
    rsan_buf_puts(j, "{\"initial\": true, \"description\": ");
    rsan_buf_json_str(j, init);
    rsan_buf_printf(j, ", \"value\": %llu}", (unsigned long long)r->init_value);
    first = 0;
  }
  for (uint32_t i = 0; i < r->ncand; i++) {
    const rsan_write *h = &r->cand[i];
    rsan_frames fr;
    rsan_frames_build(&fr, h->site, NULL, 0);
    const rsan_frame *p = rsan_frames_primary(&fr);
    rsan_buf_printf(j,
                    "%s{\"site\": \"0x%016llx\", \"thread\": %d, \"operation\": \"%s\", \"order\": \"%s\", "
                    "\"value\": %llu, \"timestamp\": %llu",
                    first ? "" : ", ", (unsigned long long)h->site, h->tid, rsan_op_name(h->op, h->rmw_op),
                    rsan_order_name(h->order), (unsigned long long)h->value, (unsigned long long)h->ts);
    if (p) {
      rsan_buf_puts(j, ", \"file\": ");
      rsan_buf_json_str(j, p->file ? p->file : "");
      rsan_buf_printf(j, ", \"line\": %u, \"column\": %u", p->line, p->column);
    }
    rsan_buf_puts(j, ", \"description\": ");
    rsan_buf d = {0};
    describe_write(&d, h, obj);
    rsan_buf_json_str(j, d.p);
    rsan_buf_free(&d);
    rsan_buf_puts(j, "}");
    first = 0;
  }
  rsan_buf_printf(j, "], \"stale_writes_complete\": %s", r->cand_complete ? "true" : "false");
}

/* ---- one text block per group (the access and type), printed at exit with every stale write
 * the group met (issue 19): the JSON line of each report is written at once ---- */
#define GROUP_EXTRA_MAX 32 /* stale writes listed per block; the others are counted */
typedef struct group {
  uint64_t akey, type;
  rsan_buf text;   /* the block of the group's first report */
  size_t insert;   /* where the other stale writes go: before the "Location is" line */
  rsan_buf extra;  /* "    - x[3]: the initial value ...\n" lines */
  uint32_t nextra; /* listed */
  uint64_t more;   /* not listed (beyond GROUP_EXTRA_MAX) */
} group;
static group *groups;
static uint64_t ngroups, cgroups;

static group *group_find(uint64_t akey, uint64_t type) {
  for (uint64_t i = 0; i < ngroups; i++)
    if (groups[i].akey == akey && groups[i].type == type) return &groups[i];
  return NULL;
}

static group *group_add(uint64_t akey, uint64_t type) {
  if (ngroups == cgroups) {
    uint64_t nc = cgroups ? cgroups * 2 : 16;
    group *ng = rsan_alloc(nc * sizeof(group));
    if (ngroups) memcpy(ng, groups, ngroups * sizeof(group));
    rsan_free(groups);
    groups = ng;
    cgroups = nc;
  }
  group *g = &groups[ngroups++];
  memset(g, 0, sizeof *g);
  g->akey = akey;
  g->type = type;
  return g;
}

/* "x+12: the initial value of global 'x' (value 0)", one line of a group's other stale writes */
static void group_note(group *g, const rsan_report_info *r, const char *obj, const char *init) {
  if (g->nextra >= GROUP_EXTRA_MAX) {
    g->more++;
    return;
  }
  rsan_buf_printf(&g->extra, "    - %s (T%d, hb %llu, sc %llu): ", obj, r->tid, (unsigned long long)r->ts_hb,
                  (unsigned long long)r->ts_sc);
  if (r->prev_state == 0) rsan_buf_puts(&g->extra, init);
  else if (r->prev_state == 2)
    rsan_buf_printf(&g->extra, "an older write (timestamp %llu), beyond the last %d writes kept",
                    (unsigned long long)r->ts_hb, RSAN_HIST);
  else describe_write(&g->extra, &r->prev, obj);
  rsan_buf_puts(&g->extra, "\n");
  g->nextra++;
}

/* Print every group's block with the stale writes it met (report_lock held; at exit). */
void rsan_robustness_flush_groups(void) {
  for (uint64_t i = 0; i < ngroups; i++) {
    group *g = &groups[i];
    if (!g->text.n) continue;
    rsan_buf t = {0};
    rsan_buf_putn(&t, g->text.p, g->insert);
    if (g->nextra) {
      rsan_buf_printf(&t, "  The same access %s other stale writes in this run (%llu):\n",
                      g->type == 2 ? "may also be ordered before" : "may also read",
                      (unsigned long long)(g->nextra + g->more));
      rsan_buf_putn(&t, g->extra.p, g->extra.n);
      if (g->more)
        rsan_buf_printf(&t, "    - and %llu more (all are in the JSON lines)\n", (unsigned long long)g->more);
    }
    rsan_buf_putn(&t, g->text.p + g->insert, g->text.n - g->insert);
    rsan_write_all(rsan_text_fd(), t.p, t.n);
    rsan_buf_free(&t);
    rsan_buf_free(&g->text);
    rsan_buf_free(&g->extra);
    g->text.n = 0;
  }
}

/* Forget the groups without printing them (a forked child: they are its parent's). */
void rsan_robustness_forget_groups(void) {
  for (uint64_t i = 0; i < ngroups; i++) {
    rsan_buf_free(&groups[i].text);
    rsan_buf_free(&groups[i].extra);
  }
  rsan_free(groups);
  groups = NULL;
  ngroups = cgroups = 0;
}

/* ---- repeats: a check that fails again and again (a stale read in a spin loop) makes the
 * same report again and again, which the dedup drops; the thread remembers what made the keys
 * it met, so that a repeat costs a lookup instead of the report's names and keys.
 *
 * Exact: the dedup key (akey, pkey, type) is a function of the access's site, the type and the
 * stale write's source: akey = site_source_key(site, 1) and, with prev_state 1 (or 2 with a
 * candidate kept, which note_state names instead), pkey = site_source_key(prev site, 0), both
 * functions of the site records, fixed while the registry's generation is; with prev_state 2
 * and no candidate a constant; with prev_state 0 the initial value of the object at addr,
 * remembered only when addr is in a registered global (whose name is fixed with the generation)
 * and never for a heap block (whose identity changes without the generation). An entry is
 * stored under report_lock once its key is in the dedup table, with the generation read when
 * the check failed, only if the generation is still that one (it only grows, so the keys were
 * computed under it), and with the table's epoch (bumped whenever the table is emptied). A
 * hit therefore means: this report's key is in the table now, and rsan_report_robustness would
 * return at rsan_dedup_insert, having printed, counted and explained nothing. */
static inline unsigned repeat_index(const rsan_repeat *k) {
  return (unsigned)(((k->site ^ (k->x * 31) ^ k->meta) * 0x9E3779B97F4A7C15ull) >> 60) % RSAN_REPEATS;
}
int rsan_repeat_seen(rsan_thread *t, rsan_repeat *k, rsan_repeat **slot) {
  k->gen = rsan_sites_generation();
  k->epoch = __atomic_load_n(&rsan_report_epoch, __ATOMIC_ACQUIRE);
  rsan_repeat *e = &t->repeats[repeat_index(k)];
  *slot = e;
  return e->meta == k->meta && e->site == k->site && e->x == k->x && e->gen == k->gen && e->epoch == k->epoch;
}
/* report_lock held; the report's key is in the dedup table */
static void repeat_note(const rsan_report_info *r, int obj_known) {
  if (!r->repeat_slot) return;
  if ((r->repeat.meta - 1) / 2 == 0 && !obj_known) return; /* the initial value of a non-global */
  if (rsan_sites_generation() != r->repeat.gen) return;
  rsan_repeat e = r->repeat;
  e.epoch = rsan_report_epoch;
  *r->repeat_slot = e;
}

void rsan_report_robustness(rsan_report_info *r) {
  const char *type = r->is_write ? "write" : "read";
  char obj[300];
  int obj_known;
  rsan_object_name(obj, sizeof obj, r->addr, &obj_known);
  init_obj io;
  find_init_obj(&io, r->addr, obj_known); /* heap.c takes its own (leaf) lock */
  /* dedup by source (issue 19): the access's site frames, the stale write's source (the
   * initial value of its object, an older write, or its site's innermost frame), the type */
  uint64_t akey = site_source_key(r->site, 1), pkey = stale_key(r, &io, obj);
  const char *cons = rsan_report_consequence(r);
  int is_benign = rsan_report_benign(r);
  rsan_spin_lock(&rsan_report_lock);
  int fresh = rsan_dedup_insert(akey, pkey, r->is_write ? 2 : 1);
  repeat_note(r, obj_known);
  if (!fresh) {
    rsan_spin_unlock(&rsan_report_lock);
    return;
  }
  /* after the dedup: a repeated report costs no formatting (a heap location's name is the
   * block's, docs/reports.md §3; the keys above never use it) */
  if (io.kind == 2) rsan_heap_name(obj, sizeof obj, r->addr, &io.blk);
  char init[600];
  describe_initial(init, sizeof init, &io, obj, r->init_value);
  rsan_frames acc;
  rsan_frames_build(&acc, r->site, r->stack, r->nstack);
  if (rsan_nsupps) {
    rsan_frames pf, ff;
    pf.n = ff.n = 0;
    if (r->prev_state == 1) rsan_hist_frames(&pf, &r->prev);
    if (r->forced_state == 1) rsan_hist_frames(&ff, &r->forced);
    const rsan_frames *stacks[3] = {&acc, &pf, &ff};
    rsan_supp *sp = rsan_supp_find(RSAN_SUPP_ROBUSTNESS, stacks, 3);
    if (sp) {
      sp->hits++;
      rsan_nsuppressed++;
      rsan_json_suppressed("robustness", type, sp, akey, pkey);
      rsan_spin_unlock(&rsan_report_lock);
      return;
    }
  }
  /* a benign report counts (exit status, halt_on_error, text) only with report_benign=1; its
   * JSON line is always written so that the driver can count it */
  int counts = !is_benign || rsan_flag.report_benign;
  if (counts) rsan_nreports++;
  else rsan_nbenign++;
  /* one text block per group (the access and type): the same access with another stale write
   * (another cell's initial value, another older write) is one more line of that block, which
   * is printed at exit; its JSON line is written now, and the driver lists it under the
   * group's report (docs/reports.md) */
  int pid = (int)getpid();
  char model[64];
  snprintf(model, sizeof model, "RC20 (sc_accesses=%s)",
           rsan_flag.sc_accesses == RSAN_SC_RA ? "ra" : "fenced");
  const rsan_frame *prim = rsan_frames_primary(&acc);
  const rsan_frame *head = headline_frame(&acc);
  const char *opn = rsan_op_name(r->op, r->rmw_op);
  int fix = rsan_repair_kind(r);
  rsan_buf sug = {0};
  rsan_repair_text(&sug, r, obj, fix);

  /* text block */
  rsan_buf t = {0};
  rsan_buf_puts(&t, "==================\n");
  rsan_buf_printf(&t, "WARNING: pyrsan: robustness violation (%s) (pid=%d)\n", type, pid);
  rsan_buf_printf(&t, "  Atomic %s of size %d at 0x%llx (%s) by thread T%d", opn, r->size,
                  (unsigned long long)r->addr, rsan_order_name(r->order), r->tid);
  if (head && head != prim)
    rsan_buf_printf(&t, " in %s at %s:%u (via %s)", head->function ? head->function : "??",
                    rsan_basename(head->file), head->line, prim && prim->function ? prim->function : "??");
  rsan_buf_puts(&t, ":\n");
  rsan_text_frames(&t, &acc);
  if (r->is_write)
    rsan_buf_printf(&t,
                    "  may be ordered before writes to %s that SC places before it: thread T%d is hb-aware "
                    "of non-RMW write %llu only, but SC forces non-RMW write %llu.\n",
                    obj, r->tid, (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  else
    rsan_buf_printf(&t,
                    "  may read a stale value of %s: thread T%d is hb-aware of write %llu only, but SC "
                    "forces it to see write %llu.\n",
                    obj, r->tid, (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  if (rsan_report_only_failure(r))
    rsan_buf_puts(&t,
                  "  Only a failing compare_exchange can read the stale value (a success reads the latest "
                  "write).\n");
  text_write(&t, r->is_write ? "Write it may overwrite out of order" : "Stale write it may still read",
             r->prev_state, &r->prev, r->ts_hb, init, r->is_write, r->prev_oldest_retained);
  text_write(&t, "Write SC forces it to see", r->forced_state, &r->forced, r->ts_sc, init, r->is_write, 0);
  if (r->ncand + (uint32_t)r->cand_init > 1) {
    rsan_buf_printf(&t,
                    "  Writes it may still %s (oldest first):", r->is_write ? "be placed before" : "read");
    if (r->cand_init) rsan_buf_printf(&t, " initial value %llu;", (unsigned long long)r->init_value);
    for (uint32_t i = 0; i < r->ncand; i++) {
      char where[300];
      rsan_site_short(where, sizeof where, r->cand[i].site);
      char val[48];
      rsan_buf_printf(&t, " %s by T%d at %s (value %s)%s", rsan_op_name(r->cand[i].op, r->cand[i].rmw_op),
                      r->cand[i].tid, where,
                      rsan_value_text(val, sizeof val, r->cand[i].value, r->cand[i].size),
                      i + 1 < r->ncand ? ";" : "");
    }
    rsan_buf_puts(&t, r->cand_complete ? "\n" : " (and older ones no longer kept)\n");
  }
  size_t location_at = t.n;
  rsan_text_location(&t, r->addr, obj_known ? 1 : io.kind == 2 ? 2 : 0, obj, &io.blk);
  size_t insert = location_at;
  rsan_buf_printf(&t, "  Timestamps: hb %llu, sc %llu\n", (unsigned long long)r->ts_hb,
                  (unsigned long long)r->ts_sc);
  rsan_buf_printf(&t, "  Model: %s\n", model);
  rsan_buf_printf(&t, "  Consequence: %s\n", cons);
  rsan_buf_printf(&t, "  Suggestion: %s\n", sug.p);
  if (head)
    rsan_buf_printf(&t, "SUMMARY: pyrsan: robustness violation %s:%u in %s\n", head->file ? head->file : "??",
                    head->line, head->function ? head->function : "??");
  else
    rsan_buf_printf(&t, "SUMMARY: pyrsan: robustness violation at site 0x%016llx\n",
                    (unsigned long long)r->site);
  rsan_buf_puts(&t, "==================\n");

  /* JSON line */
  rsan_buf j = {0};
  rsan_buf_printf(
      &j,
      "{\"kind\": \"robustness\", \"type\": \"%s\", \"consequence\": \"%s\", \"pid\": %d, \"model\": ", type,
      cons, pid);
  rsan_buf_json_str(&j, model);
  rsan_buf_printf(&j, ", \"location\": {\"address\": \"0x%llx\"", (unsigned long long)r->addr);
  if (obj_known || io.kind == 2) {
    rsan_buf_puts(&j, ", \"name\": ");
    rsan_buf_json_str(&j, obj);
  }
  if (io.kind == 2) { /* as a race report's location (report_race.c) */
    rsan_frames af;
    rsan_frames_build(&af, 0, io.blk.stack, 4);
    rsan_buf_printf(
        &j,
        ", \"object\": \"heap\", \"block\": {\"address\": \"0x%llx\", \"size\": %llu, \"offset\": %llu, \"thread\": %d",
        (unsigned long long)io.blk.addr, (unsigned long long)io.blk.size,
        (unsigned long long)(r->addr - io.blk.addr), io.blk.tid);
    rsan_json_frame_fields(&j, &af);
    rsan_buf_puts(&j, "}");
  }
  rsan_buf_printf(&j,
                  "}, \"access\": {\"site\": \"0x%016llx\", \"thread\": %d, \"operation\": \"%s\", "
                  "\"order\": \"%s\", \"size\": %d",
                  (unsigned long long)r->site, r->tid, opn, rsan_order_name(r->order), r->size);
  if (r->has_expected) rsan_buf_printf(&j, ", \"expected\": %llu", (unsigned long long)r->expected);
  rsan_json_frame_fields(&j, &acc);
  if (head && head != prim) {
    rsan_buf_puts(&j, ", \"caller\": {\"file\": ");
    rsan_buf_json_str(&j, head->file ? head->file : "");
    rsan_buf_printf(&j, ", \"line\": %u, \"column\": %u, \"function\": ", head->line, head->column);
    rsan_buf_json_str(&j, head->function ? head->function : "");
    rsan_buf_puts(&j, "}");
  }
  rsan_buf_puts(&j, "}, \"previous\": ");
  json_write(&j, r->prev_state, &r->prev, obj, init, &io, r->ts_hb, r->prev_oldest_retained);
  rsan_buf_puts(&j, ", \"forced\": ");
  json_write(&j, r->forced_state, &r->forced, obj, init, &io, r->ts_sc, 0);
  json_candidates(&j, r, obj, init);
  rsan_buf_printf(&j, ", \"only_failure\": %s", rsan_report_only_failure(r) ? "true" : "false");
  rsan_buf_printf(&j, ", \"timestamps\": {\"hb\": %llu, \"sc\": %llu}, \"suggestion\": ",
                  (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  rsan_buf_json_str(&j, sug.p);
  rsan_buf_puts(&j, ", \"repair\": ");
  rsan_repair_json(&j, r, fix);
  rsan_json_schedule_fields(&j);
  rsan_buf_printf(&j, ", \"key\": \"0x%016llx/0x%016llx/%s\", \"group\": \"0x%016llx/%s\", \"text\": ",
                  (unsigned long long)akey, (unsigned long long)pkey, type, (unsigned long long)akey, type);
  rsan_buf_json_str(&j, t.p);
  rsan_buf_puts(&j, "}\n");

  rsan_buf_free(&sug);
  if (counts && rsan_flag.print_reports) {
    /* the text waits for the exit, in its group's block (rsan_robustness_flush_groups) */
    uint64_t gtype = r->is_write ? 2 : 1;
    group *g = group_find(akey, gtype);
    if (!g) {
      g = group_add(akey, gtype);
      g->text = t;
      g->insert = insert;
      t.p = NULL;
      t.n = t.cap = 0;
    } else {
      group_note(g, r, obj, init);
      rsan_ngrouped++;
    }
  }
  rsan_buf_free(&t);
  t.p = NULL;
  t.n = 0;
  RSAN_EXPLAIN(rsan_explain_report(r->tid, akey, pkey, type)); /* the report's key */
  rsan_publish_and_unlock(&t, &j, counts);
}
