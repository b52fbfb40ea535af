/* The scheduler's trace file (docs/scheduling.md "Trace file"): one JSON line per decision
 * with the candidates' pending operations, and a last line saying how the run ended. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rsan_report.h"
#include "rsan_sched_internal.h"

const char *const rsan_sched_kind_names[] = {
    "load", "store",  "rmw",          "fence",        "fence_sc", "spawn",        "join", "exit",
    "lock", "unlock", "sync_acquire", "sync_release", "wait",     "exit_process", "await"};
const int rsan_sched_nkinds = (int)(sizeof rsan_sched_kind_names / sizeof rsan_sched_kind_names[0]);

static int trace_fd = -1;
/* The line being written: one write(2) per line (a step used to take 2 + one per candidate;
 * the file is still complete up to the last whole line if the program crashes). Only the
 * thread holding the baton writes steps, the exiting one the end line. */
static char pending[4096];
static size_t npending;

static void trace_flush(void) {
  if (trace_fd >= 0 && npending) rsan_write_all(trace_fd, pending, npending);
  npending = 0;
}

static void trace_line(const char *s, size_t n) {
  if (trace_fd < 0) return;
  if (npending + n > sizeof pending) trace_flush();
  if (n > sizeof pending) {
    rsan_write_all(trace_fd, s, n);
    return;
  }
  memcpy(pending + npending, s, n);
  npending += n;
  if (n && s[n - 1] == '\n') trace_flush();
}

void rsan_sched_trace_open(const char *path_template, const char *sched_name, uint64_t seed) {
  char path[600];
  rsan_expand_pid(path_template, path, sizeof path);
  trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (trace_fd < 0) rsan_sched_bad_input("cannot open trace_path for writing:", path);
  char line[200];
  int k = snprintf(line, sizeof line,
                   "{\"pyrsan_trace\": 1, \"sched\": \"%s\", \"seed\": %llu, \"pid\": %d}\n", sched_name,
                   (unsigned long long)seed, (int)getpid());
  trace_line(line, (size_t)k);
}

void rsan_sched_trace_forget(void) {
  if (trace_fd >= 0) close(trace_fd);
  trace_fd = -1;
  npending = 0;
}

static void trace_op(const sched_thread *s, int first) {
  char line[128];
  int k = snprintf(line, sizeof line, "%s[%d, \"%s\", \"", first ? "" : ", ", s->tid,
                   rsan_sched_kind_names[s->kind]);
  trace_line(line, (size_t)k);
  if (s->kind == RSAN_SK_AWAIT) rsan_await_format(s, trace_line); /* the words it waits on, all */
  else trace_line(line, (size_t)snprintf(line, sizeof line, "0x%llx", (unsigned long long)op_addr(s)));
  trace_line(line, (size_t)snprintf(line, sizeof line, "\", %d]", s->w));
}

/* The step's line. Threads that yield (unrecognised spin loops) while others are enabled are
 * listed apart, under "yielding": they could run, but would only repeat a read. */
void rsan_sched_trace_step(uint64_t i, int tid, const int *cand, int n) {
  if (trace_fd < 0 || i < rsan_sched_trace_from()) return; /* the driver has those lines */
  sched_thread *const *threads = rsan_sched.threads;
  char line[96];
  int k = snprintf(line, sizeof line, "{\"step\": %llu, \"tid\": %d, \"enabled\": [", (unsigned long long)i,
                   tid);
  trace_line(line, (size_t)k);
  for (int j = 0; j < n; j++) trace_op(threads[cand[j]], j == 0);
  trace_line("]", 1);
  int listed = 0, any_enabled = 0;
  for (int j = 0; j < n; j++) any_enabled |= rsan_sched_level_of(threads[cand[j]]) == LEVEL_ENABLED;
  if (any_enabled) {
    for (int t = 0; t < rsan_sched.nthreads_max; t++) {
      if (!threads[t] || rsan_sched_level_of(threads[t]) != LEVEL_YIELDED) continue;
      int in_enabled = 0;
      for (int j = 0; j < n; j++) in_enabled |= cand[j] == t;
      if (in_enabled) continue;
      trace_line(listed ? "" : ", \"yielding\": [", listed ? 0 : 15);
      trace_op(threads[t], !listed);
      listed = 1;
    }
  }
  if (listed) {
    /* the yielding threads whose loop counts (sched_await.c): their repeats are no repeats */
    int counting = 0;
    for (int t = 0; t < rsan_sched.nthreads_max; t++) {
      if (!threads[t] || rsan_sched_level_of(threads[t]) != LEVEL_YIELDED || !rsan_await_counting(threads[t]))
        continue;
      int in_enabled = 0;
      for (int j = 0; j < n; j++) in_enabled |= cand[j] == t;
      if (in_enabled) continue;
      k = snprintf(line, sizeof line, "%s%d", counting ? ", " : "], \"counting\": [", t);
      trace_line(line, (size_t)k);
      counting = 1;
    }
  }
  trace_line(listed ? "]}\n" : "}\n", listed ? 3 : 2);
}

/* The pending operations of the threads the run ended with blocked (a lock held, a join, a wait
 * for a write...): the explorer must reverse their races too, although they never ran (a run
 * that deadlocks has its blocked acquisitions only here). */
static void trace_blocked(void) {
  int listed = 0;
  for (int t = 0; t < rsan_sched.nthreads_max; t++) {
    const sched_thread *s = rsan_sched.threads[t];
    if (!s || s->state != ST_LIVE || rsan_sched_level_of(s) != LEVEL_NONE) continue;
    trace_line(listed ? "" : ", \"blocked\": [", listed ? 0 : 14);
    trace_op(s, !listed);
    listed = 1;
  }
  if (listed) trace_line("]", 1);
}

void rsan_sched_trace_end(const char *how, const char *why) {
  if (trace_fd < 0) return;
  char line[200], div[32] = "null";
  if (rsan_sched.diverged >= 0) snprintf(div, sizeof div, "%lld", (long long)rsan_sched.diverged);
  int k = snprintf(line, sizeof line, "{\"end\": \"%s\", \"steps\": %llu, \"diverged\": %s%s%s%s", how,
                   (unsigned long long)rsan_sched.step, div, why ? ", \"reason\": \"" : "", why ? why : "",
                   why ? "\"" : "");
  trace_line(line, (size_t)k);
  rsan_closure_finish(trace_line); /* sched_closure.c: nothing unless the run took a snapshot */
  trace_blocked();
  trace_line("}\n", 2);
  trace_flush();
  close(trace_fd);
  trace_fd = -1;
}
