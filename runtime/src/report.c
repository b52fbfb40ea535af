/* What every report shares: deduplication, the ThreadSanitizer-style text block (stderr, or
 * <log_path>.<pid>, when print_reports=1) and the JSON line of docs/interfaces.md §2 (appended
 * to json_path with one write(2) per report), halt_on_error, the deadlock report and the exit
 * status at exit. The report kinds live in report_robustness.c and report_race.c.
 * Called without any location lock held; uses only write(2) and the runtime's own memory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsan_report.h"
#include "rsan_sched.h"

rsan_spin rsan_report_lock;
uint64_t rsan_nreports;
static int json_fd = -1;
static int json_failed;
static int at_exit_done; /* rsan_report_at_exit ran */
uint64_t rsan_nsuppressed;
uint64_t rsan_nbenign;
uint64_t rsan_ngrouped;
static int log_fd = -1, log_pid, log_failed;

/* ---- names ---- */
const char *rsan_order_name(int order) {
  static const char *names[] = {"relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst"};
  return order >= 0 && order <= 5 ? names[order] : "unknown";
}

static const char *rmw_name(int op) {
  static const char *names[] = {"exchange",       "fetch_add",       "fetch_sub",       "fetch_and",
                                "fetch_nand",     "fetch_or",        "fetch_xor",       "fetch_max",
                                "fetch_min",      "fetch_umax",      "fetch_umin",      "fetch_fadd",
                                "fetch_fsub",     "fetch_fmax",      "fetch_fmin",      "fetch_fmaximum",
                                "fetch_fminimum", "fetch_uinc_wrap", "fetch_udec_wrap", "fetch_usub_cond",
                                "fetch_usub_sat"};
  return op >= 0 && op < RSAN_RMW_OP_COUNT ? names[op] : "rmw";
}

const char *rsan_op_name(int op, int rmw_op) {
  switch (op) {
  case RSAN_OP_LOAD: return "load";
  case RSAN_OP_STORE: return "store";
  case RSAN_OP_RMW: return rmw_name(rmw_op);
  case RSAN_OP_CAS_WEAK: return "compare_exchange_weak";
  case RSAN_OP_CAS_STRONG: return "compare_exchange_strong";
  case RSAN_OP_WAIT: return "wait";
  case RSAN_OP_BCAS: return "bcas";
  case RSAN_OP_CASLOOP: return "cas_loop";
  default: return "sync";
  }
}

/* "store to x", "load from x", "fetch_add on x" */
const char *rsan_op_prep(int op) { return op == RSAN_OP_LOAD ? "from" : op == RSAN_OP_STORE ? "to" : "on"; }
/* ---- frames ---- */

static void frames_add_site(rsan_frames *fr, uint64_t site) {
  const rsan_site *s = rsan_site_lookup(site);
  if (!s) return;
  for (uint32_t i = 0; i < s->nframes && fr->n < MAX_FRAMES; i++) fr->f[fr->n++] = &s->frames[i];
}

void rsan_frames_build(rsan_frames *fr, uint64_t site, const uint64_t *stack, uint32_t nstack) {
  fr->n = 0;
  frames_add_site(fr, site);
  for (uint32_t i = 0; i < nstack && stack[i]; i++) frames_add_site(fr, stack[i]);
}

int rsan_system_file(const char *f) {
  static const char *const prefixes[] = RSAN_SYSTEM_PREFIXES;
  if (!f) return 0;
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
    if (!strncmp(f, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}

/* docs/interfaces.md §2: innermost frame not in a system header, else the innermost one. */
const rsan_frame *rsan_frames_primary(const rsan_frames *fr) {
  for (uint32_t i = 0; i < fr->n; i++)
    if (!rsan_system_file(fr->f[i]->file)) return fr->f[i];
  return fr->n ? fr->f[0] : NULL;
}

const char *rsan_basename(const char *f) {
  const char *s = f ? strrchr(f, '/') : NULL;
  return s ? s + 1 : (f ? f : "?");
}

void rsan_text_frames(rsan_buf *b, const rsan_frames *fr) {
  if (!fr->n) rsan_buf_puts(b, "    #0 <unknown site>\n");
  for (uint32_t i = 0; i < fr->n; i++)
    rsan_buf_printf(b, "    #%u %s %s:%u:%u\n", i, fr->f[i]->function ? fr->f[i]->function : "??",
                    fr->f[i]->file ? fr->f[i]->file : "??", fr->f[i]->line, fr->f[i]->column);
}

void rsan_json_frame_fields(rsan_buf *b, const rsan_frames *fr) {
  const rsan_frame *p = rsan_frames_primary(fr);
  if (p) {
    rsan_buf_puts(b, ", \"file\": ");
    rsan_buf_json_str(b, p->file ? p->file : "");
    rsan_buf_printf(b, ", \"line\": %u, \"column\": %u, \"function\": ", p->line, p->column);
    rsan_buf_json_str(b, p->function ? p->function : "");
  }
  rsan_buf_puts(b, ", \"stack\": [");
  for (uint32_t i = 0; i < fr->n; i++) {
    rsan_buf_puts(b, i ? ", {\"file\": " : "{\"file\": ");
    rsan_buf_json_str(b, fr->f[i]->file ? fr->f[i]->file : "");
    rsan_buf_printf(b, ", \"line\": %u, \"column\": %u, \"function\": ", fr->f[i]->line, fr->f[i]->column);
    rsan_buf_json_str(b, fr->f[i]->function ? fr->f[i]->function : "");
    rsan_buf_puts(b, "}");
  }
  rsan_buf_puts(b, "]");
}

/* out := s followed by the digits of v in base (16 or 10, lowercase) when base != 0, truncated
 * to n - 1 characters and terminated, as snprintf(out, n, "%s%llx" / "%s%llu") would: the
 * object name is made for every robustness check that fails, before its dedup (a stale read
 * in a spin loop fails again and again), where snprintf cost ~1,000 instructions */
static void put_name(char *out, size_t n, const char *s, uint64_t v, unsigned base) {
  if (!n) return;
  char digits[24];
  size_t nd = 0;
  if (base) {
    do {
      digits[nd++] = "0123456789abcdef"[v % base];
      v /= base;
    } while (v);
  }
  size_t k = 0;
  for (; *s && k + 1 < n; s++) out[k++] = *s;
  while (nd && k + 1 < n) out[k++] = digits[--nd];
  out[k] = 0;
}

/* A written value for the text reports: "5"; a value whose top bit (of its size) is set also as
 * the signed number it is when the object is signed, "-1 (0xffffffff)": an atomic_int that holds
 * -1 read as "4294967295" is not what the program wrote (the runtime does not know the type) */
const char *rsan_value_text(char *out, size_t n, uint64_t v, unsigned size) {
  if (size == 1 || size == 2 || size == 4 || size == 8) {
    unsigned bits = size * 8;
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    v &= mask;
    if (v >> (bits - 1)) {
      int64_t s = bits == 64 ? (int64_t)v : (int64_t)(v | ~mask);
      snprintf(out, n, "%lld (0x%llx)", (long long)s, (unsigned long long)v);
      return out;
    }
  }
  snprintf(out, n, "%llu", (unsigned long long)v);
  return out;
}

/* "x", "x+8" or "0x7f..." */
void rsan_object_name(char *out, size_t n, uintptr_t addr, int *known) {
  uint64_t off = 0;
  const char *g = rsan_global_lookup(addr, &off);
  *known = g != NULL;
  if (g && off) {
    char pre[300]; /* "%s+" */
    put_name(pre, sizeof pre, g, 0, 0);
    size_t k = strlen(pre);
    if (k + 1 < sizeof pre) pre[k++] = '+', pre[k] = 0;
    if (k + 1 < sizeof pre) {
      put_name(out, n, pre, off, 10);
    } else { /* a name too long for the short path: as snprintf */
      snprintf(out, n, "%s+%llu", g, (unsigned long long)off);
    }
  } else if (g) {
    put_name(out, n, g, 0, 0);
  } else {
    put_name(out, n, "0x", addr, 16);
  }
}

/* A heap location's name (docs/reports.md §3): "offset 4 of heap block allocated at f.c:10".
 * The place is the first frame outside system headers of the allocation's call stack (a `new`
 * inside std::allocator names the user's call); the block's address is not part of the name
 * (it changes from run to run), its size and allocating thread are in rsan_heap_details. */
void rsan_heap_name(char *out, size_t n, uintptr_t addr, const rsan_block_info *blk) {
  char where[300] = "";
  rsan_frames fr;
  rsan_frames_build(&fr, 0, blk->stack, 4);
  const rsan_frame *p = blk->site ? rsan_frames_primary(&fr) : NULL;
  if (p) snprintf(where, sizeof where, " allocated at %s:%u", rsan_basename(p->file), p->line);
  snprintf(out, n, "offset %llu of heap block%s", (unsigned long long)(addr - blk->addr), where);
}
/* "size 12, allocated by thread T0; block at 0x.., location at 0x.." */
void rsan_heap_details(char *out, size_t n, uintptr_t addr, const rsan_block_info *blk) {
  char by[40] = "";
  if (blk->tid >= 0) snprintf(by, sizeof by, ", allocated by thread T%d", blk->tid);
  snprintf(out, n, "size %llu%s; block at 0x%llx, location at 0x%llx", (unsigned long long)blk->size, by,
           (unsigned long long)blk->addr, (unsigned long long)addr);
}

/* The "  Location is ..." line of a race or robustness report: kind 1 a global named obj, 2 a
 * heap location named obj in block blk, else the bare address. */
void rsan_text_location(rsan_buf *b, uintptr_t addr, int kind, const char *obj, const rsan_block_info *blk) {
  if (kind == 1) rsan_buf_printf(b, "  Location is global '%s' at 0x%llx\n", obj, (unsigned long long)addr);
  else if (kind == 3) rsan_buf_printf(b, "  Location is %s at 0x%llx\n", obj, (unsigned long long)addr);
  else if (kind == 2) {
    char details[200];
    rsan_heap_details(details, sizeof details, addr, blk);
    rsan_buf_printf(b, "  Location is %s (%s)\n", obj, details);
  } else
    rsan_buf_printf(
        b,
        "  Location is 0x%llx (not a global or heap block: a stack variable, thread-local or mmap memory)\n",
        (unsigned long long)addr);
}

/* rsan_object_name, or a heap location's name: *kind 1 global, 2 heap (blk filled), 3 a thread's stack, 0 the
 * bare address. Takes heap.c's leaf lock: for a report being written, not on its repeats. */
void rsan_location_name(char *out, size_t n, uintptr_t addr, int *kind, rsan_block_info *blk) {
  int known;
  rsan_object_name(out, n, addr, &known);
  *kind = known ? 1 : 0;
  if (!known && rsan_heap_find(addr, blk)) {
    rsan_heap_name(out, n, addr, blk);
    *kind = 2;
  } else if (!known && rsan_icpt_stack_owner) {
    int tid = rsan_icpt_stack_owner(addr);
    if (tid >= 0) {
      snprintf(out, n, "stack of thread T%d", tid);
      *kind = 3;
    }
  }
}

/* "sb.c:13" (or "sb.c:13:9" with_col) of a site, or "<unknown site>" */
void rsan_site_short_col(char *out, size_t n, uint64_t site, int with_col) {
  rsan_frames fr;
  rsan_frames_build(&fr, site, NULL, 0);
  const rsan_frame *p = rsan_frames_primary(&fr);
  if (p && with_col) snprintf(out, n, "%s:%u:%u", rsan_basename(p->file), p->line, p->column);
  else if (p) snprintf(out, n, "%s:%u", rsan_basename(p->file), p->line);
  else snprintf(out, n, "<unknown site 0x%llx>", (unsigned long long)site);
}
void rsan_site_short(char *out, size_t n, uint64_t site) { rsan_site_short_col(out, n, site, 0); }

/* ---- deduplication by (access key, previous key, type): robustness reports pass source
 * keys (report_robustness.c), race reports site ids ---- */
uint64_t rsan_report_epoch = 1;

typedef struct dkey {
  uint64_t a, b, type; /* type 0: empty slot */
} dkey;
static dkey *dtab;
static uint64_t dcap, dn;

int rsan_dedup_insert(uint64_t a, uint64_t b, uint64_t type) {
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
  json_fd = rsan_open_nocancel(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC);
  if (json_fd < 0) {
    json_failed = 1;
    char msg[700];
    int k = snprintf(msg, sizeof msg, "pyrsan: cannot open json_path '%s' for writing\n", path);
    if (k > 0) rsan_write_all(2, msg, (size_t)k);
  }
}

/* Under a controlled scheduler, the step a report was raised at and the strategy that
 * reproduces it (docs/scheduling.md "Trace file"). */
void rsan_json_schedule_fields(rsan_buf *j) {
  if (!rsan_sched_reports_schedule()) return;
  rsan_buf_printf(j, ", \"step\": %llu, \"schedule\": {\"sched\": \"%s\", \"seed\": %llu}",
                  (unsigned long long)rsan_sched_step(), rsan_sched_name(),
                  (unsigned long long)rsan_sched_seed());
}

/* ---- text output: stderr, or <log_path>.<pid> like the sanitizers' log_path ---- */
int rsan_text_fd(void) {
  const char *lp = rsan_flag.log_path;
  if (!lp || !lp[0] || log_failed) return 2;
  int pid = (int)getpid();
  if (log_fd >= 0 && log_pid == pid) return log_fd;
  if (log_fd >= 0) close(log_fd); /* a forked child writes its own file */
  char path[600];
  snprintf(path, sizeof path, "%s.%d", lp, pid);
  log_fd = rsan_open_nocancel(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC);
  log_pid = pid;
  if (log_fd < 0) {
    log_failed = 1;
    char msg[700];
    int k = snprintf(msg, sizeof msg, "pyrsan: cannot open log_path '%s' for writing; reports go to stderr\n",
                     path);
    if (k > 0) rsan_write_all(2, msg, (size_t)k);
    return 2;
  }
  return log_fd;
}


/* One JSON line per suppressed (distinct) report, so that the driver can count them. */
void rsan_json_suppressed(const char *kind, const char *type, const rsan_supp *sp, uint64_t site,
                          uint64_t prev_site) {
  json_open();
  if (json_fd < 0) return;
  rsan_buf j = {0};
  rsan_buf_printf(&j,
                  "{\"kind\": \"suppressed\", \"pid\": %d, \"report_kind\": \"%s\", \"type\": \"%s\", "
                  "\"suppression\": ",
                  (int)getpid(), kind, type);
  char full[600];
  snprintf(full, sizeof full, "%s:%s", sp->kind == RSAN_SUPP_RACE ? "race" : "robustness", sp->pattern);
  rsan_buf_json_str(&j, full);
  rsan_buf_printf(&j, ", \"key\": \"0x%016llx/0x%016llx/%s\"}\n", (unsigned long long)site,
                  (unsigned long long)prev_site, type);
  rsan_write_all(json_fd, j.p, j.n);
  rsan_buf_free(&j);
}

/* The end of every report (rsan_report.h). */
void rsan_publish_and_unlock(rsan_buf *t, rsan_buf *j, int may_halt) {
  if (rsan_flag.print_reports) rsan_write_all(rsan_text_fd(), t->p, t->n);
  json_open();
  if (json_fd >= 0) rsan_write_all(json_fd, j->p, j->n);
  rsan_buf_free(t);
  rsan_buf_free(j);
  int halt = may_halt && rsan_flag.halt_on_error && !rsan_test_mode;
  rsan_spin_unlock(&rsan_report_lock);
  if (halt) {
    rsan_report_at_exit();
    _exit(rsan_flag.exitcode);
  }
}


uint64_t rsan_report_count(void) { return __atomic_load_n(&rsan_nreports, __ATOMIC_RELAXED); }

/* No report made yet: counts, the dedup table and the JSON file (report_lock held). */
static void forget_reports(void) {
  /* every thread's repeat cache (report_robustness.c) names keys of the table forgotten here */
  __atomic_fetch_add(&rsan_report_epoch, 1, __ATOMIC_RELEASE);
  rsan_nreports = 0;
  rsan_nraces = 0;
  rsan_nsuppressed = 0;
  rsan_nbenign = 0;
  rsan_ngrouped = 0;
  rsan_robustness_forget_groups(); /* a forked child's parent prints them */
  rsan_free(dtab);
  dtab = NULL;
  dcap = dn = 0;
  if (json_fd >= 0) close(json_fd);
  json_fd = -1;
  json_failed = 0;
}

void rsan_report_reset(void) {
  rsan_spin_lock(&rsan_report_lock);
  forget_reports();
  at_exit_done = 0;
  rsan_spin_unlock(&rsan_report_lock);
}

/* docs/scheduling.md "Scheduling points": no thread can run while some have not exited. */
void rsan_report_deadlock(const rsan_deadlock_thread *th, int n) {
  int pid = (int)getpid();
  rsan_spin_lock(&rsan_report_lock);
  rsan_buf t = {0}, j = {0};
  rsan_buf_puts(&t, "==================\n");
  rsan_buf_printf(
      &t, "WARNING: pyrsan: deadlock (pid=%d): no thread can run at step %llu (sched=%s, seed=%llu)\n", pid,
      (unsigned long long)rsan_sched_step(), rsan_sched_name(), (unsigned long long)rsan_sched_seed());
  rsan_buf_printf(&j, "{\"kind\": \"deadlock\", \"pid\": %d", pid);
  rsan_json_schedule_fields(&j);
  rsan_buf_puts(&j, ", \"threads\": [");
  for (int i = 0; i < n; i++) {
    uint64_t stack[RSAN_SHADOW_MAX];
    uint32_t ns = rsan_thread_stack(th[i].thread, 0, stack, RSAN_SHADOW_MAX);
    rsan_frames fr;
    fr.n = 0;
    rsan_frames_build(&fr, 0, stack, ns);
    rsan_buf_printf(&t, "  Thread T%d waits for %s:\n", th[i].tid, th[i].waiting_for);
    rsan_text_frames(&t, &fr);
    rsan_buf_printf(&j, "%s{\"thread\": %d, \"waiting_for\": ", i ? ", " : "", th[i].tid);
    rsan_buf_json_str(&j, th[i].waiting_for);
    rsan_json_frame_fields(&j, &fr);
    rsan_buf_puts(&j, "}");
  }
  rsan_buf_puts(&t, "SUMMARY: pyrsan: deadlock\n==================\n");
  rsan_buf_puts(&j, "], \"text\": ");
  rsan_buf_json_str(&j, t.p);
  rsan_buf_puts(&j, "}\n");
  rsan_publish_and_unlock(&t, &j, 0);
}

void rsan_report_flush_text(void) {
  if (rsan_test_mode || !rsan_spin_trylock(&rsan_report_lock)) return;
  rsan_robustness_flush_groups();
  rsan_spin_unlock(&rsan_report_lock);
}

/* Once per process (exit, _exit, quick_exit and halt_on_error all lead here; a forked child
 * has its own). */
void rsan_report_at_exit(void) {
  if (__atomic_exchange_n(&at_exit_done, 1, __ATOMIC_ACQ_REL)) return;
  rsan_sched_at_exit(); /* the trace's end line, before any _exit below */
  if (rsan_test_mode) return;
  rsan_spin_lock(&rsan_report_lock);
  rsan_robustness_flush_groups(); /* the robustness text blocks, each with its group's stale writes */
  rsan_spin_unlock(&rsan_report_lock);
  uint64_t n = rsan_report_count();
  uint64_t ns = __atomic_load_n(&rsan_nsuppressed, __ATOMIC_RELAXED);
  char msg[800];
  if (rsan_flag.verbosity >= 1) {
    int k = snprintf(msg, sizeof msg,
                     "pyrsan: exit: %llu report(s), %llu suppressed, %llu live location(s)\n",
                     (unsigned long long)n, (unsigned long long)ns, (unsigned long long)rsan_loc_count());
    if (k > 0) rsan_write_all(rsan_text_fd(), msg, (size_t)k);
  }
  /* Suppressions used, as TSan prints them: when verbose or when anything was reported. */
  if (ns && (rsan_flag.verbosity >= 1 || (n && rsan_flag.print_reports))) {
    int k = snprintf(msg, sizeof msg, "pyrsan: %llu report(s) suppressed:\n", (unsigned long long)ns);
    if (k > 0) rsan_write_all(rsan_text_fd(), msg, (size_t)k);
    for (uint64_t i = 0; i < rsan_nsupps; i++) {
      if (!rsan_supps[i].hits) continue;
      k = snprintf(msg, sizeof msg, "pyrsan:   %llu %s:%s\n", (unsigned long long)rsan_supps[i].hits,
                   rsan_supps[i].kind == RSAN_SUPP_RACE ? "race" : "robustness", rsan_supps[i].pattern);
      if (k > 0) rsan_write_all(rsan_text_fd(), msg, (size_t)k);
    }
  }
  uint64_t nb = __atomic_load_n(&rsan_nbenign, __ATOMIC_RELAXED);
  if (nb && rsan_flag.print_reports) {
    int k = snprintf(msg, sizeof msg,
                     "pyrsan: %llu robustness report(s) with a benign consequence not shown "
                     "(report_benign=1 shows them)\n",
                     (unsigned long long)nb);
    if (k > 0) rsan_write_all(rsan_text_fd(), msg, (size_t)k);
  }
  if (!n) return;
  if (rsan_flag.print_reports) {
    uint64_t nr = __atomic_load_n(&rsan_nraces, __ATOMIC_RELAXED);
    int k = nr ? snprintf(msg, sizeof msg,
                          "pyrsan: reported %llu robustness violation(s) and %llu data race(s)\n",
                          (unsigned long long)(n - nr), (unsigned long long)nr)
               : snprintf(msg, sizeof msg, "pyrsan: reported %llu robustness violation(s)\n",
                          (unsigned long long)n);
    if (k > 0) rsan_write_all(rsan_text_fd(), msg, (size_t)k);
    uint64_t ng = __atomic_load_n(&rsan_ngrouped, __ATOMIC_RELAXED);
    k = ng ? snprintf(msg, sizeof msg,
                      "pyrsan: %llu of them listed inside a report above: the same access, "
                      "another stale write (each has its JSON line)\n",
                      (unsigned long long)ng)
           : 0;
    if (k > 0) rsan_write_all(rsan_text_fd(), msg, (size_t)k);
  }
  fflush(NULL);
  _exit(rsan_flag.exitcode);
}

/* fork (rsan_fork.h) */
void rsan_report_fork_lock(void) { rsan_spin_lock(&rsan_report_lock); }
void rsan_report_fork_unlock(int child) {
  if (child) {
    /* the child's own reports only: none yet, nothing to deduplicate against, its own files */
    forget_reports();
    for (uint64_t i = 0; i < rsan_nsupps; i++) rsan_supps[i].hits = 0;
  }
  rsan_spin_unlock(&rsan_report_lock);
}
