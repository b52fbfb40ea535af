/* The controlled scheduler: baton, enabledness, the decision, hand-over, deadlock and bound
 * (docs/scheduling.md; the entry points are described in rsan_sched.h, the other scheduler
 * files in rsan_sched_internal.h).
 *
 * Baton. Each managed thread has a futex word `turn`. The thread running a step is the only
 * managed thread outside a wait; at its next scheduling point it records its pending
 * operation, takes the decision for the next step (strategy, trace line), sets the chosen
 * thread's `turn` and, unless it chose itself, sleeps on its own `turn`. Futexes are raw
 * syscalls: the interposed pthread functions never see the scheduler's own waits.
 *
 * Enabledness is re-evaluated at every decision from the pending operation and the models
 * (sched_sync.c: lock owners and readers, cond waiters, barrier rounds, once states, exited
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
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_internal.h"
#include "rsan_report.h"
#include "rsan_sched_fence.h"
#include "rsan_sched_closure_hb.h"
#include "rsan_sched_internal.h"

int rsan_sched_on;
struct rsan_sched_state rsan_sched = {.diverged = -1};

static int holder = -1;  /* tid of the thread running the current step */
static int last = -1;    /* tid chosen at the previous step */
static int mode;
static int closure; /* sched_closure=1 under dfs: the run's F-order closure (sched_closure.c) */
static uint64_t seed;
static uint64_t max_steps;
static uint64_t handover_steps; /* sched=auto: hand over after this many steps; 0 never */
int rsan_sched_hidden_wakers;
int rsan_sched_had_choice;
static uint64_t stall_ns;       /* hand over after this long without a step; 0 never */
/* How long a pending process exit may wait for the other threads: a thread that never ends
 * (a worker loop) must not keep the process from exiting for ever. */
#define EXIT_PATIENCE 10000
static uint64_t exit_pending_since;
static int exit_pending_tid = -1;


/* Waits for the flag; with stall_ms, the waiting threads watch for a stall (above). */
static void wait_flag(uint32_t *w) {
  rsan_rt_enter(); /* a signal handler must not enter the scheduler while its thread waits */
  struct timespec slice = {0, 20 * 1000000L};
  if (stall_ns && (uint64_t)slice.tv_nsec > stall_ns) slice.tv_nsec = (long)stall_ns;
  rsan_stall_watch sw = {0};
  int watching = 0;
  while (!__atomic_load_n(w, __ATOMIC_ACQUIRE)) {
    rsan_futex_wait(w, 0, stall_ns ? &slice : NULL);
    if (stall_ns && !__atomic_load_n(w, __ATOMIC_ACQUIRE))
      watching = rsan_sched_stall_check(&sw, watching, stall_ns);
  }
  if (watching) rsan_sched_stall_unwatch();
  /* The turn is consumed before signals may run again: a handler that runs right after (at
   * depth 0) takes its scheduling points as the baton holder, and must not find the turn it
   * is about to wait for still raised (it would run beside the thread it just chose). */
  __atomic_store_n(w, 0, __ATOMIC_RELAXED);
  rsan_rt_leave();
}
static void raise_flag(uint32_t *w) {
  __atomic_store_n(w, 1, __ATOMIC_RELEASE);
  rsan_futex_wake(w);
}

/* ---- output ---- */

const char *rsan_sched_name(void) {
  static const char *const names[] = {"os", "random", "pct", "dfs", "auto"};
  return names[mode];
}
uint64_t rsan_sched_seed(void) { return seed; }
uint64_t rsan_sched_step(void) { return rsan_sched.step ? rsan_sched.step - 1 : 0; }

/* ---- threads ---- */
static sched_thread *register_thread(rsan_thread *t, int state) {
  int tid = rsan_thread_tid(t);
  if (tid < 0 || tid >= MAX_THREADS) return NULL; /* past the limit: not managed */
  sched_thread *s = rsan_alloc(sizeof *s);
  s->t = t;
  s->tid = tid;
  s->state = state;
  rsan_sched.threads[tid] = s;
  if (tid + 1 > rsan_sched.nthreads_max) rsan_sched.nthreads_max = tid + 1;
  t->sched = s;
  rsan_strategy_thread_added(tid);
  return s;
}

/* The calling thread's slot; the first thread at a scheduling point becomes the holder.
 * NULL: not managed (pass through). Under lock. */
sched_thread *rsan_sched_self_locked(void) {
  rsan_thread *t = rsan_thread_current();
  sched_thread *s = slot_of(t);
  if (s) return s->state == ST_EXITED ? NULL : s;
  if (holder >= 0 || rsan_sched.nthreads_max > 0) return NULL; /* someone else already runs the show */
  s = register_thread(t, ST_LIVE);
  if (s) {
    holder = s->tid;
    __atomic_store_n(&rsan_sched_runner, s, __ATOMIC_RELAXED);
  }
  return s;
}

/* enabledness of s's pending operation, ignoring yields and time-outs */
static int op_enabled(const sched_thread *s) {
  /* a wait enabled by memory: its condition, not a write since a failed attempt (sched_wait.c) */
  if (s->block == SB_VALUE) return rsan_sched_wait_holds((sched_thread *)s);
  if (s->retry) return 0;
  switch (s->block) {
  case RSAN_SB_NONE: return 1;
  case SB_JOIN: {
    const sched_thread *j = slot_of(s->joinee);
    return !j || j->state == ST_EXITED;
  }
  case SB_COND: return s->signalled;
  case SB_AWAIT: return rsan_await_enabled(s);
  default: return rsan_sched_model_enabled(s);
  }
  return 1;
}

int rsan_sched_level_of(const sched_thread *s) {
  if (s->state != ST_LIVE) return LEVEL_NONE;
  if (op_enabled(s)) return s->yielding ? LEVEL_YIELDED : LEVEL_ENABLED;
  return s->timed ? LEVEL_TIMEOUT : LEVEL_NONE;
}

/* The threads that may run the next step: those of the best level present (enabled, else
 * yielding, else timing out), ascending tids; returns their number. */
static int candidates(int *out) {
  int n = 0, best = LEVEL_NONE;
  for (int i = 0; i < rsan_sched.nthreads_max; i++) {
    const sched_thread *s = rsan_sched.threads[i];
    if (!s) continue;
    int lv = rsan_sched_level_of(s);
    if (lv < best) {
      best = lv;
      n = 0;
    }
    if (lv == best && lv != LEVEL_NONE) out[n++] = i;
  }
  return n;
}

/* Under lock: the rest of the run belongs to the OS scheduler (see the top of this file). The
 * trace ends with "handover" and the reason ("steps" or "stall"). */
void rsan_sched_handover(const char *why) {
  if (rsan_scout_child) rsan_scout_end();
  rsan_sched.finished = 1;
  rsan_sched.handed_over = 1;
  rsan_sched_trace_end("handover", why);
  __atomic_store_n(&rsan_sched_on, 0, __ATOMIC_RELEASE);
  for (int i = 0; i < rsan_sched.nthreads_max; i++) {
    sched_thread *s = rsan_sched.threads[i];
    if (!s) continue;
    s->timed_out = 0;
    raise_flag(&s->turn);
    raise_flag(&s->arrived);
  }
  if (rsan_flag.verbosity >= 1) {
    char msg[160];
    int k = snprintf(msg, sizeof msg,
                     "pyrsan: sched=%s handed the threads over to the OS scheduler at step %llu (%s)\n",
                     rsan_sched_name(), (unsigned long long)rsan_sched.step, why);
    rsan_write_all(2, msg, (size_t)k);
  }
}

int rsan_sched_handed_over(void) { return __atomic_load_n(&rsan_sched.handed_over, __ATOMIC_RELAXED); }

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
  case SB_AWAIT: what = "a write to what its await loop reads, e.g."; break;
  default: what = s->kind == RSAN_SK_LOCK ? "the lock at" : "a write to"; break;
  }
  if (s->retry) a = s->retry_addr;
  snprintf(out, n, "%s 0x%llx", what, (unsigned long long)a);
}

static void deadlock(void) {
  if (rsan_scout_child) rsan_scout_end();
  if (rsan_await_blocked_news()) { /* sched_await=-1: a blocked execution, no deadlock */
    rsan_sched.finished = 1;
    rsan_sched_trace_end("exit", NULL);
    rsan_spin_unlock(&rsan_sched.lock);
    rsan_exit_raw(0);
  }
  rsan_deadlock_thread dt[64];
  int n = 0;
  for (int i = 0; i < rsan_sched.nthreads_max && n < 64; i++) {
    const sched_thread *s = rsan_sched.threads[i];
    if (!s || s->state != ST_LIVE) continue;
    dt[n].tid = s->tid;
    dt[n].thread = s->t;
    describe_wait(s, dt[n].waiting_for, sizeof dt[n].waiting_for);
    n++;
  }
  rsan_sched.finished = 1;
  rsan_sched_trace_end("deadlock", NULL);
  rsan_report_deadlock(dt, n);
  rsan_spin_unlock(&rsan_sched.lock);
  rsan_exit_raw(RSAN_EXIT_DEADLOCK);
}

static void bound_reached(void) {
  if (rsan_scout_child) rsan_scout_end();
  rsan_sched.finished = 1;
  rsan_sched_trace_end("bound", NULL);
  char msg[160];
  int k = snprintf(msg, sizeof msg,
                   "pyrsan: the run reached max_steps=%llu scheduling points (livelock?); stopped\n",
                   (unsigned long long)max_steps);
  rsan_write_all(2, msg, (size_t)k);
  rsan_spin_unlock(&rsan_sched.lock);
  rsan_exit_raw(RSAN_EXIT_BOUND);
}

/* Wake-ups compare 8-byte words, not addresses: a write of another size or offset into the
 * word a thread waits on may change what it reads (waking too often only costs a retry). */
static int same_word(uintptr_t a, uintptr_t b) { return (a >> 3) == (b >> 3); }

/* Threads other than writer that wait for a write to addr's word may run again. Under lock. */
static void wake_waiters(uintptr_t addr, const sched_thread *writer) {
  for (int i = 0; i < rsan_sched.nthreads_max; i++) {
    sched_thread *s = rsan_sched.threads[i];
    if (!s || s == writer) continue;
    if (s->retry && same_word(s->retry_addr, addr)) s->retry = 0;
    if (s->block == SB_VALUE && same_word(s->addr, addr)) s->wv_stale = 1; /* read it at the next look */
    if (s->yielding && same_word(s->yield_addr, addr)) s->yielding = 0;
    for (int k = 0; k < SPIN_SLOTS; k++)
      if (same_word(s->spin[k].addr, addr)) s->spin[k].repeats = 0;
  }
}

/* ---- the decision ---- */
/* Fairness of the free choices (continuation and strategy, never a schedule's prefix): a thread
 * that has run FAIR_STREAK steps in a row yields its turn, when another candidate is enabled,
 * to the next candidate by tid. dfs's continuation and PCT's priorities keep the previous
 * thread; a loop that writes every iteration (a Chase-Lev owner polling take() on an empty
 * deque stores bottom and restores it) is never a spin to the wait rules, so without this the
 * thread it waits for would never run and the run would end at max_steps as a false livelock.
 * A real livelock still reaches max_steps: every thread gets turns and none makes progress. */
#define FAIR_STREAK 4096
static uint64_t streak; /* steps last has run in a row */

static int fair_turn(int chosen, const int *pick, int m) {
  if (chosen != last || m < 2 || streak < FAIR_STREAK) return chosen;
  for (int i = 0; i < m; i++)
    if (pick[i] > last) return pick[i];
  return pick[0];
}

/* Picks the thread of the next step, under lock (which it keeps). */
static sched_thread *decide(void) {
  static int cand[MAX_THREADS];
  int n = candidates(cand);
  if (n == 0) {
    for (int i = 0; i < rsan_sched.nthreads_max; i++) {
      if (!rsan_sched.threads[i] || rsan_sched.threads[i]->state != ST_LIVE) continue;
      if (stall_ns && __atomic_load_n(&rsan_sched_hidden_wakers, __ATOMIC_ACQUIRE)) {
        rsan_sched_handover("hidden"); /* a handler or timer thread may still wake someone */
        return NULL;
      }
      if (rsan_sig_may_wake(stall_ns)) {
        rsan_sched_handover("signal"); /* its thread runs the handler once it runs again */
        return NULL;
      }
      deadlock();
    }
    return NULL; /* every managed thread exited (the last one ends the process) */
  }
  if (handover_steps && rsan_sched.step >= handover_steps) {
    rsan_sched_handover("steps");
    return NULL;
  }
  if (rsan_scout_child && rsan_sched.step >= RSAN_SCOUT_STEPS) rsan_scout_end();
  if (rsan_sched.step >= max_steps) bound_reached();
  if (n > 1) rsan_sched_had_choice = 1;
  int chosen = -1;
  int want = rsan_sched.diverged < 0 ? rsan_sched_prefix_at(rsan_sched.step) : -1;
  if (want >= 0) {
    for (int i = 0; i < n; i++)
      if (cand[i] == want) chosen = want;
    if (chosen < 0 && want < rsan_sched.nthreads_max && rsan_sched.threads[want] &&
        rsan_sched_level_of(rsan_sched.threads[want]) == LEVEL_YIELDED) {
      /* a yielding thread can run when a schedule asks for it: it joins the candidates */
      int j = n++;
      for (; j > 0 && cand[j - 1] > want; j--) cand[j] = cand[j - 1];
      cand[j] = chosen = want;
    }
    if (chosen < 0) {
      rsan_sched.diverged = (int64_t)rsan_sched.step;
      char msg[96];
      int k = snprintf(msg, sizeof msg, "pyrsan: schedule diverged at step %llu\n",
                       (unsigned long long)rsan_sched.step);
      rsan_write_all(2, msg, (size_t)k);
    }
  }
  if (chosen < 0 && exit_pending_tid >= 0 && rsan_sched.step - exit_pending_since >= EXIT_PATIENCE) {
    for (int i = 0; i < n; i++)
      if (cand[i] == exit_pending_tid) chosen = exit_pending_tid; /* the process ends now */
  }
  /* after the prefix, the sleeping candidates are dropped unless all sleep (docs/scheduling.md
   * "Sleep set"): a sleeping thread's step repeats a class already run */
  static int filtered[MAX_THREADS];
  int *pick = cand, m = n;
  if (chosen < 0 && rsan_sched_sleep_applies(rsan_sched.step)) {
    memcpy(filtered, cand, (size_t)n * sizeof *cand);
    m = rsan_sched_drop_sleepers(filtered, n);
    pick = filtered;
  }
  if (chosen < 0 && rsan_sched_level_of(rsan_sched.threads[pick[0]]) == LEVEL_YIELDED) {
    /* Every runnable thread spins (candidates() only mixes levels when none is better): staying
     * with the last one, as dfs's continuation and PCT's priorities would, lets it re-read for
     * ever while the thread it waits for never runs. Round-robin gives each spinner a turn. */
    chosen = pick[0];
    for (int i = 0; i < m; i++)
      if (pick[i] > last) {
        chosen = pick[i];
        break;
      }
  }
  if (chosen < 0) {
    chosen = rsan_sched.diverged >= 0 ? rsan_strategy_continue(pick, m, last)
                                      : rsan_strategy_pick(pick, m, last, rsan_sched.step);
    chosen = fair_turn(chosen, pick, m);
  }
  streak = chosen == last ? streak + 1 : 1;
  rsan_sched_trace_step(rsan_sched.step, chosen, cand, n);
  if (rsan_sched_sleep_applies(rsan_sched.step)) rsan_sched_wake_sleepers(rsan_sched.threads[chosen]);
  __atomic_store_n(&rsan_sched.step, rsan_sched.step + 1, __ATOMIC_RELAXED); /* read by waiters (stall) */
  last = chosen;
  sched_thread *c = rsan_sched.threads[chosen];
  rsan_await_chosen(c); /* sched_await.c: an await iteration's reads, the writes' generations */
  rsan_closure_hb_step(c); /* sched_closure_hb.c: the coarse order's causality (after the above) */
  if (closure) rsan_closure_step(c); /* sched_closure.c */
  if (rsan_scout_child) /* a join names 1 + the joinee's tid once the joinee has ended */
    rsan_scout_note(chosen, c->kind,
                    c->kind == RSAN_SK_JOIN
                        ? (rsan_sched_thread_exited(c->joinee) && c->joinee ? op_addr(c) + 1 : 0)
                        : c->addr,
                    c->w);
  c->timed_out = !op_enabled(c);
  /* It writes there: wake those waiting for a write. An RMW / CAS / BCAS attempt may leave
   * memory as it was (two threads failing on a held lock must not wake each other for
   * ever): it wakes them only once it changed memory (rsan_sched_note_access). */
  if (c->w && c->addr && c->kind != RSAN_SK_RMW && c->kind != RSAN_SK_SPAWN) /* spawn: a tid */
    wake_waiters(c->addr, c);
  holder = chosen;
  __atomic_store_n(&rsan_sched_runner, c, __ATOMIC_RELAXED); /* runnable from now on, even before it wakes */
  return c;
}

/* Hands the baton to c; the caller (me, or NULL when it leaves) waits for its own turn. */
static void switch_to(sched_thread *me, sched_thread *c) {
  /* From the unlock to the end of the wait the thread no longer holds the baton: a signal
   * handler run there would take scheduling points beside the thread it chose. Signals stay
   * deferred (rsan_signal.h) until the turn comes back. */
  rsan_rt_enter();
  rsan_spin_unlock(&rsan_sched.lock);
  if (c && c != me) {
    raise_flag(&c->turn);
    if (me) wait_flag(&me->turn);
  }
  rsan_rt_leave();
}

void rsan_sched_set_pending(sched_thread *s, int kind, const void *addr, int w, int block, int timed) {
  s->kind = kind;
  s->addr = (uintptr_t)addr;
  s->w = w;
  /* sched_closure: every SC fence is labelled clean (the coarse relation; its F orders are the
   * closure's business, sched_closure.c) */
  s->clean = kind == RSAN_SK_FENCE_SC && ((mode == RSAN_SCHED_DFS && rsan_sched_flag.sched_closure) ||
                                          (s->t && rsan_fence_sc_clean(s->t)));
  s->block = block;
  s->timed = timed;
  if (s->retry && (s->retry_addr != s->addr)) s->retry = 0; /* it moved on to something else */
  /* a yielding thread stays so at every operation (its loop may lock and unlock around the
   * read) until a write to the location by another thread, or a write of its own */
}

/* A new thread's first point: tell the parent it arrived, then wait to be chosen. */
int rsan_sched_arrive_or_decide(sched_thread *s) {
  if (!s->t->ktid) s->t->ktid = (int)syscall(SYS_gettid); /* the main thread */
  if (s->state == ST_NEW) {
    s->state = ST_LIVE;
    rsan_rt_enter(); /* as in switch_to: no handler until the thread's turn */
    rsan_spin_unlock(&rsan_sched.lock);
    raise_flag(&s->arrived);
    wait_flag(&s->turn);
    rsan_rt_leave();
  } else {
    switch_to(s, decide());
  }
  return !s->timed_out;
}

static int point(int kind, const void *addr, int w, int block, int timed, rsan_thread *joinee) {
  if (RSAN_UNLIKELY(rsan_sched_flag.fork_server >= 0)) rsan_sched_fork_server(); /* sched_forkserver.c */
  if (__builtin_expect(rsan_scout_pending, 0)) rsan_sched_scout();
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : rsan_sched_self_locked();
  if (!s) {
    rsan_spin_unlock(&rsan_sched.lock);
    return 1;
  }
  s->joinee = joinee;
  rsan_sched_set_pending(s, kind, addr, w, block, timed);
  return rsan_sched_arrive_or_decide(s);
}

/* tests (rsan_test.h): the engine's scheduling points reported to a test driver instead */
void (*rsan_sched_test_hook)(int kind, const void *addr, int w);

void rsan_sched_point(int kind, const void *addr, int w) {
  if (rsan_sched_test_hook) {
    rsan_sched_test_hook(kind, addr, w);
    return;
  }
  if (kind == RSAN_SK_FENCE_SC) rsan_await_fence(); /* a rotated await unit may end here */
  point(kind, addr, w, RSAN_SB_NONE, 0, NULL);
}

int rsan_sched_reports_schedule(void) { return rsan_sched_on && mode != RSAN_SCHED_OS; }
int rsan_sched_dfs(void) { return mode == RSAN_SCHED_DFS; }

int rsan_sched_point_blocking(int kind, const void *addr, int w, int block, int timed) {
  if (!rsan_sched_on) return 1;
  return point(kind, addr, w, block, timed, NULL);
}

int rsan_sched_manages_current(void) {
  rsan_spin_lock(&rsan_sched.lock);
  int managed = !rsan_sched.finished && rsan_sched_self_locked() != NULL;
  rsan_spin_unlock(&rsan_sched.lock);
  return managed;
}

void rsan_sched_retry_after_write(const void *addr) {
  if (!rsan_sched_on) { /* handed over: the caller's retry loop polls under the OS scheduler */
    sched_yield();
    return;
  }
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : slot_of(rsan_thread_current());
  if (s && s->state == ST_LIVE) {
    s->retry = 1;
    s->retry_addr = (uintptr_t)addr;
  }
  rsan_spin_unlock(&rsan_sched.lock);
}

void rsan_sched_note_access(const void *addr, uint64_t value, int changed) {
  if (!rsan_sched_on) return;
  sched_thread *s = slot_of(rsan_thread_current()); /* only its own slot: no lock needed */
  if (!s || s->state != ST_LIVE) return;
  /* the re-reads of an await loop whose iterations end (its header state comes back): counted
   * by sched_await.c, not as a yield; a loop whose state never comes back (a counter) yields */
  if (s->aw_iterating && s->aw_can_park && rsan_sched_dfs()) return;
  uintptr_t a = (uintptr_t)addr;
  if (changed) {
    for (int k = 0; k < SPIN_SLOTS; k++) s->spin[k].addr = 0, s->spin[k].repeats = 0;
    s->yielding = 0;
    rsan_spin_lock(&rsan_sched.lock);
    wake_waiters(a, s);
    rsan_spin_unlock(&rsan_sched.lock);
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
  /* a marked loop's header passed since the previous read here (sched_await.c: counting) */
  slot->through_head = slot->heads != s->aw_heads;
  slot->heads = s->aw_heads;
  if (slot->repeats >= SPIN_REPEATS) {
    s->yielding = 1;
    s->yield_addr = a;
    s->yield_through_head = slot->through_head;
  }
}

/* A loop that re-reads a volatile word waits like one that re-reads an atomic: its loads are
 * scheduling points, so the spin is seen (it yields) instead of running until the stall watch
 * hands the run over; a volatile store wakes it as an atomic store would. Exploration (dfs)
 * leaves them out: its dependency relation covers atomics and synchronisation only, and a
 * step it cannot relate to the others would only multiply schedules. */
void __rsan_volatile_load(void *p, uint64_t value) {
  if (!__atomic_load_n(&rsan_sched_on, __ATOMIC_RELAXED) || mode == RSAN_SCHED_DFS) return;
  rsan_sched_point(RSAN_SK_LOAD, p, 0);
  rsan_sched_note_access(p, value, 0);
}

void __rsan_volatile_store(void *p) {
  if (!__atomic_load_n(&rsan_sched_on, __ATOMIC_RELAXED) || mode == RSAN_SCHED_DFS) return;
  rsan_sched_note_access(p, 0, 1);
}

/* ---- threads ---- */
void rsan_sched_spawn(void) {
  if (!rsan_sched_on) return;
  /* the child's tid is the next one: creation is serialised under the scheduler */
  point(RSAN_SK_SPAWN, (const void *)(uintptr_t)rsan_thread_next_tid(), 1, RSAN_SB_NONE, 0, NULL);
}

void rsan_sched_child_created(rsan_thread *child) {
  if (!rsan_sched_on || !child) return;
  rsan_spin_lock(&rsan_sched.lock);
  if (!rsan_sched.finished && slot_of(rsan_thread_current())) register_thread(child, ST_NEW);
  rsan_spin_unlock(&rsan_sched.lock);
}

void rsan_sched_spawn_done(rsan_thread *child, int ok) {
  if (!rsan_sched_on || !child) return;
  sched_thread *c = slot_of(child);
  if (!c) return;
  if (!ok) {
    rsan_spin_lock(&rsan_sched.lock);
    c->state = ST_EXITED;
    rsan_spin_unlock(&rsan_sched.lock);
    return;
  }
  __atomic_store_n(&rsan_sched_runner, c, __ATOMIC_RELAXED);
  wait_flag(&c->arrived);
  __atomic_store_n(&rsan_sched_runner, slot_of(rsan_thread_current()), __ATOMIC_RELAXED);
}

void rsan_sched_exit_point(void) {
  if (!rsan_sched_on) return;
  point(RSAN_SK_EXIT, NULL, 0, RSAN_SB_NONE, 0, NULL);
}

void rsan_sched_exit_done(void) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : slot_of(rsan_thread_current());
  if (!s || s->state != ST_LIVE) {
    rsan_spin_unlock(&rsan_sched.lock);
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

/* ---- start-up and exit ---- */
/* fork: the child has only the forking thread; it runs on without the scheduler (and
 * without writing to the parent's trace) */
static void sched_fork_child(void) {
  rsan_sched.finished = 1;
  rsan_sched_on = 0;
  rsan_sched_trace_forget();
  rsan_sched.lock.v = 0;
  rsan_closure_fork_child(); /* sched_closure.c */
}

/* The seed the reports name must reproduce the run on its own. A pct_steps option (the driver
 * passes the previous run's step count) is therefore folded into the seed's top byte, which
 * PCT reads under pct_steps=0 (sched_strategy.c), keeping the depth the seed already names. */
static void start_strategy(uint64_t s) {
  uint64_t steps = rsan_sched_flag.pct_steps;
  if (steps && (mode == RSAN_SCHED_AUTO || mode == RSAN_SCHED_PCT)) {
    unsigned d = (unsigned)(s >> 56) & 0xf;
    int depth = d == 15 ? RSAN_STRATEGY_RANDOM_WALK : d ? (int)d + 1 : rsan_sched_flag.pct_depth;
    s = rsan_strategy_seed_with(s, steps, depth);
    steps = 0;
  }
  seed = s;
  rsan_strategy_init(mode, seed, rsan_sched_flag.pct_depth, steps);
}

void rsan_sched_init(void) {
  mode = rsan_sched_flag.sched;
  if (mode == RSAN_SCHED_OS || rsan_test_mode) return;
  seed = rsan_sched_flag.seed;
  if (mode == RSAN_SCHED_AUTO && seed == 0) { /* a fresh seed: the reports name it */
    seed = rsan_sched_now_ns() ^ ((uint64_t)getpid() << 32);
    seed = (seed ^ (seed >> 31)) * 0x9e3779b97f4a7c15ull;
    seed >>= 8; /* top byte 0: PCT's parameters are the options' (sched_strategy.c) */
    if (!seed) seed = 1;
  }
  max_steps = rsan_sched_flag.max_steps;
  handover_steps = mode == RSAN_SCHED_AUTO ? rsan_sched_flag.handover_steps : 0;
  stall_ns = rsan_sched_flag.stall_ms * 1000000ull;
  start_strategy(seed);
  closure = mode == RSAN_SCHED_DFS && rsan_closure_wanted();
  if (rsan_sched_flag.schedule[0]) rsan_sched_load_schedule(rsan_sched_flag.schedule);
  if (rsan_sched_flag.trace_path[0])
    rsan_sched_trace_open(rsan_sched_flag.trace_path, rsan_sched_name(), seed);
  pthread_atfork(NULL, NULL, sched_fork_child);
  /* scouts only where the seed is fresh: an explicit seed names exactly one sample */
  rsan_scout_pending = mode == RSAN_SCHED_AUTO && rsan_sched_flag.seed == 0 && rsan_sched_flag.samples > 0 &&
                       !rsan_sched_flag.schedule[0] && !rsan_sched_flag.trace_path[0];
  rsan_sched_on = 1;
}

void rsan_sched_reseed(uint64_t s) {
  rsan_spin_lock(&rsan_sched.lock);
  start_strategy(s);
  for (int i = 0; i < rsan_sched.nthreads_max; i++)
    if (rsan_sched.threads[i]) rsan_strategy_thread_added(i); /* in creation order, as at the start */
  rsan_spin_unlock(&rsan_sched.lock);
}

void rsan_sched_process_exit(void) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : slot_of(rsan_thread_current());
  int others = 0;
  for (int i = 0; s && i < rsan_sched.nthreads_max; i++)
    others |= rsan_sched.threads[i] && rsan_sched.threads[i] != s &&
              rsan_sched.threads[i]->state != ST_EXITED;
  if (!s || s->state != ST_LIVE || !others) {
    rsan_spin_unlock(&rsan_sched.lock);
    return;
  }
  s->joinee = NULL;
  rsan_sched_set_pending(s, RSAN_SK_EXIT_PROCESS, NULL, 1, RSAN_SB_NONE, 0);
  exit_pending_since = rsan_sched.step;
  exit_pending_tid = s->tid;
  switch_to(s, decide());
}

void rsan_sched_at_exit(void) {
  if (rsan_scout_child) rsan_scout_end();
  if (!rsan_sched_on) return;
  rsan_spin_lock(&rsan_sched.lock);
  if (!rsan_sched.finished) {
    rsan_sched.finished = 1;
    rsan_sched_trace_end("exit", NULL);
  }
  rsan_spin_unlock(&rsan_sched.lock);
}
