/* The schedule file (docs/scheduling.md "Schedule file"): the prefix of thread ids a run
 * follows, and the sleep set at the state after it ("Sleep set"): after the prefix no sleeping
 * thread runs while an awake one is a candidate; an entry is dropped when a dependent operation
 * is chosen. Dependency is the relation of "Trace file", Dependency (explore.dependent). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_report.h"
#include "rsan_sched_internal.h"

static int *prefix;
static uint64_t prefix_len;

typedef struct sleep_entry {
  int tid, kind, w, live;
  uintptr_t addr;
} sleep_entry;
#define MAX_SLEEP 64
static sleep_entry sleepers[MAX_SLEEP];
static int nsleepers;

static uint64_t trace_from;

int rsan_sched_prefix_at(uint64_t step) { return step < prefix_len ? prefix[step] : -1; }
uint64_t rsan_sched_trace_from(void) { return trace_from; }
int rsan_sched_sleep_applies(uint64_t step) { return nsleepers && step >= prefix_len; }

static int is_thread_kind(int k) { return k == RSAN_SK_SPAWN || k == RSAN_SK_JOIN || k == RSAN_SK_EXIT; }

/* Clean SC fences (docs/scheduling.md "SC fences: when two commute", sched_fence.c): the label
 * is taken when the thread arrives at the fence's scheduling point (rsan_sched_set_pending),
 * from its own clocks, which nothing changes while the fence is pending. */
int rsan_sched_fence_clean(const sched_thread *s) { return s->kind == RSAN_SK_FENCE_SC && s->clean; }

/* docs/scheduling.md "Trace file", Dependency; the same relation as explore.dependent. A
 * clean SC fence has address RSAN_CLEAN_FENCE_ADDR (op_addr). */
int rsan_sched_ops_dependent(int ta, int ka, uintptr_t aa, int wa, int tb, int kb, uintptr_t ab, int wb) {
  if (ta == tb) return 0;
  if (ka == RSAN_SK_EXIT_PROCESS || kb == RSAN_SK_EXIT_PROCESS) return 1;
  if (ka == RSAN_SK_FENCE || kb == RSAN_SK_FENCE) return 0;
  if (ka == RSAN_SK_FENCE_SC || kb == RSAN_SK_FENCE_SC)
    return ka == kb && !(aa == RSAN_CLEAN_FENCE_ADDR && ab == RSAN_CLEAN_FENCE_ADDR);
  if (is_thread_kind(ka) || is_thread_kind(kb))
    return ((ka == RSAN_SK_JOIN || ka == RSAN_SK_SPAWN) && aa == (uintptr_t)tb) ||
           ((kb == RSAN_SK_JOIN || kb == RSAN_SK_SPAWN) && ab == (uintptr_t)ta);
  return aa == ab && aa != 0 && (wa || wb);
}

static int asleep(int tid) {
  for (int i = 0; i < nsleepers; i++)
    if (sleepers[i].live && sleepers[i].tid == tid) return 1;
  return 0;
}

/* whether thread tid is in the sleep set (a thread chosen while asleep: the run repeats a class
 * already run from here, and the explorer cuts it) */
int rsan_sched_asleep(int tid) { return asleep(tid); }

/* c was chosen: the sleepers whose operation depends on c's wake up */
void rsan_sched_wake_sleepers(const sched_thread *c) {
  for (int i = 0; i < nsleepers; i++) {
    sleep_entry *e = &sleepers[i];
    if (e->live &&
        (c->kind == RSAN_SK_AWAIT /* dependent with a write of a word it read */
             ? e->tid != c->tid && rsan_await_woken_by(c, e->kind, e->addr, e->w)
             : rsan_sched_ops_dependent(e->tid, e->kind, e->addr, e->w, c->tid, c->kind, op_addr(c), c->w)))
      e->live = 0;
  }
}

/* After the prefix: drops the sleeping candidates unless all are asleep (then the run repeats
 * a class already run; the explorer cuts it). Returns the new count. */
int rsan_sched_drop_sleepers(int *cand, int n) {
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!asleep(cand[i])) cand[k++] = cand[i];
  return k ? k : n;
}


void rsan_sched_bad_input(const char *msg, const char *path) {
  char line[700];
  snprintf(line, sizeof line, "pyrsan: %s '%.500s'\n", msg, path);
  rsan_one_line(line);
  rsan_write_all(2, line, strlen(line));
  rsan_exit_raw(RSAN_EXIT_BAD_OPTIONS);
}

/* "# sleep: T kind 0xADDR w" (docs/scheduling.md "Sleep set"); other comments are ignored */
static void parse_sleep_line(const char *p) {
  static const char tag[] = "# sleep: ";
  if (strncmp(p, tag, sizeof tag - 1) != 0 || nsleepers == MAX_SLEEP) return;
  p += sizeof tag - 1;
  char kind[24];
  unsigned long long addr;
  int tid, w, len = 0;
  if (sscanf(p, "%d %23s %llx %d%n", &tid, kind, &addr, &w, &len) != 4 || len <= 0) return;
  for (int k = 0; k < rsan_sched_nkinds; k++)
    if (!strcmp(kind, rsan_sched_kind_names[k])) {
      sleepers[nsleepers++] = (sleep_entry){tid, k, w, 1, (uintptr_t)addr};
      return;
    }
}

/* "# trace_from: N" (docs/scheduling.md "Schedule file"): the driver knows the run's first N
 * steps (an earlier run made them), so the trace leaves their lines out */
static void parse_trace_from_line(const char *p) {
  static const char tag[] = "# trace_from: ";
  unsigned long long n;
  if (strncmp(p, tag, sizeof tag - 1) == 0 && sscanf(p + sizeof tag - 1, "%llu", &n) == 1) trace_from = n;
}

void rsan_sched_forget_schedule(void) {
  if (prefix) rsan_free(prefix);
  prefix = NULL;
  prefix_len = 0;
  nsleepers = 0;
  trace_from = 0;
}

/* docs/scheduling.md "Schedule file": text, NUL-terminated (name: for errors) */
static void parse_schedule(char *text, const char *name) {
  static const char header[] = "pyrsan-schedule 1";
  if (strncmp(text, header, sizeof header - 1) != 0 ||
      (text[sizeof header - 1] != '\n' && text[sizeof header - 1] != '\r' && text[sizeof header - 1] != 0))
    rsan_sched_bad_input("not a schedule file (the first line must be 'pyrsan-schedule 1'):", name);
  size_t cap_p = 256;
  prefix = rsan_alloc(cap_p * sizeof *prefix);
  for (char *p = text + sizeof header - 1; *p;) {
    if (*p == '#') { /* a comment line, a sleep-set entry or the trace's first step */
      parse_sleep_line(p);
      parse_trace_from_line(p);
      while (*p && *p != '\n') p++;
      continue;
    }
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      p++;
      continue;
    }
    long v = 0;
    if (*p < '0' || *p > '9') rsan_sched_bad_input("a schedule entry is not a thread id in", name);
    while (*p >= '0' && *p <= '9') {
      v = v * 10 + (*p++ - '0');
      if (v >= MAX_THREADS) rsan_sched_bad_input("a schedule entry is not a thread id in", name);
    }
    if (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
      rsan_sched_bad_input("a schedule entry is not a thread id in", name);
    if (prefix_len == cap_p) prefix = rsan_realloc(prefix, (cap_p *= 2) * sizeof *prefix);
    prefix[prefix_len++] = (int)v;
  }
}

void rsan_sched_load_schedule(const char *path) {
  rsan_sched_forget_schedule();
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) rsan_sched_bad_input("cannot read the schedule file", path);
  size_t n = 0, cap = 4096;
  char *text = rsan_alloc(cap);
  ssize_t k;
  while ((k = read(fd, text + n, cap - n - 1)) > 0) {
    n += (size_t)k;
    if (n + 1 >= cap) text = rsan_realloc(text, cap *= 2);
  }
  close(fd);
  text[n] = 0;
  parse_schedule(text, path);
  rsan_free(text);
}

/* The same from the fork server's request (docs/scheduling.md "Fork server"): the text is
 * copied into a buffer grown as the file's is, so that the runtime's heap is left as a run of
 * the same schedule from a file leaves it. */
void rsan_sched_load_schedule_text(const char *buf, size_t len) {
  rsan_sched_forget_schedule();
  size_t cap = 4096;
  while (len + 1 >= cap) cap *= 2;
  char *text = rsan_alloc(cap);
  memcpy(text, buf, len);
  text[len] = 0;
  parse_schedule(text, "the fork server's schedule");
  rsan_free(text);
}
