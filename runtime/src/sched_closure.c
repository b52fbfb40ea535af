/* The F-order closure of a run (sched_closure=1 under sched=dfs; docs/design/exploration.md §2,
 * docs/scheduling.md "F-order closure").
 *
 * Under sched_closure every SC fence is labelled clean, so the explorer runs one interleaving
 * per *coarse* class (two SC fences never dependent). The interleavings of a coarse class make
 * the same steps with the same values (an SC fence reads and writes no program memory) and
 * differ only in the order of their SC fences in F, which the monitor can see. The closure
 * searches every such order with the engine's own rules:
 *
 * - Snapshot. When the run first chooses an SC fence step, it forks a snapshot process (before
 *   the fence runs), a child the program can neither wait for nor get SIGCHLD from
 *   (start_snapshot); the run waits for the search at most closure_timeout_ms. A fork copies only the calling thread, so the snapshot cannot run the
 *   program's threads; it does not need to: by Claim 1 every step of the class is known once
 *   the run has made it. From then on the run logs each step (thread, kind, address) and the
 *   engine events the thread made in it (the explain hooks: access with order, size and values,
 *   fence, sync primitive, join).
 * - At the run's end the log goes to the snapshot through a pipe. The snapshot (one thread)
 *   replays steps through the engine's own entry points, acting as each thread in turn
 *   (rsan_thread_set_current), along the linearisations of the run's coarse order: a step is
 *   ready once the earlier steps of other threads it is coarse-dependent with ran. A ready step
 *   that is not an SC fence commutes with every other ready step, monitor state included, so it
 *   is taken alone; where only SC fences are ready, the process forks one child per fence.
 *   One search per location that a step checks (focus); a state whose key (the values at that
 *   location of every clock a later step reads, its stamps, each thread's position) was seen
 *   is pruned through a hash set in shared memory, with sleep sets between fences that
 *   commute, and a path ends when no check that can still report is left (check_later).
 * - A replayed step that makes a (non-benign) robustness report records the interleaving it
 *   followed; the trace's end line lists them and the driver runs each as an ordinary schedule,
 *   so the report users see is the engine's own, made by a real run (soundness first).
 * - Whatever the replay cannot reproduce (a failed BCAS or blocking-wait attempt, a CAS loop,
 *   a read that returns another value than in the run, a location made again, a log or state
 *   budget exceeded) makes the closure incomplete: the trace says so and the exploration
 *   cannot be a proof (runner.py: bound "closure", then today's relation). A thread created
 *   after the snapshot is made by the replay of its spawn. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rsan_engine.h"
#include "rsan_exit.h"
#include "rsan_explain.h"
#include "rsan_interface.h"
#include "rsan_report.h"
#include "rsan_sched_closure.h"
#include "rsan_sched_closure_internal.h"
#include "rsan_sched_fence.h"
#include "rsan_sched_internal.h"
#include "rsan_sync.h"

/* the parent's log */
int rsan_closure_logging;
static int snapshot_taken, unsupported;
static int pipe_w = -1, done_r = -1;
static uint64_t snapshot_step;
static step *log_steps;
static int nlog;

shared *rsan_closure_sh;

int rsan_closure_wanted(void) { return rsan_sched_flag.sched_closure == 1 && !rsan_flag.explain_path[0]; }

/* ---- the run's side ---- */

static void note_event(int ev) {
  if (!nlog) return;
  step *s = &log_steps[nlog - 1];
  if (s->nev++) unsupported = 1; /* two engine events in one step: not replayed */
  s->ev = ev;
}

#define MAX_WAITERS 256
static uint64_t wait_v[MAX_WAITERS];
static int wait_block[MAX_WAITERS];

/* The replay reproduces the step: its kind and its engine events agree (a step of an access
 * kind without its event is an attempt that made a check and no event, e.g. a failed BCAS). */
static int replayable(const step *s) {
  if (s->nev > 1) return 0;
  switch (s->kind) {
  case RSAN_SK_LOAD:
  case RSAN_SK_STORE:
  case RSAN_SK_RMW: return s->ev == EV_ACCESS && s->op <= RSAN_OP_CAS_STRONG;
  case RSAN_SK_WAIT: /* a failed spin attempt makes no check; a failed blocking wait does */
    return s->ev == EV_ACCESS ? s->op == RSAN_OP_WAIT && s->wait_block >= 1 && s->wait_block <= 3
                              : s->ev == EV_NONE && s->wait_block != 1;
  case RSAN_SK_FENCE_SC: return s->ev == EV_NONE || s->ev == EV_FENCE;
  case RSAN_SK_FENCE: return s->ev == EV_FENCE;
  case RSAN_SK_JOIN: return s->ev == EV_NONE || s->ev == EV_JOIN;
  case RSAN_SK_SPAWN: return s->ev == EV_SPAWN;
  case RSAN_SK_EXIT:
  case RSAN_SK_EXIT_PROCESS: return s->ev == EV_NONE;
  default: /* lock, unlock, sync primitives */
    return s->ev == EV_NONE || s->ev == EV_SYNC_ACQ || s->ev == EV_SYNC_ACQ_LOAD || s->ev == EV_SYNC_REL;
  }
}

/* The snapshot must be invisible to the program, which may reap "any child" (wait(NULL),
 * waitpid(-1, ...)), block until it has none, count SIGCHLD in a handler, or signal its own
 * process group. So the runtime makes it with clone and no exit signal: a child that sends no
 * SIGCHLD at its end and that wait, waitpid and waitid do not see unless asked with __WCLONE or
 * __WALL (only the runtime asks). Every signal is blocked around clone, so no program handler
 * runs in it, and stays blocked there; it sets SIGCHLD to its default (its searches' ends) and
 * moves to a process group of its own (the run sets the same group too: it exists before any
 * kill). Each side sees the other's end through a pipe whose write end only one side holds:
 * the run the done pipe's (the snapshot's group holds it), the search the alive pipe's (the run
 * holds it, and closes it after the search; processes the program forks drop it): a search whose
 * run is gone (killed by --timeout, or by a signal) ends at its next look (every 1,024
 * branching states, sched_closure_search.c). The run waits for the done pipe at most
 * closure_timeout_ms (rsan_closure_finish), then kills the group: never a hang, and the closure
 * is incomplete (never a proof).
 *
 * No process stands between the run and the snapshot (a keeper, until session 18, which made
 * the snapshot with _Fork: a third copy of the run's page tables and its own page faults, 7% of
 * an exploration's CPU). What _Fork would set up in the child, the snapshot does not use: its
 * cached thread id (a signal to itself), its robust mutex list, POSIX timers and message queue
 * notifications; the runtime's locks are its own. Its searches, when they fork, use _Fork. */
static pid_t snap_pid = -1; /* the snapshot; its group is the search's */
static int alive_w = -1;

static int start_snapshot(void) {
  int logp[2], done[2], alive[2];
  if (pipe2(logp, O_CLOEXEC) != 0) return -1;
  if (pipe2(done, O_CLOEXEC) != 0) {
    close(logp[0]);
    close(logp[1]);
    return -1;
  }
  if (pipe2(alive, O_CLOEXEC) != 0) {
    close(logp[0]);
    close(logp[1]);
    close(done[0]);
    close(done[1]);
    return -1;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  /* flags 0: a copy of the process (as fork) whose exit signal is none */
  long pid = syscall(SYS_clone, 0L, NULL, NULL, NULL, NULL);
  if (pid == 0) {
    close(logp[1]);
    close(done[0]);
    close(alive[1]);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &dfl, NULL);
    setpgid(0, 0);
    rsan_closure_snapshot_main(logp[0], done[1], alive[0]);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(logp[0]);
  close(done[1]);
  close(alive[0]);
  if (pid < 0) {
    close(logp[1]);
    close(done[0]);
    close(alive[1]);
    return -1;
  }
  setpgid((pid_t)pid, (pid_t)pid); /* as the snapshot does: the group exists before any kill */
  snap_pid = (pid_t)pid;
  pipe_w = logp[1];
  done_r = done[0];
  alive_w = alive[1];
  return 0;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The end of the done pipe (the snapshot's group ended) within closure_timeout_ms; 1: in time */
static int wait_done(void) {
  uint64_t limit = rsan_sched_flag.closure_timeout_ms, start = now_ms();
  for (;;) {
    uint64_t spent = now_ms() - start;
    if (limit && spent >= limit) return 0;
    struct pollfd p = {done_r, POLLIN, 0};
    int left = !limit ? -1 : limit - spent > 60000 ? 60000 : (int)(limit - spent);
    int r = poll(&p, 1, left);
    if (r > 0) {
      char c;
      ssize_t k = read(done_r, &c, 1);
      if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) return 1;
    } else if (r < 0 && errno != EINTR) {
      return 0;
    }
  }
}

/* A process forked by the program: not the run, and no part of its closure */
void rsan_closure_fork_child(void) {
  rsan_closure_logging = 0;
  unsupported = 1;
  snap_pid = -1;
  if (pipe_w >= 0) close(pipe_w);
  if (done_r >= 0) close(done_r);
  if (alive_w >= 0) close(alive_w);
  pipe_w = done_r = alive_w = -1;
}

/* The step at which the run chose a sleeping thread (-1: none). From there the run repeats a
 * class already run (the sleep set's meaning, docs/scheduling.md "Sleep set"): the explorer cuts
 * it, and its coarse class, so its closure, is that of a run that is not cut. So no closure is
 * searched for it; the end line names the step, and the explorer checks that it cut the run
 * there or before (explore.py), which holds when its sleep set and the runtime's agree. */
static int64_t blocked_at = -1;

/* decide(): the step chosen (under the scheduler lock) */
void rsan_closure_step(const sched_thread *c) {
  if (blocked_at >= 0) return;
  uint64_t at = rsan_sched.step - 1; /* decide() counted the step already */
  if (rsan_sched_sleep_applies(at) && rsan_sched_asleep(c->tid)) {
    blocked_at = (int64_t)at;
    rsan_closure_logging = 0;
    return;
  }
  if (!snapshot_taken) {
    if (c->kind != RSAN_SK_FENCE_SC) return;
    /* the first SC fence: the snapshot, before it runs */
    snapshot_taken = 1;
    rsan_closure_sh = mmap(NULL, sizeof *rsan_closure_sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                           -1, 0);
    if (rsan_closure_sh == MAP_FAILED) {
      rsan_closure_sh = NULL;
      unsupported = 1;
      return;
    }
    snapshot_step = rsan_sched.step - 1; /* decide() counted the step already */
    if (start_snapshot() != 0) {
      unsupported = 1;
      return;
    }
    log_steps = rsan_alloc(MAX_LOG * sizeof *log_steps);
    rsan_closure_logging = 1;
    rsan_explain_on = 1; /* the hooks below (explain.c writes nothing without its file) */
  }
  if (unsupported) return;
  if (nlog && !replayable(&log_steps[nlog - 1])) unsupported = 1;
  if (nlog == MAX_LOG || c->tid >= MAX_WAITERS) {
    unsupported = 1;
    return;
  }
  step *s = &log_steps[nlog++];
  memset(s, 0, sizeof *s);
  s->t = c->t;
  s->other = -1;
  s->tid = c->tid;
  s->kind = c->kind;
  s->addr = op_addr(c);
  s->w = c->w;
  if (c->kind == RSAN_SK_WAIT) {
    s->wait_block = wait_block[c->tid];
    s->wait_v = wait_v[c->tid];
  }
}

/* atomic.c op_wait, at its entry: the wait's value and mode, for its steps */
void rsan_closure_note_wait(const rsan_thread *t, uint64_t v, int block) {
  if (t && t->tid >= 0 && t->tid < MAX_WAITERS) {
    wait_v[t->tid] = v;
    wait_block[t->tid] = block;
  }
}

void rsan_closure_note_access(const rsan_thread *t, const rsan_loc *l, int op, int rmw_op, int order,
                              int size, int has_read, uint64_t read, int has_write, uint64_t written,
                              uint64_t site) {
  (void)t;
  if (unsupported || !nlog) return;
  if ((op > RSAN_OP_CAS_STRONG && op != RSAN_OP_WAIT) || size > 8) unsupported = 1;
  note_event(EV_ACCESS);
  step *s = &log_steps[nlog - 1];
  s->op = op;
  s->rmw_op = rmw_op;
  s->order = order;
  s->size = size;
  s->has_read = has_read;
  s->has_write = has_write;
  s->read = read;
  s->written = written;
  s->site = site;
  s->at = l->addr;
  s->loc_id = l->id;
}

void rsan_closure_note_fence(const rsan_thread *t, int order, uint64_t site) {
  (void)t;
  if (unsupported || !nlog) return;
  note_event(EV_FENCE);
  log_steps[nlog - 1].order = order;
  log_steps[nlog - 1].site = site;
}

void rsan_closure_note_sync(const rsan_thread *t, const char *kind, uintptr_t addr) {
  (void)t;
  if (unsupported || !nlog) return;
  note_event(!strcmp(kind, "acquire")        ? EV_SYNC_ACQ
             : !strcmp(kind, "acquire_load") ? EV_SYNC_ACQ_LOAD
                                             : EV_SYNC_REL);
  log_steps[nlog - 1].at = addr;
}

void rsan_closure_note_thread(const rsan_thread *t, const char *kind, const rsan_thread *other) {
  (void)t;
  if (unsupported || !nlog) return;
  int spawn = !strcmp(kind, "spawn");
  if (!spawn && strcmp(kind, "join") != 0) {
    unsupported = 1;
    return;
  }
  note_event(spawn ? EV_SPAWN : EV_JOIN);
  log_steps[nlog - 1].other = other ? other->tid : -1;
}

/* The run ends (trace end line): search the closure and append its field to the line. */
void rsan_closure_finish(void (*emit)(const char *, size_t)) {
  char buf[200];
  if (blocked_at >= 0 && !snapshot_taken) {
    int k = snprintf(buf, sizeof buf,
                     ", \"closure\": {\"from\": %lld, \"states\": 0, \"forks\": 0, \"pruned\": 0, "
                     "\"incomplete\": null, \"sleep_blocked\": %lld, \"reports\": []}",
                     (long long)blocked_at, (long long)blocked_at);
    emit(buf, (size_t)k);
    return;
  }
  if (!snapshot_taken) return; /* no SC fence ran: the class is one interleaving */
  rsan_closure_logging = 0;
  if (blocked_at < 0 && nlog && !replayable(&log_steps[nlog - 1])) unsupported = 1;
  int incomplete_why = unsupported && blocked_at < 0 ? 3 : 0;
  if (snap_pid > 0) {
    /* the count first, 0 when the log is not replayed (or not needed: sleep-blocked): the
     * snapshot ends without waiting for the pipe's end, which a process the program forked may
     * hold open */
    int n = unsupported || blocked_at >= 0 ? 0 : nlog;
    if (write(pipe_w, &n, sizeof n) != (ssize_t)sizeof n) incomplete_why = 3;
    const char *p = (const char *)log_steps;
    size_t left = n ? (size_t)n * sizeof *log_steps : 0;
    while (left && !incomplete_why) {
      ssize_t k = write(pipe_w, p, left);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) incomplete_why = 3;
      else p += k, left -= (size_t)k;
    }
    close(pipe_w);
    pipe_w = -1;
    if (!wait_done()) {
      kill(-snap_pid, SIGKILL); /* the snapshot and its searches */
      kill(snap_pid, SIGKILL);
      if (!incomplete_why) incomplete_why = 4;
    }
    int st = 0;
    if (rsan_closure_wait_child(snap_pid, &st, __WALL) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
      if (!incomplete_why) incomplete_why = 3; /* the search crashed */
    close(done_r);
    close(alive_w);
    done_r = alive_w = -1;
    snap_pid = -1;
  }
  if (!incomplete_why && rsan_closure_sh && blocked_at < 0) incomplete_why = rsan_closure_sh->incomplete;
  static const char *const why[] = {"null", "\"states\"", "\"diverged\"", "\"unsupported\"", "\"timeout\""};
  int k = snprintf(
      buf, sizeof buf,
      ", \"closure\": {\"from\": %llu, \"states\": %llu, \"forks\": %llu, \"pruned\": %llu, "
      "\"lean\": [%llu, %llu], \"incomplete\": %s, ",
      (unsigned long long)snapshot_step, (unsigned long long)(rsan_closure_sh ? rsan_closure_sh->states : 0),
      (unsigned long long)(rsan_closure_sh ? rsan_closure_sh->forks : 0),
      (unsigned long long)(rsan_closure_sh ? rsan_closure_sh->pruned : 0),
      (unsigned long long)(rsan_closure_sh ? rsan_closure_sh->lean : 0),
      (unsigned long long)(rsan_closure_sh ? rsan_closure_sh->lean_back : 0), why[incomplete_why]);
  emit(buf, (size_t)k);
  if (blocked_at >= 0) {
    k = snprintf(buf, sizeof buf, "\"sleep_blocked\": %lld, ", (long long)blocked_at);
    emit(buf, (size_t)k);
  }
  emit("\"reports\": [", 12);
  for (int i = 0; rsan_closure_sh && !incomplete_why && blocked_at < 0 && i < rsan_closure_sh->nfound; i++) {
    emit(i ? ", [" : "[", i ? 3 : 1);
    for (int j = 0; j < rsan_closure_sh->found_len[i]; j++) {
      k = snprintf(buf, sizeof buf, j ? ", %u" : "%u", (unsigned)rsan_closure_sh->found[i][j]);
      emit(buf, (size_t)k);
    }
    emit("]", 1);
  }
  emit("]}", 2);
}

/* waitpid for a search's or snapshot's child, retried when a signal interrupts it */
int rsan_closure_wait_child(pid_t pid, int *st, int flags) {
  int r;
  while ((r = waitpid(pid, st, flags)) < 0 && errno == EINTR) {
  }
  return r;
}
