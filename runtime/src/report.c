/* Robustness and data-race reports: deduplication, suppressions (ThreadSanitizer-style file, option
 * suppressions=), the ThreadSanitizer-style text block (stderr, or <log_path>.<pid>, when
 * print_reports=1) and the JSON line of docs/interfaces.md §2 (appended to json_path and
 * written with one write(2) per report), halt_on_error and the exit status at exit.
 * Called without any location lock held; uses only write(2) and the runtime's own memory. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsan_internal.h"
#include "rsan_sched.h"

static rsan_spin report_lock;
static uint64_t nreports;
static int json_fd = -1;
static int json_failed;
static uint64_t nsuppressed;
static int log_fd = -1, log_pid, log_failed;

/* flags.c: options rsan_flags has no field for */
const char *rsan_flags_log_path(void);
const char *rsan_flags_suppressions(void);
int rsan_suppressions_load(const char *path, char *err, size_t errn);

/* ---- growable text buffer ---- */
typedef struct buf {
  char *p;
  size_t n, cap;
} buf;

static void b_need(buf *b, size_t k) {
  if (b->n + k + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->n + k + 1) cap *= 2;
  b->p = rsan_realloc(b->p, cap);
  b->cap = cap;
}
static void b_putn(buf *b, const char *s, size_t k) {
  b_need(b, k);
  memcpy(b->p + b->n, s, k);
  b->n += k;
  b->p[b->n] = 0;
}
static void b_puts(buf *b, const char *s) { b_putn(b, s, strlen(s)); }
static void b_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void b_printf(buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[512];
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if ((size_t)k < sizeof tmp) {
    b_putn(b, tmp, (size_t)k);
    return;
  }
  b_need(b, (size_t)k);
  va_start(ap, fmt);
  vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
  va_end(ap);
  b->n += (size_t)k;
}
static void b_json_str(buf *b, const char *s) {
  b_puts(b, "\"");
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"') b_puts(b, "\\\"");
    else if (c == '\\') b_puts(b, "\\\\");
    else if (c == '\n') b_puts(b, "\\n");
    else if (c == '\t') b_puts(b, "\\t");
    else if (c == '\r') b_puts(b, "\\r");
    else if (c < 0x20) b_printf(b, "\\u%04x", c);
    else b_putn(b, (const char *)&c, 1);
  }
  b_puts(b, "\"");
}
static void b_free(buf *b) {
  rsan_free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

static void write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k <= 0) return;
    p += k;
    n -= (size_t)k;
  }
}

/* ---- names ---- */
const char *rsan_order_name(int order) {
  static const char *names[] = {"relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst"};
  return order >= 0 && order <= 5 ? names[order] : "unknown";
}

static const char *rmw_name(int op) {
  static const char *names[] = {"exchange",   "fetch_add",  "fetch_sub",  "fetch_and",
                                "fetch_nand", "fetch_or",   "fetch_xor",  "fetch_max",
                                "fetch_min",  "fetch_umax", "fetch_umin", "fetch_fadd",
                                "fetch_fsub", "fetch_fmax", "fetch_fmin", "fetch_fmaximum",
                                "fetch_fminimum", "fetch_uinc_wrap", "fetch_udec_wrap",
                                "fetch_usub_cond", "fetch_usub_sat"};
  return op >= 0 && op < RSAN_RMW_OP_COUNT ? names[op] : "rmw";
}

static const char *op_name(int op, int rmw_op) {
  switch (op) {
  case RSAN_OP_LOAD: return "load";
  case RSAN_OP_STORE: return "store";
  case RSAN_OP_RMW: return rmw_name(rmw_op);
  case RSAN_OP_CAS_WEAK: return "compare_exchange_weak";
  case RSAN_OP_CAS_STRONG: return "compare_exchange_strong";
  case RSAN_OP_WAIT: return "wait";
  case RSAN_OP_BCAS: return "bcas";
  default: return "sync";
  }
}

/* "store to x", "load from x", "fetch_add on x" */
static const char *op_prep(int op) {
  return op == RSAN_OP_LOAD ? "from" : op == RSAN_OP_STORE ? "to" : "on";
}

/* ---- frames ---- */
#define MAX_FRAMES 256
typedef struct frames {
  const rsan_frame *f[MAX_FRAMES];
  uint32_t n;
} frames;

static void frames_add_site(frames *fr, uint64_t site) {
  const rsan_site *s = rsan_site_lookup(site);
  if (!s) return;
  for (uint32_t i = 0; i < s->nframes && fr->n < MAX_FRAMES; i++) fr->f[fr->n++] = &s->frames[i];
}

static void frames_build(frames *fr, uint64_t site, const uint64_t *stack, uint32_t nstack) {
  fr->n = 0;
  frames_add_site(fr, site);
  for (uint32_t i = 0; i < nstack && stack[i]; i++) frames_add_site(fr, stack[i]);
}

static int system_file(const char *f) {
  return f && (!strncmp(f, "/usr/include/", 13) || !strncmp(f, "/usr/lib/", 9) ||
               !strncmp(f, "/usr/local/include/", 19));
}

/* docs/interfaces.md §2: innermost frame not in a system header, else the innermost one. */
static const rsan_frame *frames_primary(const frames *fr) {
  for (uint32_t i = 0; i < fr->n; i++)
    if (!system_file(fr->f[i]->file)) return fr->f[i];
  return fr->n ? fr->f[0] : NULL;
}

static const char *basename_of(const char *f) {
  const char *s = f ? strrchr(f, '/') : NULL;
  return s ? s + 1 : (f ? f : "?");
}

static void text_frames(buf *b, const frames *fr) {
  if (!fr->n) b_puts(b, "    #0 <unknown site>\n");
  for (uint32_t i = 0; i < fr->n; i++)
    b_printf(b, "    #%u %s %s:%u:%u\n", i, fr->f[i]->function ? fr->f[i]->function : "??",
             fr->f[i]->file ? fr->f[i]->file : "??", fr->f[i]->line, fr->f[i]->column);
}

static void json_frame_fields(buf *b, const frames *fr) {
  const rsan_frame *p = frames_primary(fr);
  if (p) {
    b_puts(b, ", \"file\": ");
    b_json_str(b, p->file ? p->file : "");
    b_printf(b, ", \"line\": %u, \"column\": %u, \"function\": ", p->line, p->column);
    b_json_str(b, p->function ? p->function : "");
  }
  b_puts(b, ", \"stack\": [");
  for (uint32_t i = 0; i < fr->n; i++) {
    b_puts(b, i ? ", {\"file\": " : "{\"file\": ");
    b_json_str(b, fr->f[i]->file ? fr->f[i]->file : "");
    b_printf(b, ", \"line\": %u, \"column\": %u, \"function\": ", fr->f[i]->line, fr->f[i]->column);
    b_json_str(b, fr->f[i]->function ? fr->f[i]->function : "");
    b_puts(b, "}");
  }
  b_puts(b, "]");
}

/* "x", "x+8" or "0x7f..." */
static void object_name(char *out, size_t n, uintptr_t addr, int *known) {
  uint64_t off = 0;
  const char *g = rsan_global_lookup(addr, &off);
  *known = g != NULL;
  if (g && off) snprintf(out, n, "%s+%llu", g, (unsigned long long)off);
  else if (g) snprintf(out, n, "%s", g);
  else snprintf(out, n, "0x%llx", (unsigned long long)addr);
}

/* "sb.c:13" (or "sb.c:13:9" with_col) of a site, or "<unknown site>" */
static void site_short_col(char *out, size_t n, uint64_t site, int with_col) {
  frames fr;
  frames_build(&fr, site, NULL, 0);
  const rsan_frame *p = frames_primary(&fr);
  if (p && with_col) snprintf(out, n, "%s:%u:%u", basename_of(p->file), p->line, p->column);
  else if (p) snprintf(out, n, "%s:%u", basename_of(p->file), p->line);
  else snprintf(out, n, "<unknown site 0x%llx>", (unsigned long long)site);
}
static void site_short(char *out, size_t n, uint64_t site) { site_short_col(out, n, site, 0); }

/* ---- deduplication by (access site, previous site, type) ---- */
typedef struct dkey {
  uint64_t a, b, type; /* type 0: empty slot */
} dkey;
static dkey *dtab;
static uint64_t dcap, dn;

static int dedup_insert(uint64_t a, uint64_t b, uint64_t type) {
  if (dn * 2 >= dcap) {
    uint64_t ncap = dcap ? dcap * 2 : 256;
    dkey *nt = rsan_alloc(ncap * sizeof(dkey));
    for (uint64_t i = 0; i < dcap; i++) {
      if (!dtab[i].type) continue;
      uint64_t h = (dtab[i].a * 31 + dtab[i].b * 17 + dtab[i].type) * 0x9E3779B97F4A7C15ull;
      for (uint64_t j = h & (ncap - 1);; j = (j + 1) & (ncap - 1))
        if (!nt[j].type) {
          nt[j] = dtab[i];
          break;
        }
    }
    rsan_free(dtab);
    dtab = nt;
    dcap = ncap;
  }
  uint64_t h = (a * 31 + b * 17 + type) * 0x9E3779B97F4A7C15ull;
  for (uint64_t j = h & (dcap - 1);; j = (j + 1) & (dcap - 1)) {
    if (!dtab[j].type) {
      dtab[j].a = a;
      dtab[j].b = b;
      dtab[j].type = type;
      dn++;
      return 1;
    }
    if (dtab[j].a == a && dtab[j].b == b && dtab[j].type == type) return 0;
  }
}

/* ---- JSON output file ---- */
void rsan_expand_pid(const char *in, char *out, size_t n) {
  size_t k = 0;
  for (const char *s = in; *s && k + 24 < n; s++) {
    if (s[0] == '%' && s[1] == 'p') {
      k += (size_t)snprintf(out + k, n - k, "%d", (int)getpid());
      s++;
    } else {
      out[k++] = *s;
    }
  }
  out[k] = 0;
}

static void json_open(void) {
  if (json_fd >= 0 || json_failed || !rsan_flag.json_path[0]) return;
  char path[600];
  rsan_expand_pid(rsan_flag.json_path, path, sizeof path);
  json_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (json_fd < 0) {
    json_failed = 1;
    char msg[700];
    int k = snprintf(msg, sizeof msg, "pyrsan: cannot open json_path '%s' for writing\n", path);
    if (k > 0) write_all(2, msg, (size_t)k);
  }
}

/* Under a controlled scheduler, the step a report was raised at and the strategy that
 * reproduces it (docs/scheduling.md "Trace file"). */
static void json_schedule_fields(buf *j) {
  if (!rsan_sched_reports_schedule()) return;
  b_printf(j, ", \"step\": %llu, \"schedule\": {\"sched\": \"%s\", \"seed\": %llu}",
           (unsigned long long)rsan_sched_step(), rsan_sched_name(), (unsigned long long)rsan_sched_seed());
}

/* ---- text output: stderr, or <log_path>.<pid> like the sanitizers' log_path ---- */
static int text_fd(void) {
  const char *lp = rsan_flags_log_path();
  if (!lp || !lp[0] || log_failed) return 2;
  int pid = (int)getpid();
  if (log_fd >= 0 && log_pid == pid) return log_fd;
  if (log_fd >= 0) close(log_fd); /* a forked child writes its own file */
  char path[600];
  snprintf(path, sizeof path, "%s.%d", lp, pid);
  log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  log_pid = pid;
  if (log_fd < 0) {
    log_failed = 1;
    char msg[700];
    int k = snprintf(msg, sizeof msg, "pyrsan: cannot open log_path '%s' for writing; reports go to stderr\n", path);
    if (k > 0) write_all(2, msg, (size_t)k);
    return 2;
  }
  return log_fd;
}

/* ---- suppressions (ThreadSanitizer style) ----
 * Lines `robustness:PATTERN` or `race:PATTERN`, `#` comments, blank lines. PATTERN matches
 * the function, the file or `file:line` of any frame of the access, of the write it may still
 * see, or of the write SC forces; `*` matches any text; the pattern is implicitly
 * `*PATTERN*` unless it starts with `^` or ends with `$`. */
enum { SUPP_ROBUSTNESS = 1, SUPP_RACE = 2 };
typedef struct supp {
  int kind;
  char *pattern; /* without the kind prefix, as written */
  uint64_t hits;
} supp;
static supp *supps;
static uint64_t nsupps;

static int glob_match(const char *p, const char *pe, const char *s, const char *se) {
  const char *star_p = NULL, *star_s = NULL;
  while (s < se) {
    if (p < pe && *p == '*') {
      star_p = ++p;
      star_s = s;
    } else if (p < pe && *p == *s) {
      p++;
      s++;
    } else if (star_p) {
      p = star_p;
      s = ++star_s;
    } else {
      return 0;
    }
  }
  while (p < pe && *p == '*') p++;
  return p == pe;
}

/* TSan's TemplateMatch: '^' and '$' anchor, otherwise `*` is implied at that end. */
static int supp_match_one(const char *pat, const char *str) {
  if (!str || !str[0]) return 0;
  size_t n = strlen(pat);
  int start = n && pat[0] == '^';
  int end = n > (size_t)start && pat[n - 1] == '$';
  char full[600];
  int k = snprintf(full, sizeof full, "%s%.*s%s", start ? "" : "*", (int)(n - (size_t)start - (size_t)end),
                   pat + start, end ? "" : "*");
  if (k < 0 || (size_t)k >= sizeof full) return 0;
  return glob_match(full, full + k, str, str + strlen(str));
}

static int supp_match_frames(const char *pat, const frames *fr) {
  char fl[600];
  for (uint32_t i = 0; i < fr->n; i++) {
    const rsan_frame *f = fr->f[i];
    if (supp_match_one(pat, f->function) || supp_match_one(pat, f->file)) return 1;
    snprintf(fl, sizeof fl, "%s:%u", f->file ? f->file : "", f->line);
    if (f->file && supp_match_one(pat, fl)) return 1;
  }
  return 0;
}

/* The suppression that matches one of the report's stacks, or NULL. */
static supp *supp_find(int kind, const frames *const *stacks, int nstacks) {
  for (uint64_t i = 0; i < nsupps; i++) {
    if (supps[i].kind != kind) continue;
    for (int k = 0; k < nstacks; k++)
      if (stacks[k] && supp_match_frames(supps[i].pattern, stacks[k])) return &supps[i];
  }
  return NULL;
}

static void trim(char **b, char **e) {
  while (*b < *e && (**b == ' ' || **b == '\t' || **b == '\r')) (*b)++;
  while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r')) (*e)--;
}

int rsan_suppressions_load(const char *path, char *err, size_t errn) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errn, "pyrsan: cannot read the suppressions file '%s'\n", path);
    return -1;
  }
  buf b = {0};
  char chunk[4096];
  ssize_t k;
  while ((k = read(fd, chunk, sizeof chunk)) > 0) b_putn(&b, chunk, (size_t)k);
  close(fd);
  if (!b.p) b_putn(&b, "", 0);
  uint64_t cap = 0, lineno = 0;
  for (char *line = b.p; line && *line;) {
    char *nl = strchr(line, '\n');
    char *e = nl ? nl : line + strlen(line);
    char *next = nl ? nl + 1 : NULL;
    lineno++;
    char *s = line;
    trim(&s, &e);
    if (s < e && *s != '#') {
      int kind = 0;
      size_t plen = 0;
      if ((size_t)(e - s) > 11 && !strncmp(s, "robustness:", 11)) kind = SUPP_ROBUSTNESS, plen = 11;
      else if ((size_t)(e - s) > 5 && !strncmp(s, "race:", 5)) kind = SUPP_RACE, plen = 5;
      char *pb = s + plen, *pe = e;
      trim(&pb, &pe);
      if (!kind || pb == pe) {
        snprintf(err, errn,
                 "pyrsan: suppressions file '%s' line %llu: expected 'robustness:PATTERN' or "
                 "'race:PATTERN', got '%.*s'\n",
                 path, (unsigned long long)lineno, (int)((e - s) > 80 ? 80 : (e - s)), s);
        b_free(&b);
        return -1;
      }
      if (nsupps == cap) {
        cap = cap ? cap * 2 : 16;
        supps = rsan_realloc(supps, cap * sizeof(supp));
      }
      char *pat = rsan_alloc((size_t)(pe - pb) + 1);
      memcpy(pat, pb, (size_t)(pe - pb));
      supps[nsupps].kind = kind;
      supps[nsupps].pattern = pat;
      supps[nsupps].hits = 0;
      nsupps++;
    }
    line = next;
  }
  b_free(&b);
  return 0;
}

/* One JSON line per suppressed (distinct) report, so that the driver can count them. */
static void json_suppressed(const char *kind, const char *type, const supp *sp, uint64_t site,
                            uint64_t prev_site) {
  json_open();
  if (json_fd < 0) return;
  buf j = {0};
  b_printf(&j, "{\"kind\": \"suppressed\", \"pid\": %d, \"report_kind\": \"%s\", \"type\": \"%s\", "
               "\"suppression\": ",
           (int)getpid(), kind, type);
  char full[600];
  snprintf(full, sizeof full, "%s:%s", sp->kind == SUPP_RACE ? "race" : "robustness", sp->pattern);
  b_json_str(&j, full);
  b_printf(&j, ", \"key\": \"0x%016llx/0x%016llx/%s\"}\n", (unsigned long long)site,
           (unsigned long long)prev_site, type);
  write_all(json_fd, j.p, j.n);
  b_free(&j);
}

/* ---- the report ---- */
static void describe_write(buf *b, const rsan_hist *h, const char *obj) {
  char where[300];
  site_short(where, sizeof where, h->site);
  b_printf(b, "%s %s %s by thread T%d at %s (value %llu)", op_name(h->op, h->rmw_op), op_prep(h->op),
           obj, h->tid, where, (unsigned long long)h->value);
}

static void text_write(buf *b, const char *title, int state, const rsan_hist *h, uint64_t ts,
                       const char *obj, int is_write) {
  const char *unit = is_write ? "non-RMW write" : "write";
  if (state == 0) {
    b_printf(b, "  %s: the initial value of %s (%s timestamp 0)\n", title, obj, unit);
    return;
  }
  if (state == 2) {
    b_printf(b, "  %s: an older write (%s timestamp %llu, no longer in the history)\n", title, unit,
             (unsigned long long)ts);
    return;
  }
  b_printf(b, "  %s: atomic %s of size %u (%s, value %llu) by thread T%d, %s timestamp %llu:\n",
           title, op_name(h->op, h->rmw_op), h->size, rsan_order_name(h->order),
           (unsigned long long)h->value, h->tid, unit, (unsigned long long)ts);
  frames fr;
  frames_build(&fr, h->site, h->stack, RSAN_HIST_STACK);
  text_frames(b, &fr);
}

static void json_write(buf *b, int state, const rsan_hist *h, const char *obj) {
  if (state == 0) {
    b_puts(b, "{\"initial\": true, \"description\": ");
    char d[300];
    snprintf(d, sizeof d, "the initial value of %s", obj);
    b_json_str(b, d);
    b_puts(b, "}");
    return;
  }
  if (state == 2) {
    b_puts(b, "{\"description\": \"an older write\"}");
    return;
  }
  frames fr;
  frames_build(&fr, h->site, h->stack, RSAN_HIST_STACK);
  b_printf(b, "{\"site\": \"0x%016llx\", \"thread\": %d, \"operation\": \"%s\", \"order\": \"%s\", \"size\": %u",
           (unsigned long long)h->site, h->tid, op_name(h->op, h->rmw_op), rsan_order_name(h->order),
           h->size);
  json_frame_fields(b, &fr);
  b_printf(b, ", \"value\": %llu, \"initial\": false, \"description\": ", (unsigned long long)h->value);
  buf d = {0};
  describe_write(&d, h, obj);
  b_json_str(b, d.p);
  b_free(&d);
  b_puts(b, "}");
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

static void suggestion(buf *b, const rsan_report_info *r, const char *obj) {
  char here[300];
  site_short(here, sizeof here, r->site);
  const char *op = op_name(r->op, r->rmw_op);
  if (r->have_before) {
    char there[300], bobj[300];
    int known;
    site_short(there, sizeof there, r->before.site);
    if (!strcmp(there, here)) { /* same line: tell them apart by column */
      site_short_col(there, sizeof there, r->before.site, 1);
      site_short_col(here, sizeof here, r->site, 1);
    }
    object_name(bobj, sizeof bobj, r->before.addr, &known);
    b_printf(b,
             "insert atomic_thread_fence(memory_order_seq_cst) in thread %d between %s (%s %s %s) and "
             "%s (%s %s %s)",
             r->tid, there, op_name(r->before.op, r->before.rmw_op), op_prep(r->before.op), bobj, here,
             op, op_prep(r->op), obj);
    /* A fence on one side alone does not close an SB- or MP-shaped cycle: the writer's
     * thread needs one too, right after the write SC forces this access to see. */
    if (r->forced_state == 1 && r->forced.tid != r->tid) {
      char fsite[300];
      site_short(fsite, sizeof fsite, r->forced.site);
      b_printf(b, ", and one in thread %d right after %s (the %s %s %s that SC requires it to see)",
               r->forced.tid, fsite, op_name(r->forced.op, r->forced.rmw_op), op_prep(r->forced.op), obj);
    }
    b_printf(b, ": %s", fence_why(r));
    return;
  }
  b_printf(b, "strengthen the %s at %s (currently %s)", op, here, rsan_order_name(r->order));
  if (r->prev_state == 1) {
    char there[300];
    site_short(there, sizeof there, r->prev.site);
    b_printf(b, " and the %s at %s (currently %s)", op_name(r->prev.op, r->prev.rmw_op), there,
             rsan_order_name(r->prev.order));
  }
  b_printf(b, " to memory_order_seq_cst: %s", order_why());
}

/* {"site": ..., "operation": ..., "order": ..., "file": ..., "line": ..., "column": ..., "function": ...}
 * of an access the repair names (its primary frame only). order < 0: not known. */
static void json_repair_site(buf *b, uint64_t site, int op, int rmw_op, int order) {
  frames fr;
  frames_build(&fr, site, NULL, 0);
  const rsan_frame *p = frames_primary(&fr);
  b_printf(b, "{\"site\": \"0x%016llx\", \"operation\": \"%s\"", (unsigned long long)site, op_name(op, rmw_op));
  if (order >= 0) b_printf(b, ", \"order\": \"%s\"", rsan_order_name(order));
  if (p) {
    b_puts(b, ", \"file\": ");
    b_json_str(b, p->file ? p->file : "");
    b_printf(b, ", \"line\": %u, \"column\": %u, \"function\": ", p->line, p->column);
    b_json_str(b, p->function ? p->function : "");
  }
  b_puts(b, "}");
}

/* The structured twin of the suggestion (docs/interfaces.md §2, "repair"): what `pyrsan fix`
 * tries first for this report. */
static void json_repair(buf *b, const rsan_report_info *r) {
  if (r->have_before) {
    b_printf(b, "{\"kind\": \"fence\", \"thread\": %d, \"after\": ", r->tid);
    json_repair_site(b, r->before.site, r->before.op, r->before.rmw_op, -1);
    b_puts(b, ", \"before\": ");
    json_repair_site(b, r->site, r->op, r->rmw_op, r->order);
    if (r->forced_state == 1 && r->forced.tid != r->tid) {
      b_printf(b, ", \"writer\": {\"thread\": %d, \"after\": ", r->forced.tid);
      json_repair_site(b, r->forced.site, r->forced.op, r->forced.rmw_op, r->forced.order);
      b_puts(b, "}");
    }
    b_puts(b, ", \"why\": ");
    b_json_str(b, fence_why(r));
    b_puts(b, "}");
    return;
  }
  b_puts(b, "{\"kind\": \"order\", \"order\": \"seq_cst\", \"accesses\": [");
  json_repair_site(b, r->site, r->op, r->rmw_op, r->order);
  if (r->prev_state == 1) {
    b_puts(b, ", ");
    json_repair_site(b, r->prev.site, r->prev.op, r->prev.rmw_op, r->prev.order);
  }
  b_puts(b, "], \"why\": ");
  b_json_str(b, order_why());
  b_puts(b, "}");
}

/* The end of every report, called with report_lock held: the text block (unless the driver
 * turned it off) and the JSON line, then the lock released; halt_on_error ends the process
 * when the report may halt (violations and races; a deadlock ends it anyway). */
static void publish_and_unlock(buf *t, buf *j, int may_halt) {
  if (rsan_flag.print_reports) write_all(text_fd(), t->p, t->n);
  json_open();
  if (json_fd >= 0) write_all(json_fd, j->p, j->n);
  b_free(t);
  b_free(j);
  int halt = may_halt && rsan_flag.halt_on_error && !rsan_test_mode;
  rsan_spin_unlock(&report_lock);
  if (halt) {
    rsan_report_at_exit();
    _exit(rsan_flag.exitcode);
  }
}

void rsan_report_robustness(rsan_report_info *r) {
  const char *type = r->is_write ? "write" : "read";
  uint64_t prev_site = r->prev_state == 1 ? r->prev.site : 0;
  rsan_spin_lock(&report_lock);
  if (!dedup_insert(r->site, prev_site, r->is_write ? 2 : 1)) {
    rsan_spin_unlock(&report_lock);
    return;
  }
  frames acc;
  frames_build(&acc, r->site, r->stack, r->nstack);
  if (nsupps) {
    frames pf, ff;
    pf.n = ff.n = 0;
    if (r->prev_state == 1) frames_build(&pf, r->prev.site, r->prev.stack, RSAN_HIST_STACK);
    if (r->forced_state == 1) frames_build(&ff, r->forced.site, r->forced.stack, RSAN_HIST_STACK);
    const frames *stacks[3] = {&acc, &pf, &ff};
    supp *sp = supp_find(SUPP_ROBUSTNESS, stacks, 3);
    if (sp) {
      sp->hits++;
      nsuppressed++;
      json_suppressed("robustness", type, sp, r->site, prev_site);
      rsan_spin_unlock(&report_lock);
      return;
    }
  }
  nreports++;
  int pid = (int)getpid();
  char obj[300];
  int obj_known;
  object_name(obj, sizeof obj, r->addr, &obj_known);
  char model[64];
  snprintf(model, sizeof model, "RC20 (sc_accesses=%s)", rsan_flag.sc_accesses == RSAN_SC_RA ? "ra" : "fenced");
  const rsan_frame *prim = frames_primary(&acc);
  const char *opn = op_name(r->op, r->rmw_op);
  buf sug = {0};
  suggestion(&sug, r, obj);

  /* text block */
  buf t = {0};
  b_puts(&t, "==================\n");
  b_printf(&t, "WARNING: pyrsan: robustness violation (%s) (pid=%d)\n", type, pid);
  b_printf(&t, "  Atomic %s of size %d at 0x%llx (%s) by thread T%d:\n", opn, r->size,
           (unsigned long long)r->addr, rsan_order_name(r->order), r->tid);
  text_frames(&t, &acc);
  if (r->is_write)
    b_printf(&t, "  may be ordered before writes to %s that SC places before it: thread T%d is hb-aware "
                 "of non-RMW write %llu only, but SC forces non-RMW write %llu.\n",
             obj, r->tid, (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  else
    b_printf(&t, "  may read a stale value of %s: thread T%d is hb-aware of write %llu only, but SC "
                 "forces it to see write %llu.\n",
             obj, r->tid, (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  text_write(&t, r->is_write ? "Write it may overwrite out of order" : "Stale write it may still read",
             r->prev_state, &r->prev, r->ts_hb, obj, r->is_write);
  text_write(&t, "Write SC forces it to see", r->forced_state, &r->forced, r->ts_sc, obj, r->is_write);
  if (obj_known) b_printf(&t, "  Location is global '%s' at 0x%llx\n", obj, (unsigned long long)r->addr);
  else b_printf(&t, "  Location is 0x%llx (not a known global)\n", (unsigned long long)r->addr);
  b_printf(&t, "  Timestamps: hb %llu, sc %llu\n", (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  b_printf(&t, "  Model: %s\n", model);
  if (r->strong_cas) b_puts(&t, "  Note: strong CAS, value tracking off\n");
  b_printf(&t, "  Suggestion: %s\n", sug.p);
  if (prim)
    b_printf(&t, "SUMMARY: pyrsan: robustness violation %s:%u in %s\n", prim->file ? prim->file : "??",
             prim->line, prim->function ? prim->function : "??");
  else
    b_printf(&t, "SUMMARY: pyrsan: robustness violation at site 0x%016llx\n", (unsigned long long)r->site);
  b_puts(&t, "==================\n");

  /* JSON line */
  buf j = {0};
  b_printf(&j, "{\"kind\": \"robustness\", \"type\": \"%s\", \"pid\": %d, \"model\": ", type, pid);
  b_json_str(&j, model);
  b_printf(&j, ", \"location\": {\"address\": \"0x%llx\"", (unsigned long long)r->addr);
  if (obj_known) {
    b_puts(&j, ", \"name\": ");
    b_json_str(&j, obj);
  }
  b_printf(&j, "}, \"access\": {\"site\": \"0x%016llx\", \"thread\": %d, \"operation\": \"%s\", "
               "\"order\": \"%s\", \"size\": %d",
           (unsigned long long)r->site, r->tid, opn, rsan_order_name(r->order), r->size);
  json_frame_fields(&j, &acc);
  b_puts(&j, "}, \"previous\": ");
  json_write(&j, r->prev_state, &r->prev, obj);
  b_puts(&j, ", \"forced\": ");
  json_write(&j, r->forced_state, &r->forced, obj);
  b_printf(&j, ", \"timestamps\": {\"hb\": %llu, \"sc\": %llu}, \"suggestion\": ",
           (unsigned long long)r->ts_hb, (unsigned long long)r->ts_sc);
  b_json_str(&j, sug.p);
  b_puts(&j, ", \"repair\": ");
  json_repair(&j, r);
  if (r->strong_cas) b_puts(&j, ", \"note\": \"strong CAS, value tracking off\"");
  json_schedule_fields(&j);
  b_printf(&j, ", \"key\": \"0x%016llx/0x%016llx/%s\", \"text\": ", (unsigned long long)r->site,
           (unsigned long long)prev_site, type);
  b_json_str(&j, t.p);
  b_puts(&j, "}\n");

  b_free(&sug);
  publish_and_unlock(&t, &j, 1);
}

/* ---- race reports (algorithm.md §5; docs/interfaces.md §2, "kind": "race") ---- */
static uint64_t nraces;

/* "Atomic write", "Read", ... ("atomic write", "read" after "Previous") */
static const char *access_noun(int is_write, int is_atomic, int capital) {
  static const char *names[2][4] = {{"read", "write", "atomic read", "atomic write"},
                                    {"Read", "Write", "Atomic read", "Atomic write"}};
  return names[capital != 0][2 * (is_atomic != 0) + (is_write != 0)];
}

/* The object of a race: a global's name, a heap block with where it was allocated, or the
 * bare address. *kind: "global", "heap" or "unknown"; blk filled for "heap". */
static void race_object(char *out, size_t n, uintptr_t addr, const char **kind, rsan_block_info *blk) {
  int known;
  object_name(out, n, addr, &known);
  if (known) {
    *kind = "global";
    return;
  }
  if (rsan_heap_find(addr, blk)) {
    char where[300];
    if (blk->site) site_short(where, sizeof where, blk->site);
    else snprintf(where, sizeof where, "an unknown site");
    if (blk->tid >= 0)
      snprintf(out, n, "heap block of size %llu at 0x%llx allocated by thread T%d at %s",
               (unsigned long long)blk->size, (unsigned long long)blk->addr, blk->tid, where);
    else
      snprintf(out, n, "heap block of size %llu at 0x%llx", (unsigned long long)blk->size,
               (unsigned long long)blk->addr);
    *kind = "heap";
    return;
  }
  *kind = "unknown";
}

/* "Thread T2 (created by thread T0 at:" + its creation stack; the main thread has none */
static void text_thread(buf *b, int tid) {
  rsan_thread *th = rsan_thread_by_tid(tid);
  if (!th || th->parent_tid < 0) {
    b_printf(b, "  Thread T%d (%s)\n", tid, tid == 0 ? "main thread" : "creation unknown");
    return;
  }
  b_printf(b, "  Thread T%d created by thread T%d at:\n", tid, th->parent_tid);
  frames fr;
  frames_build(&fr, 0, th->create_stack, th->ncreate);
  text_frames(b, &fr);
}

static void json_thread(buf *b, int tid) {
  rsan_thread *th = rsan_thread_by_tid(tid);
  b_printf(b, "{\"thread\": %d", tid);
  if (th && th->parent_tid >= 0) {
    frames fr;
    frames_build(&fr, 0, th->create_stack, th->ncreate);
    b_printf(b, ", \"created_by\": %d", th->parent_tid);
    json_frame_fields(b, &fr);
  }
  b_puts(b, "}");
}

static void json_race_side(buf *b, uint64_t site, int tid, int is_write, int is_atomic, int is_free,
                           int size, const frames *fr) {
  b_printf(b, "{\"site\": \"0x%016llx\", \"thread\": %d, \"type\": \"%s\", \"atomic\": %s, \"size\": %d",
           (unsigned long long)site, tid, is_write ? "write" : "read", is_atomic ? "true" : "false", size);
  if (is_free) b_puts(b, ", \"free\": true");
  json_frame_fields(b, fr);
  b_puts(b, "}");
}

void rsan_report_race(rsan_race_info *r) {
  const char *type = r->is_write ? "write" : "read";
  /* one report per pair of sites, in either order */
  uint64_t a = r->site < r->prev_site ? r->site : r->prev_site;
  uint64_t bsite = r->site < r->prev_site ? r->prev_site : r->site;
  rsan_spin_lock(&report_lock);
  if (!dedup_insert(a, bsite, 3)) {
    rsan_spin_unlock(&report_lock);
    return;
  }
  frames acc, prev;
  frames_build(&acc, r->site, r->stack, r->nstack);
  frames_build(&prev, r->prev_site, r->prev_stack, r->prev_nstack);
  if (nsupps) {
    const frames *stacks[2] = {&acc, &prev};
    supp *sp = supp_find(SUPP_RACE, stacks, 2);
    if (sp) {
      sp->hits++;
      nsuppressed++;
      json_suppressed("race", type, sp, a, bsite);
      rsan_spin_unlock(&report_lock);
      return;
    }
  }
  nreports++;
  nraces++;
  int pid = (int)getpid();
  char obj[600];
  const char *obj_kind;
  rsan_block_info blk;
  race_object(obj, sizeof obj, r->addr, &obj_kind, &blk);
  const rsan_frame *prim = frames_primary(&acc);

  buf t = {0};
  b_puts(&t, "==================\n");
  b_printf(&t, "WARNING: pyrsan: data race (pid=%d)\n", pid);
  b_printf(&t, "  %s of size %d at 0x%llx by thread T%d:\n",
           r->is_free ? "Free of a block" : access_noun(r->is_write, r->is_atomic, 1), r->size,
           (unsigned long long)r->addr, r->tid);
  text_frames(&t, &acc);
  b_printf(&t, "  Previous %s of size %d at 0x%llx by thread T%d:\n", access_noun(r->prev_is_write, r->prev_is_atomic, 0),
           r->prev_size, (unsigned long long)r->addr, r->prev_tid);
  text_frames(&t, &prev);
  if (!strcmp(obj_kind, "global")) b_printf(&t, "  Location is global '%s' at 0x%llx\n", obj, (unsigned long long)r->addr);
  else if (!strcmp(obj_kind, "heap")) b_printf(&t, "  Location is %s\n", obj);
  else b_printf(&t, "  Location is 0x%llx (not a known global or heap block)\n", (unsigned long long)r->addr);
  text_thread(&t, r->tid);
  if (r->prev_tid != r->tid) text_thread(&t, r->prev_tid);
  b_puts(&t, "  Model: C11 happens-before with fences (RC20)\n");
  if (prim)
    b_printf(&t, "SUMMARY: pyrsan: data race %s:%u in %s\n", prim->file ? prim->file : "??", prim->line,
             prim->function ? prim->function : "??");
  else
    b_printf(&t, "SUMMARY: pyrsan: data race at site 0x%016llx\n", (unsigned long long)r->site);
  b_puts(&t, "==================\n");

  buf j = {0};
  b_printf(&j, "{\"kind\": \"race\", \"type\": \"%s\", \"pid\": %d, \"model\": \"RC20\"", type, pid);
  b_printf(&j, ", \"location\": {\"address\": \"0x%llx\", \"object\": \"%s\"", (unsigned long long)r->addr, obj_kind);
  if (strcmp(obj_kind, "unknown")) {
    b_puts(&j, ", \"name\": ");
    b_json_str(&j, obj);
  }
  if (!strcmp(obj_kind, "heap")) {
    frames af;
    frames_build(&af, 0, blk.stack, 4);
    b_printf(&j, ", \"block\": {\"address\": \"0x%llx\", \"size\": %llu, \"thread\": %d", (unsigned long long)blk.addr,
             (unsigned long long)blk.size, blk.tid);
    json_frame_fields(&j, &af);
    b_puts(&j, "}");
  }
  b_puts(&j, "}, \"access\": ");
  json_race_side(&j, r->site, r->tid, r->is_write, r->is_atomic, r->is_free, r->size, &acc);
  b_puts(&j, ", \"previous\": ");
  json_race_side(&j, r->prev_site, r->prev_tid, r->prev_is_write, r->prev_is_atomic, 0, r->prev_size, &prev);
  b_puts(&j, ", \"threads\": [");
  json_thread(&j, r->tid);
  if (r->prev_tid != r->tid) {
    b_puts(&j, ", ");
    json_thread(&j, r->prev_tid);
  }
  b_printf(&j, "], \"key\": \"0x%016llx/0x%016llx/race\", \"text\": ", (unsigned long long)a,
           (unsigned long long)bsite);
  b_json_str(&j, t.p);
  b_puts(&j, "}\n");

  publish_and_unlock(&t, &j, 1);
}

uint64_t rsan_report_count(void) { return __atomic_load_n(&nreports, __ATOMIC_RELAXED); }

void rsan_report_reset(void) {
  rsan_spin_lock(&report_lock);
  nreports = 0;
  nraces = 0;
  nsuppressed = 0;
  rsan_free(dtab);
  dtab = NULL;
  dcap = dn = 0;
  if (json_fd >= 0) close(json_fd);
  json_fd = -1;
  json_failed = 0;
  rsan_spin_unlock(&report_lock);
}

/* docs/scheduling.md "Scheduling points": no thread can run while some have not exited. */
void rsan_report_deadlock(const rsan_deadlock_thread *th, int n) {
  int pid = (int)getpid();
  rsan_spin_lock(&report_lock);
  buf t = {0}, j = {0};
  b_puts(&t, "==================\n");
  b_printf(&t, "WARNING: pyrsan: deadlock (pid=%d): no thread can run at step %llu (sched=%s, seed=%llu)\n",
           pid, (unsigned long long)rsan_sched_step(), rsan_sched_name(), (unsigned long long)rsan_sched_seed());
  b_printf(&j, "{\"kind\": \"deadlock\", \"pid\": %d", pid);
  json_schedule_fields(&j);
  b_puts(&j, ", \"threads\": [");
  for (int i = 0; i < n; i++) {
    uint64_t stack[RSAN_SHADOW_MAX];
    uint32_t ns = rsan_thread_stack(th[i].thread, 0, stack, RSAN_SHADOW_MAX);
    frames fr;
    fr.n = 0;
    frames_build(&fr, 0, stack, ns);
    b_printf(&t, "  Thread T%d waits for %s:\n", th[i].tid, th[i].waiting_for);
    text_frames(&t, &fr);
    b_printf(&j, "%s{\"thread\": %d, \"waiting_for\": ", i ? ", " : "", th[i].tid);
    b_json_str(&j, th[i].waiting_for);
    json_frame_fields(&j, &fr);
    b_puts(&j, "}");
  }
  b_puts(&t, "SUMMARY: pyrsan: deadlock\n==================\n");
  b_puts(&j, "], \"text\": ");
  b_json_str(&j, t.p);
  b_puts(&j, "}\n");
  publish_and_unlock(&t, &j, 0);
}

void rsan_report_at_exit(void) {
  rsan_sched_at_exit(); /* the trace's end line, before any _exit below */
  if (rsan_test_mode) return;
  uint64_t n = rsan_report_count();
  uint64_t ns = __atomic_load_n(&nsuppressed, __ATOMIC_RELAXED);
  char msg[800];
  if (rsan_flag.verbosity >= 1) {
    int k = snprintf(msg, sizeof msg, "pyrsan: exit: %llu report(s), %llu suppressed, %llu live location(s)\n",
                     (unsigned long long)n, (unsigned long long)ns, (unsigned long long)rsan_loc_count());
    if (k > 0) write_all(text_fd(), msg, (size_t)k);
  }
  /* Suppressions used, as TSan prints them: when verbose or when anything was reported. */
  if (ns && (rsan_flag.verbosity >= 1 || (n && rsan_flag.print_reports))) {
    int k = snprintf(msg, sizeof msg, "pyrsan: %llu report(s) suppressed:\n", (unsigned long long)ns);
    if (k > 0) write_all(text_fd(), msg, (size_t)k);
    for (uint64_t i = 0; i < nsupps; i++) {
      if (!supps[i].hits) continue;
      k = snprintf(msg, sizeof msg, "pyrsan:   %llu %s:%s\n", (unsigned long long)supps[i].hits,
                   supps[i].kind == SUPP_RACE ? "race" : "robustness", supps[i].pattern);
      if (k > 0) write_all(text_fd(), msg, (size_t)k);
    }
  }
  if (!n) return;
  if (rsan_flag.print_reports) {
    uint64_t nr = __atomic_load_n(&nraces, __ATOMIC_RELAXED);
    int k = nr ? snprintf(msg, sizeof msg, "pyrsan: reported %llu robustness violation(s) and %llu data race(s)\n",
                          (unsigned long long)(n - nr), (unsigned long long)nr)
               : snprintf(msg, sizeof msg, "pyrsan: reported %llu robustness violation(s)\n", (unsigned long long)n);
    if (k > 0) write_all(text_fd(), msg, (size_t)k);
  }
  fflush(NULL);
  _exit(rsan_flag.exitcode);
}
