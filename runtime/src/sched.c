/* The controlled scheduler: baton, enabledness, trace, schedule prefix, deadlock and bound
 * (docs/scheduling.md; the entry points are described in rsan_sched.h).
 *
 * Baton. Each managed thread has a futex word `turn`. The thread running a step is the only
 * managed thread outside a wait; at its next scheduling point it records its pending
 * operation, takes the decision for the next step (strategy, trace line), sets the chosen
 * thread's `turn` and, unless it chose itself, sleeps on its own `turn`. Futexes are raw
 * syscalls: the interposed pthread functions never see the scheduler's own waits.
 *
 * Enabledness is re-evaluated at every decision from the pending operation and the models
 * kept here (lock owners and readers, cond waiters, barrier rounds, once states, exited
 * threads, semaphore values read with sem_getvalue). A thread whose real try-variant failed,
 * or whose wait / BCAS / recognised spin-load attempt read another value, is disabled until
 * another thread writes the same 8-byte word (rsan_sched_retry_after_write, wake_waiters); an
 * unrecognised spin loop only *yields* (it runs when nothing else can), so that a loop that
 * merely re-reads a constant never becomes a false deadlock.
 *
 * Hand-over (docs/scheduling.md): under sched=auto after handover_steps points, and in any
 * controlled mode when no point was reached for stall_ms (the running thread blocks in a call
 * the scheduler does not see, or computes for long), every thread is released and the run goes
 * on under the OS scheduler: rsan_sched_on drops to 0, so every entry point passes through and
 * the interceptors use the real primitives again. A thread released from a modelled wait
 * (lock, semaphore, join, cond, barrier, once) re-does it with the real primitive (a cond wait
 * returns as a spurious wake-up).
 *
 * The state is touched by the baton holder and, for a new thread's arrival, by the new
 * thread while its parent waits; a spin lock still guards it, so that threads the scheduler
 * does not manage cannot corrupt it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_internal.h"
#include "rsan_report.h"
#include "rsan_sched.h"

#define MAX_THREADS 4096
#define SPIN_REPEATS 3 /* same location, same value, this many reads in a row: a spin loop */
#define SPIN_SLOTS 4

int rsan_sched_on;

enum { ST_NEW = 0, ST_LIVE, ST_EXITED };
enum { LEVEL_ENABLED = 0, LEVEL_YIELDED, LEVEL_TIMEOUT, LEVEL_NONE };

typedef struct spin_slot {
  uintptr_t addr;
  uint64_t value;
  int repeats;
} spin_slot;

typedef struct sched_thread {
  rsan_thread *t;
  int tid;
  int state;
  uint32_t turn;    /* futex: 1 = run */
  uint32_t arrived; /* futex: a new thread reached its first scheduling point */
  /* the pending operation */
  int kind;
  uintptr_t addr;
  int w;
  int block;        /* enum rsan_sched_block, or one of the internal ones below */
  int timed;
  int timed_out;    /* the last blocking point was chosen as a time-out */
  rsan_thread *joinee;
  /* disabled until another thread's write to retry_addr runs */
  int retry;
  uintptr_t retry_addr;
  /* cond wait */
  uintptr_t cond;
  uint64_t cond_seq;
  int signalled;
  /* barrier wait */
  uint64_t barrier_round;
  /* unrecognised spin loops */
  spin_slot spin[SPIN_SLOTS];
  int yielding;
  uintptr_t yield_addr;
} sched_thread;

enum { SB_JOIN = 100, SB_COND, SB_BARRIER };

typedef struct lock_model {
  uintptr_t addr;
  int owner; /* writer / mutex owner tid, -1 none */
  int count; /* recursion depth of the owner */
  int readers;
} lock_model;

typedef struct barrier_model {
  uintptr_t addr;
  unsigned count, arrived;
  uint64_t round;
} barrier_model;

typedef struct once_model {
  uintptr_t addr;
  int state; /* 0 not started, 1 running, 2 done */
  int owner;
} once_model;

static rsan_spin lock;
static sched_thread *threads[MAX_THREADS];
static int nthreads_max; /* 1 + the highest managed tid */
static int holder = -1;  /* tid of the thread running the current step */
static int last = -1;    /* tid chosen at the previous step */
static uint64_t step;    /* decisions taken so far */
static int finished;     /* the run ended (exit, deadlock, bound): everything passes through */
static int mode;
static uint64_t seed;
static uint64_t max_steps;
static uint64_t handover_steps; /* sched=auto: hand over after this many steps; 0 never */
int rsan_sched_hidden_wakers;
static uint64_t stall_ns;       /* hand over after this long without a step; 0 never */
static int handed_over;
/* How long a pending process exit may wait for the other threads: a thread that never ends
 * (a worker loop) must not keep the process from exiting for ever. */
#define EXIT_PATIENCE 10000
static uint64_t exit_pending_since;
static int exit_pending_tid = -1;
static int trace_fd = -1;
static int *prefix;
static uint64_t prefix_len;
static int64_t diverged = -1;
/* The sleep set at the state after the prefix (schedule file lines "# sleep: T kind addr w",
 * docs/scheduling.md "Sleep set"): after the prefix no sleeping thread runs while an awake one
 * is a candidate; an entry is dropped when a dependent operation is chosen. */
typedef struct sleep_entry {
  int tid, kind, w, live;
  uintptr_t addr;
} sleep_entry;
#define MAX_SLEEP 64
static sleep_entry sleepers[MAX_SLEEP];
static int nsleepers;
static uint64_t cond_seq;

static lock_model *locks;
static size_t nlocks, caplocks;
static barrier_model *barriers;
static size_t nbarriers, capbarriers;
static once_model *onces;
static size_t nonces, caponces;

/* ---- futex ---- */
static void futex_wait(uint32_t *w, uint32_t val, const struct timespec *timeout) {
  syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, timeout, NULL, 0);
}
static void futex_wake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void handover(const char *why);

/* Waits for the flag; with stall_ms, a wait during which no step was decided for that long
 * hands the run over to the OS scheduler (which raises every flag). */
static void wait_flag(uint32_t *w) {
  rsan_rt_enter(); /* a signal handler must not enter the scheduler while its thread waits */
  if (!stall_ns) {
    while (!__atomic_load_n(w, __ATOMIC_ACQUIRE)) futex_wait(w, 0, NULL);
  } else {
    uint64_t seen = __atomic_load_n(&step, __ATOMIC_RELAXED), since = now_ns();
    struct timespec slice = {0, 20 * 1000000L};
    if ((uint64_t)slice.tv_nsec > stall_ns) slice.tv_nsec = (long)stall_ns;
    while (!__atomic_load_n(w, __ATOMIC_ACQUIRE)) {
      futex_wait(w, 0, &slice);
      if (__atomic_load_n(w, __ATOMIC_ACQUIRE)) break;
      uint64_t s = __atomic_load_n(&step, __ATOMIC_RELAXED), now = now_ns();
      if (s != seen) {
        seen = s;
        since = now;
      } else if (now - since >= stall_ns) {
        rsan_spin_lock(&lock);
        if (!finished && __atomic_load_n(&step, __ATOMIC_RELAXED) == seen) handover("stall");
        rsan_spin_unlock(&lock);
      }
    }
  }
  rsan_rt_leave();
  __atomic_store_n(w, 0, __ATOMIC_RELAXED);
}
static void raise_flag(uint32_t *w) {
  __atomic_store_n(w, 1, __ATOMIC_RELEASE);
  futex_wake(w);
}

/* ---- output ---- */

static void trace_line(const char *s, size_t n) {
  if (trace_fd >= 0) rsan_write_all(trace_fd, s, n);
}

static const char *const kind_names[] = {"load", "store", "rmw", "fence", "fence_sc", "spawn", "join",
                                         "exit", "lock", "unlock", "sync_acquire", "sync_release", "wait",
                                         "exit_process"};

const char *rsan_sched_name(void) {
  static const char *const names[] = {"os", "random", "pct", "dfs", "auto"};
  return names[mode];
}
uint64_t rsan_sched_seed(void) { return seed; }
uint64_t rsan_sched_step(void) { return step ? step - 1 : 0; }

/* ---- models (small arrays: a program has few sync objects) ---- */
#define MODEL_FIND(type, arr, n, cap, addr_, init)                                     \
  for (size_t i_ = 0; i_ < n; i_++)                                                    \
    if (arr[i_].addr == (addr_)) return &arr[i_];                                      \
  if (!create) return NULL;                                                            \
  if (n == cap) {                                                                      \
    cap = cap ? 2 * cap : 16;                                                          \
    arr = rsan_realloc(arr, cap * sizeof(type));                                       \
  }                                                                                    \
  type *m_ = &arr[n++];                                                                \
  memset(m_, 0, sizeof *m_);                                                           \
  m_->addr = (addr_);                                                                  \
  init;                                                                                \
  return m_;

static lock_model *lock_find(uintptr_t addr, int create) {
  MODEL_FIND(lock_model, locks, nlocks, caplocks, addr, m_->owner = -1)
}
static barrier_model *barrier_find(uintptr_t addr, int create) {
  MODEL_FIND(barrier_model, barriers, nbarriers, capbarriers, addr, (void)0)
}
static once_model *once_find(uintptr_t addr, int create) {
  MODEL_FIND(once_model, onces, nonces, caponces, addr, m_->owner = -1)
}

/* ---- threads ---- */
static sched_thread *slot_of(rsan_thread *t) { return t ? (sched_thread *)t->sched : NULL; }

static sched_thread *register_thread(rsan_thread *t, int state) {
  int tid = rsan_thread_tid(t);
  if (tid < 0 || tid >= MAX_THREADS) return NULL; /* past the limit: not managed */
  sched_thread *s = rsan_alloc(sizeof *s);
  s->t = t;
  s->tid = tid;
  s->state = state;
  threads[tid] = s;
  if (tid + 1 > nthreads_max) nthreads_max = tid + 1;
  t->sched = s;
  rsan_strategy_thread_added(tid);
  return s;
}

/* The calling thread's slot; the first thread at a scheduling point becomes the holder.
 * NULL: not managed (pass through). Under lock. */
static sched_thread *self_locked(void) {
  rsan_thread *t = rsan_thread_current();
  sched_thread *s = slot_of(t);
  if (s) return s->state == ST_EXITED ? NULL : s;
  if (holder >= 0 || nthreads_max > 0) return NULL; /* someone else already runs the show */
  s = register_thread(t, ST_LIVE);
  if (s) holder = s->tid;
  return s;
}

/* enabledness of s's pending operation, ignoring yields and time-outs */
static int op_enabled(const sched_thread *s) {
  if (s->retry) return 0;
  switch (s->block) {
  case RSAN_SB_NONE: return 1;
  case RSAN_SB_MUTEX: {
    const lock_model *l = lock_find(s->addr, 0);
    return !l || l->owner < 0 || l->owner == s->tid;
  }
  case RSAN_SB_RDLOCK: {
    const lock_model *l = lock_find(s->addr, 0);
    return !l || l->owner < 0;
  }
  case RSAN_SB_WRLOCK: {
    const lock_model *l = lock_find(s->addr, 0);
    return !l || (l->owner < 0 && l->readers == 0);
  }
  case RSAN_SB_SEM: {
    int v = 0;
    return sem_getvalue((sem_t *)s->addr, &v) != 0 || v > 0;
  }
  case RSAN_SB_ONCE: {
    const once_model *o = once_find(s->addr, 0);
    return !o || o->state != 1 || o->owner == s->tid;
  }
  case SB_JOIN: {
    const sched_thread *j = slot_of(s->joinee);
    return !j || j->state == ST_EXITED;
  }
  case SB_COND: return s->signalled;
  case SB_BARRIER: {
    const barrier_model *b = barrier_find(s->addr, 0);
    return !b || b->round > s->barrier_round;
  }
  }
  return 1;
}

static int level_of(const sched_thread *s) {
  if (s->state != ST_LIVE) return LEVEL_NONE;
  if (op_enabled(s)) return s->yielding ? LEVEL_YIELDED : LEVEL_ENABLED;
  return s->timed ? LEVEL_TIMEOUT : LEVEL_NONE;
}

/* The threads that may run the next step: those of the best level present (enabled, else
 * yielding, else timing out), ascending tids; returns their number. */
static int candidates(int *out) {
  int n = 0, best = LEVEL_NONE;
  for (int i = 0; i < nthreads_max; i++) {
    const sched_thread *s = threads[i];
    if (!s) continue;
    int lv = level_of(s);
    if (lv < best) {
      best = lv;
      n = 0;
    }
    if (lv == best && lv != LEVEL_NONE) out[n++] = i;
  }
  return n;
}

/* ---- trace ---- */
/* the address a trace names for s's pending operation (a join names the joinee's tid) */
static uintptr_t op_addr(const sched_thread *s) {
  if (s->kind != RSAN_SK_JOIN) return s->addr;
  return s->joinee ? (uintptr_t)rsan_thread_tid(s->joinee) : 0;
}

static void trace_op(const sched_thread *s, int first) {
  char line[128];
  uintptr_t a = op_addr(s);
  int k = snprintf(line, sizeof line, "%s[%d, \"%s\", \"0x%llx\", %d]", first ? "" : ", ", s->tid,
                   kind_names[s->kind], (unsigned long long)a, s->w);
  trace_line(line, (size_t)k);
}

/* The step's line. Threads that yield (unrecognised spin loops) while others are enabled are
 * listed apart, under "yielding": they could run, but would only repeat a read. */
static void trace_step(uint64_t i, int tid, const int *cand, int n) {
  char line[96];
  int k = snprintf(line, sizeof line, "{\"step\": %llu, \"tid\": %d, \"enabled\": [", (unsigned long long)i, tid);
  trace_line(line, (size_t)k);
  for (int j = 0; j < n; j++) trace_op(threads[cand[j]], j == 0);
  trace_line("]", 1);
  int listed = 0, any_enabled = 0;
  for (int j = 0; j < n; j++) any_enabled |= level_of(threads[cand[j]]) == LEVEL_ENABLED;
  if (any_enabled) {
    for (int t = 0; t < nthreads_max; t++) {
      if (!threads[t] || level_of(threads[t]) != LEVEL_YIELDED) continue;
      int in_enabled = 0;
      for (int j = 0; j < n; j++) in_enabled |= cand[j] == t;
      if (in_enabled) continue;
      trace_line(listed ? "" : ", \"yielding\": [", listed ? 0 : 15);
      trace_op(threads[t], !listed);
      listed = 1;
    }
  }
  trace_line(listed ? "]}\n" : "}\n", listed ? 3 : 2);
}

static void trace_end_why(const char *how, const char *why) {
  if (trace_fd < 0) return;
  char line[200], div[32] = "null";
  if (diverged >= 0) snprintf(div, sizeof div, "%lld", (long long)diverged);
  int k = snprintf(line, sizeof line, "{\"end\": \"%s\", \"steps\": %llu, \"diverged\": %s%s%s%s}\n", how,
                   (unsigned long long)step, div, why ? ", \"reason\": \"" : "", why ? why : "", why ? "\"" : "");
  trace_line(line, (size_t)k);
  close(trace_fd);
  trace_fd = -1;
}
static void trace_end(const char *how) { trace_end_why(how, NULL); }

/* Under lock: the rest of the run belongs to the OS scheduler (see the top of this file). The
 * trace ends with "handover" and the reason ("steps" or "stall"). */
static void handover(const char *why) {
  finished = 1;
  handed_over = 1;
  trace_end_why("handover", why);
  __atomic_store_n(&rsan_sched_on, 0, __ATOMIC_RELEASE);
  for (int i = 0; i < nthreads_max; i++) {
    sched_thread *s = threads[i];
    if (!s) continue;
    s->timed_out = 0;
    raise_flag(&s->turn);
    raise_flag(&s->arrived);
  }
  if (rsan_flag.verbosity >= 1) {
    char msg[160];
    int k = snprintf(msg, sizeof msg, "pyrsan: sched=%s handed the threads over to the OS scheduler at step %llu (%s)\n",
                     rsan_sched_name(), (unsigned long long)step, why);
    rsan_write_all(2, msg, (size_t)k);
  }
}

int rsan_sched_handed_over(void) { return __atomic_load_n(&handed_over, __ATOMIC_RELAXED); }

/* ---- the end of a run that cannot go on ---- */
static void describe_wait(const sched_thread *s, char *out, size_t n) {
  const char *what;
  uintptr_t a = s->addr;
  switch (s->block) {
  case RSAN_SB_MUTEX: what = "the lock at"; break;
  case RSAN_SB_RDLOCK: what = "a read lock of the rwlock at"; break;
  case RSAN_SB_WRLOCK: what = "a write lock of the rwlock at"; break;
  case RSAN_SB_SEM: what = "the semaphore at"; break;
  case RSAN_SB_ONCE: what = "the once routine running for"; break;
  case SB_JOIN: snprintf(out, n, "the end of thread T%d (join)", rsan_thread_tid(s->joinee)); return;
  case SB_COND: what = "a signal of the condition variable at"; break;
  case SB_BARRIER: what = "the other threads at the barrier at"; break;
  default: what = s->kind == RSAN_SK_LOCK ? "the lock at" : "a write to"; break;
  }
  if (s->retry) a = s->retry_addr;
  snprintf(out, n, "%s 0x%llx", what, (unsigned long long)a);
}

static void deadlock(void) {
  rsan_deadlock_thread dt[64];
  int n = 0;
  for (int i = 0; i < nthreads_max && n < 64; i++) {
    const sched_thread *s = threads[i];
    if (!s || s->state != ST_LIVE) continue;
    dt[n].tid = s->tid;
    dt[n].thread = s->t;
    describe_wait(s, dt[n].waiting_for, sizeof dt[n].waiting_for);
    n++;
  }
  finished = 1;
  trace_end("deadlock");
  rsan_report_deadlock(dt, n);
  rsan_spin_unlock(&lock);
  rsan_exit_raw(RSAN_EXIT_DEADLOCK);
}

static void bound_reached(void) {
  finished = 1;
  trace_end("bound");
  char msg[160];
  int k = snprintf(msg, sizeof msg, "pyrsan: the run reached max_steps=%llu scheduling points (livelock?); stopped\n",
                   (unsigned long long)max_steps);
  rsan_write_all(2, msg, (size_t)k);
  rsan_spin_unlock(&lock);
  rsan_exit_raw(RSAN_EXIT_BOUND);
}

/* Wake-ups compare 8-byte words, not addresses: a write of another size or offset into the
 * word a thread waits on may change what it reads (waking too often only costs a retry). */
static int same_word(uintptr_t a, uintptr_t b) { return (a >> 3) == (b >> 3); }

/* Threads other than writer that wait for a write to addr's word may run again. Under lock. */
static void wake_waiters(uintptr_t addr, const sched_thread *writer) {
  for (int i = 0; i < nthreads_max; i++) {
    sched_thread *s = threads[i];
    if (!s || s == writer) continue;
    if (s->retry && same_word(s->retry_addr, addr)) s->retry = 0;
    if (s->yielding && same_word(s->yield_addr, addr)) s->yielding = 0;
    for (int k = 0; k < SPIN_SLOTS; k++)
      if (same_word(s->spin[k].addr, addr)) s->spin[k].repeats = 0;
  }
}

/* ---- sleep set ---- */
static int is_thread_kind(int k) { return k == RSAN_SK_SPAWN || k == RSAN_SK_JOIN || k == RSAN_SK_EXIT; }

/* docs/scheduling.md "Trace file", Dependency; the same relation as explore.dependent. */
static int ops_dependent(int ta, int ka, uintptr_t aa, int wa, int tb, int kb, uintptr_t ab, int wb) {
  if (ta == tb) return 0;
  if (ka == RSAN_SK_EXIT_PROCESS || kb == RSAN_SK_EXIT_PROCESS) return 1;
  if (ka == RSAN_SK_FENCE || kb == RSAN_SK_FENCE) return 0;
  if (ka == RSAN_SK_FENCE_SC || kb == RSAN_SK_FENCE_SC) return ka == kb;
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

/* c was chosen: the sleepers whose operation depends on c's wake up */
static void wake_sleepers(const sched_thread *c) {
  for (int i = 0; i < nsleepers; i++) {
    sleep_entry *e = &sleepers[i];
    if (e->live && ops_dependent(e->tid, e->kind, e->addr, e->w, c->tid, c->kind, op_addr(c), c->w)) e->live = 0;
  }
}

/* After the prefix: drops the sleeping candidates unless all are asleep (then the run repeats
 * a class already run; the explorer cuts it). Returns the new count. */
static int drop_sleepers(int *cand, int n) {
  int k = 0;
  for (int i = 0; i < n; i++)
    if (!asleep(cand[i])) cand[k++] = cand[i];
  return k ? k : n;
}

/* ---- the decision ---- */
/* Picks the thread of the next step, under lock (which it keeps). */
static sched_thread *decide(void) {
  static int cand[MAX_THREADS];
  int n = candidates(cand);
  if (n == 0) {
    for (int i = 0; i < nthreads_max; i++) {
      if (!threads[i] || threads[i]->state != ST_LIVE) continue;
      if (stall_ns && __atomic_load_n(&rsan_sched_hidden_wakers, __ATOMIC_ACQUIRE)) {
        handover("hidden"); /* a handler or timer thread may still wake someone */
        return NULL;
      }
      deadlock();
    }
    return NULL; /* every managed thread exited (the last one ends the process) */
  }
  if (handover_steps && step >= handover_steps) {
    handover("steps");
    return NULL;
  }
  if (step >= max_steps) bound_reached();
  int chosen = -1;
  if (step < prefix_len && diverged < 0) {
    int want = prefix[step];
    for (int i = 0; i < n; i++)
      if (cand[i] == want) chosen = want;
    if (chosen < 0 && want < nthreads_max && threads[want] && level_of(threads[want]) == LEVEL_YIELDED) {
      /* a yielding thread can run when a schedule asks for it: it joins the candidates */
      int j = n++;
      for (; j > 0 && cand[j - 1] > want; j--) cand[j] = cand[j - 1];
      cand[j] = chosen = want;
    }
    if (chosen < 0) {
      diverged = (int64_t)step;
      char msg[96];
      int k = snprintf(msg, sizeof msg, "pyrsan: schedule diverged at step %llu\n", (unsigned long long)step);
      rsan_write_all(2, msg, (size_t)k);
    }
  }
  if (chosen < 0 && exit_pending_tid >= 0 && step - exit_pending_since >= EXIT_PATIENCE) {
    for (int i = 0; i < n; i++)
      if (cand[i] == exit_pending_tid) chosen = exit_pending_tid; /* the process ends now */
  }
  if (chosen < 0 && level_of(threads[cand[0]]) == LEVEL_YIELDED) {
    /* Every runnable thread spins (candidates() only mixes levels when none is better): staying
     * with the last one, as dfs's continuation and PCT's priorities would, lets it re-read for
     * ever while the thread it waits for never runs. Round-robin gives each spinner a turn. */
    chosen = cand[0];
    for (int i = 0; i < n; i++)
      if (cand[i] > last) {
        chosen = cand[i];
        break;
      }
  }
  if (chosen < 0) {
    static int filtered[MAX_THREADS];
    int *pick = cand, m = n;
    if (nsleepers && step >= prefix_len) {
      memcpy(filtered, cand, (size_t)n * sizeof *cand);
      m = drop_sleepers(filtered, n);
      pick = filtered;
    }
    chosen = diverged >= 0 ? rsan_strategy_continue(pick, m, last)
                           : rsan_strategy_pick(pick, m, last, step);
  }
  trace_step(step, chosen, cand, n);
  if (nsleepers && step >= prefix_len) wake_sleepers(threads[chosen]);
  __atomic_store_n(&step, step + 1, __ATOMIC_RELAXED); /* read by waiters (stall) */
  last = chosen;
  sched_thread *c = threads[chosen];
  c->timed_out = !op_enabled(c);
  /* It writes there: wake those waiting for a write. An RMW / CAS / BCAS attempt may leave
   * memory as it was (two threads failing on a held lock must not wake each other for
   * ever): it wakes them only once it changed memory (rsan_sched_note_access). */
  if (c->w && c->addr && c->kind != RSAN_SK_RMW && c->kind != RSAN_SK_SPAWN) /* spawn: a tid */
    wake_waiters(c->addr, c);
  holder = chosen;
  return c;
}

/* Hands the baton to c; the caller (me, or NULL when it leaves) waits for its own turn. */
static void switch_to(sched_thread *me, sched_thread *c) {
  rsan_spin_unlock(&lock);
  if (c == me || !c) return;
  raise_flag(&c->turn);
  if (me) wait_flag(&me->turn);
}

static void set_pending(sched_thread *s, int kind, const void *addr, int w, int block, int timed) {
  s->kind = kind;
  s->addr = (uintptr_t)addr;
  s->w = w;
  s->block = block;
  s->timed = timed;
  if (s->retry && (s->retry_addr != s->addr)) s->retry = 0; /* it moved on to something else */
  /* a yielding thread stays so at every operation (its loop may lock and unlock around the
   * read) until a write to the location by another thread, or a write of its own */
}

/* A new thread's first point: tell the parent it arrived, then wait to be chosen. */
static int arrive_or_decide(sched_thread *s) {
  if (s->state == ST_NEW) {
    s->state = ST_LIVE;
    rsan_spin_unlock(&lock);
    raise_flag(&s->arrived);
    wait_flag(&s->turn);
    return !s->timed_out;
  }
  switch_to(s, decide());
  return !s->timed_out;
}

static int point(int kind, const void *addr, int w, int block, int timed, rsan_thread *joinee) {
  rsan_spin_lock(&lock);
  sched_thread *s = finished ? NULL : self_locked();
  if (!s) {
    rsan_spin_unlock(&lock);
    return 1;
  }
  s->joinee = joinee;
  set_pending(s, kind, addr, w, block, timed);
  return arrive_or_decide(s);
}

/* tests (rsan_test.h): the engine's scheduling points reported to a test driver instead */
void (*rsan_sched_test_hook)(int kind, const void *addr, int w);

void rsan_sched_point(int kind, const void *addr, int w) {
  if (rsan_sched_test_hook) {
    rsan_sched_test_hook(kind, addr, w);
    return;
  }
  point(kind, addr, w, RSAN_SB_NONE, 0, NULL);
}

int rsan_sched_reports_schedule(void) { return rsan_sched_on && mode != RSAN_SCHED_OS; }

int rsan_sched_point_blocking(int kind, const void *addr, int w, int block, int timed) {
  if (!rsan_sched_on) return 1;
  return point(kind, addr, w, block, timed, NULL);
}

int rsan_sched_manages_current(void) {
  rsan_spin_lock(&lock);
  int managed = !finished && self_locked() != NULL;
  rsan_spin_unlock(&lock);
  return managed;
}

void rsan_sched_retry_after_write(const void *addr) {
  if (!rsan_sched_on) { /* handed over: the caller's retry loop polls under the OS scheduler */
    sched_yield();
    return;
  }
  rsan_spin_lock(&lock);
  sched_thread *s = finished ? NULL : slot_of(rsan_thread_current());
  if (s && s->state == ST_LIVE) {
    s->retry = 1;
    s->retry_addr = (uintptr_t)addr;
  }
  rsan_spin_unlock(&lock);
}

void rsan_sched_note_access(const void *addr, uint64_t value, int changed) {
  if (!rsan_sched_on) return;
  sched_thread *s = slot_of(rsan_thread_current()); /* only its own slot: no lock needed */
  if (!s || s->state != ST_LIVE) return;
  uintptr_t a = (uintptr_t)addr;
  if (changed) {
    for (int k = 0; k < SPIN_SLOTS; k++) s->spin[k].addr = 0, s->spin[k].repeats = 0;
    s->yielding = 0;
    rsan_spin_lock(&lock);
    wake_waiters(a, s);
    rsan_spin_unlock(&lock);
    return;
  }
  spin_slot *slot = NULL;
  for (int k = 0; k < SPIN_SLOTS; k++)
    if (s->spin[k].addr == a) slot = &s->spin[k];
  if (!slot) { /* replace the least repeated */
    slot = &s->spin[0];
    for (int k = 1; k < SPIN_SLOTS; k++)
      if (s->spin[k].repeats < slot->repeats) slot = &s->spin[k];
    slot->addr = a;
    slot->repeats = 0;
  }
  if (slot->repeats && slot->value == value) {
    slot->repeats++;
  } else {
    slot->value = value;
    slot->repeats = 1;
  }
  if (slot->repeats >= SPIN_REPEATS) {
    s->yielding = 1;
    s->yield_addr = a;
  }
}

/* ---- threads ---- */
void rsan_sched_spawn(void) {
  if (!rsan_sched_on) return;
  /* the child's tid is the next one: creation is serialised under the scheduler */
  point(RSAN_SK_SPAWN, (const void *)(uintptr_t)rsan_thread_next_tid(), 1, RSAN_SB_NONE, 0, NULL);
}

void rsan_sched_child_created(rsan_thread *child) {
  if (!rsan_sched_on || !child) return;
  rsan_spin_lock(&lock);
  if (!finished && slot_of(rsan_thread_current())) register_thread(child, ST_NEW);
  rsan_spin_unlock(&lock);
}

void rsan_sched_spawn_done(rsan_thread *child, int ok) {
  if (!rsan_sched_on || !child) return;
  sched_thread *c = slot_of(child);
  if (!c) return;
  if (!ok) {
    rsan_spin_lock(&lock);
    c->state = ST_EXITED;
    rsan_spin_unlock(&lock);
    return;
  }
  wait_flag(&c->arrived);
}

void rsan_sched_exit_point(void) {
  if (!rsan_sched_on) return;
  point(RSAN_SK_EXIT, NULL, 0, RSAN_SB_NONE, 0, NULL);
}

void rsan_sched_exit_done(void) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&lock);
  sched_thread *s = finished ? NULL : slot_of(rsan_thread_current());
  if (!s || s->state != ST_LIVE) {
    rsan_spin_unlock(&lock);
    return;
  }
  s->state = ST_EXITED;
  /* the thread leaves without a next point: it takes the decision for the next step */
  switch_to(NULL, decide());
}

int rsan_sched_join(rsan_thread *joinee, int how) {
  if (!rsan_sched_on) return 1;
  if (how == RSAN_JOIN_TRY) return point(RSAN_SK_JOIN, NULL, 0, RSAN_SB_NONE, 0, joinee);
  return point(RSAN_SK_JOIN, NULL, 0, SB_JOIN, how == RSAN_JOIN_TIMED, joinee);
}

int rsan_sched_thread_exited(rsan_thread *joinee) {
  const sched_thread *j = slot_of(joinee);
  return !j || j->state == ST_EXITED;
}

/* ---- locks ---- */
void rsan_sched_lock_acquired(const void *addr, int write) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&lock);
  sched_thread *s = finished ? NULL : slot_of(rsan_thread_current());
  if (s) {
    lock_model *l = lock_find((uintptr_t)addr, 1);
    if (write) {
      l->owner = s->tid;
      l->count++;
    } else {
      l->readers++;
    }
  }
  rsan_spin_unlock(&lock);
}

void rsan_sched_lock_released(const void *addr) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&lock);
  sched_thread *s = finished ? NULL : slot_of(rsan_thread_current());
  lock_model *l = s ? lock_find((uintptr_t)addr, 0) : NULL;
  if (l) {
    if (l->owner == s->tid) {
      if (--l->count <= 0) l->owner = -1, l->count = 0;
    } else if (l->readers > 0) {
      l->readers--;
    }
  }
  rsan_spin_unlock(&lock);
}

/* ---- condition variables ---- */
int rsan_sched_cond_wait(const void *c, int timed) {
  if (!rsan_sched_on) return 1;
  rsan_spin_lock(&lock);
  sched_thread *s = finished ? NULL : self_locked();
  if (!s) {
    rsan_spin_unlock(&lock);
    return 1;
  }
  s->cond = (uintptr_t)c;
  s->cond_seq = ++cond_seq;
  s->signalled = 0;
  s->joinee = NULL;
  set_pending(s, RSAN_SK_WAIT, c, 0, SB_COND, timed);
  int ok = arrive_or_decide(s);
  s->cond = 0;
  return ok;
}

void rsan_sched_cond_signal(const void *c, int all) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&lock);
  if (!finished) {
    sched_thread *oldest = NULL;
    for (int i = 0; i < nthreads_max; i++) {
      sched_thread *s = threads[i];
      if (!s || s->state != ST_LIVE || s->cond != (uintptr_t)c || s->signalled) continue;
      if (all) s->signalled = 1;
      else if (!oldest || s->cond_seq < oldest->cond_seq) oldest = s;
    }
    if (oldest) oldest->signalled = 1;
  }
  rsan_spin_unlock(&lock);
}

/* ---- barriers ---- */
void rsan_sched_barrier_init(const void *b, unsigned count) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&lock);
  barrier_model *m = barrier_find((uintptr_t)b, 1);
  m->count = count;
  m->arrived = 0;
  rsan_spin_unlock(&lock);
}

int rsan_sched_barrier_wait(const void *b, unsigned fallback_count) {
  rsan_spin_lock(&lock);
  if (handed_over) { /* after the hand-over every arrival goes to the real barrier */
    rsan_spin_unlock(&lock);
    return -1;
  }
  sched_thread *s = finished ? NULL : self_locked();
  barrier_model *m = barrier_find((uintptr_t)b, 1);
  if (!m->count) m->count = fallback_count ? fallback_count : 1;
  if (++m->arrived >= m->count) {
    m->arrived = 0;
    m->round++;
    rsan_spin_unlock(&lock);
    return 1;
  }
  if (!s) {
    rsan_spin_unlock(&lock);
    return 0;
  }
  s->barrier_round = m->round;
  s->joinee = NULL;
  set_pending(s, RSAN_SK_WAIT, b, 0, SB_BARRIER, 0);
  arrive_or_decide(s);
  if (handed_over && m->round <= s->barrier_round) return -1; /* the real barrier, from now on */
  return 0;
}

/* ---- once ---- */
void rsan_sched_once_enter(const void *o) {
  if (!rsan_sched_on) return;
  point(RSAN_SK_SYNC_ACQUIRE, o, 1, RSAN_SB_ONCE, 0, NULL);
  rsan_spin_lock(&lock);
  sched_thread *s = finished ? NULL : slot_of(rsan_thread_current());
  once_model *m = once_find((uintptr_t)o, 1);
  if (s && m->state == 0) {
    m->state = 1;
    m->owner = s->tid;
  }
  rsan_spin_unlock(&lock);
}

void rsan_sched_once_done(const void *o) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&lock);
  once_model *m = once_find((uintptr_t)o, 1);
  m->state = 2;
  rsan_spin_unlock(&lock);
}

/* ---- start-up and exit ---- */
static void bad_input(const char *msg, const char *path) {
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
  for (int k = 0; k < (int)(sizeof kind_names / sizeof kind_names[0]); k++)
    if (!strcmp(kind, kind_names[k])) {
      sleepers[nsleepers++] = (sleep_entry){tid, k, w, 1, (uintptr_t)addr};
      return;
    }
}

/* docs/scheduling.md "Schedule file" */
static void load_schedule(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) bad_input("cannot read the schedule file", path);
  size_t n = 0, cap = 4096;
  char *text = rsan_alloc(cap);
  ssize_t k;
  while ((k = read(fd, text + n, cap - n - 1)) > 0) {
    n += (size_t)k;
    if (n + 1 >= cap) text = rsan_realloc(text, cap *= 2);
  }
  close(fd);
  text[n] = 0;
  static const char header[] = "pyrsan-schedule 1";
  if (strncmp(text, header, sizeof header - 1) != 0 ||
      (text[sizeof header - 1] != '\n' && text[sizeof header - 1] != '\r' && text[sizeof header - 1] != 0))
    bad_input("not a schedule file (the first line must be 'pyrsan-schedule 1'):", path);
  size_t cap_p = 256;
  prefix = rsan_alloc(cap_p * sizeof *prefix);
  for (char *p = text + sizeof header - 1; *p;) {
    if (*p == '#') { /* a comment line, or a sleep-set entry */
      parse_sleep_line(p);
      while (*p && *p != '\n') p++;
      continue;
    }
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      p++;
      continue;
    }
    long v = 0;
    if (*p < '0' || *p > '9') bad_input("a schedule entry is not a thread id in", path);
    while (*p >= '0' && *p <= '9') {
      v = v * 10 + (*p++ - '0');
      if (v >= MAX_THREADS) bad_input("a schedule entry is not a thread id in", path);
    }
    if (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
      bad_input("a schedule entry is not a thread id in", path);
    if (prefix_len == cap_p) prefix = rsan_realloc(prefix, (cap_p *= 2) * sizeof *prefix);
    prefix[prefix_len++] = (int)v;
  }
  rsan_free(text);
}

/* fork: the child has only the forking thread; it runs on without the scheduler (and
 * without writing to the parent's trace) */
static void sched_fork_child(void) {
  finished = 1;
  rsan_sched_on = 0;
  if (trace_fd >= 0) close(trace_fd);
  trace_fd = -1;
  lock.v = 0;
}

void rsan_sched_init(void) {
  mode = rsan_sched_flag.sched;
  if (mode == RSAN_SCHED_OS || rsan_test_mode) return;
  seed = rsan_sched_flag.seed;
  if (mode == RSAN_SCHED_AUTO && seed == 0) { /* a fresh seed: the reports name it */
    seed = now_ns() ^ ((uint64_t)getpid() << 32);
    seed = (seed ^ (seed >> 31)) * 0x9e3779b97f4a7c15ull;
    if (!seed) seed = 1;
  }
  max_steps = rsan_sched_flag.max_steps;
  handover_steps = mode == RSAN_SCHED_AUTO ? rsan_sched_flag.handover_steps : 0;
  stall_ns = rsan_sched_flag.stall_ms * 1000000ull;
  rsan_strategy_init(mode, seed, rsan_sched_flag.pct_depth, rsan_sched_flag.pct_steps);
  if (rsan_sched_flag.schedule[0]) load_schedule(rsan_sched_flag.schedule);
  if (rsan_sched_flag.trace_path[0]) {
    char path[600];
    rsan_expand_pid(rsan_sched_flag.trace_path, path, sizeof path);
    trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (trace_fd < 0) bad_input("cannot open trace_path for writing:", path);
    char line[200];
    int k = snprintf(line, sizeof line, "{\"pyrsan_trace\": 1, \"sched\": \"%s\", \"seed\": %llu, \"pid\": %d}\n",
                     rsan_sched_name(), (unsigned long long)seed, (int)getpid());
    trace_line(line, (size_t)k);
  }
  pthread_atfork(NULL, NULL, sched_fork_child);
  rsan_sched_on = 1;
}

void rsan_sched_process_exit(void) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&lock);
  sched_thread *s = finished ? NULL : slot_of(rsan_thread_current());
  int others = 0;
  for (int i = 0; s && i < nthreads_max; i++)
    others |= threads[i] && threads[i] != s && threads[i]->state != ST_EXITED;
  if (!s || s->state != ST_LIVE || !others) {
    rsan_spin_unlock(&lock);
    return;
  }
  s->joinee = NULL;
  set_pending(s, RSAN_SK_EXIT_PROCESS, NULL, 1, RSAN_SB_NONE, 0);
  exit_pending_since = step;
  exit_pending_tid = s->tid;
  switch_to(s, decide());
}

void rsan_sched_at_exit(void) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&lock);
  if (!finished) {
    finished = 1;
    trace_end("exit");
  }
  rsan_spin_unlock(&lock);
}
