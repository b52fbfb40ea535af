/* The controlled scheduler (docs/scheduling.md): what the engine and the interceptors call.
 *
 * With sched=random|pct|dfs exactly one managed thread runs at a time. Before each visible
 * operation the running thread calls a scheduling point naming its pending operation; the
 * strategy (sched_strategy.c) picks the thread whose pending operation runs next among the
 * enabled ones, and the baton (a futex word per thread, never an intercepted primitive) is
 * handed to it. Blocking primitives are modelled here (lock owners, cond waiters, barrier
 * rounds, semaphore counts, once states, joinees), so that a managed thread never calls a
 * blocking real primitive while it holds the baton: the interceptors call the non-blocking
 * real variant (trylock, trywait) only when the model says it succeeds.
 *
 * With sched=os, rsan_sched_on is 0 and every entry point below is skipped by its caller
 * (one predictable branch), so the OS-scheduled runtime pays nothing.
 *
 * Threads the scheduler does not manage (created while the runtime itself was running, or
 * past the thread limit, or any thread after the run ended) pass through every entry point.
 */
#ifndef RSAN_SCHED_H
#define RSAN_SCHED_H

#include <stdint.h>

#include "rsan_sync.h"

/* the pending operation's kind, as named in the trace (docs/scheduling.md "Trace file") */
enum rsan_sched_kind {
  RSAN_SK_LOAD = 0,
  RSAN_SK_STORE,
  RSAN_SK_RMW,
  RSAN_SK_FENCE,
  RSAN_SK_FENCE_SC,
  RSAN_SK_SPAWN,
  RSAN_SK_JOIN,
  RSAN_SK_EXIT,
  RSAN_SK_LOCK,
  RSAN_SK_UNLOCK,
  RSAN_SK_SYNC_ACQUIRE,
  RSAN_SK_SYNC_RELEASE,
  RSAN_SK_WAIT,
  RSAN_SK_EXIT_PROCESS, /* exit() / the return from main while other managed threads live */
  RSAN_SK_AWAIT,        /* an await loop's thread waits for a write to what it read (sched_await.c) */
};

/* what a pending operation waits for (its enabledness) */
enum rsan_sched_block {
  RSAN_SB_NONE = 0,
  RSAN_SB_MUTEX,   /* lock: free, or held by the caller (recursive mutexes) */
  RSAN_SB_RDLOCK,  /* no writer */
  RSAN_SB_WRLOCK,  /* no writer, no reader */
  RSAN_SB_SEM,     /* sem_getvalue > 0 */
  RSAN_SB_ONCE,    /* no other thread inside the once routine */
};

/* 1 under sched=auto|random|pct|dfs once the runtime is initialised (not in test mode), until
 * the run ends or the scheduler hands the threads over to the OS scheduler (then 0 again). */
extern int rsan_sched_on __attribute__((visibility("hidden"))); /* (rsan_internal.h RSAN_HIDDEN) */
/* A thread the scheduler cannot see may wake a blocked one (a SIGEV_THREAD timer's
 * notification thread, created by glibc itself): when no managed thread can run, the run is
 * handed over to the OS scheduler instead of reported as a deadlock (unless hand-overs are
 * off: exploration). Set by the timer interceptor, never cleared. (Signal handlers run in
 * managed threads, at runtime boundaries: they do not count.) */
extern int rsan_sched_hidden_wakers;

/* For the interceptors, which may run before anything initialised the runtime (a mutex or
 * a thread created before the first atomic): initialises it, then tells whether the
 * scheduler controls the run. */
extern int rsan_inited __attribute__((visibility("hidden")));
void rsan_init_slow(void);
static inline int rsan_sched_active(void) {
  if (__builtin_expect(!__atomic_load_n(&rsan_inited, __ATOMIC_ACQUIRE), 0)) rsan_init_slow();
  return rsan_sched_on;
}

#define RSAN_SCHED_POINT(kind, addr, w) \
  do { \
    if (__builtin_expect(rsan_sched_on, 0)) rsan_sched_point((kind), (addr), (w)); \
  } while (0)

/* The scheduling point of a wait attempt for ((*addr & m) == v) != ne (atomic.c op_wait_i): under
 * sched=dfs with sched_wait_value=1 the thread is enabled only while memory holds a value that
 * lets the attempt through, so that it never fails (docs/design/exploration.md §23); elsewhere
 * the plain point RSAN_SK_WAIT. */
void rsan_sched_wait_point(const void *addr, uint64_t v, uint64_t m, int size, int ne);
#define RSAN_SCHED_WAIT_POINT(addr, v, m, size, ne) \
  do { \
    if (__builtin_expect(rsan_sched_on, 0)) rsan_sched_wait_point((addr), (v), (m), (size), (ne)); \
  } while (0)

/* start-up (init.c rsan_init_slow, after the options): opens the trace, reads the
 * schedule file (a bad one: one line on stderr and exit 86, like a bad option) */
void rsan_sched_init(void);
/* at exit (report.c, before the exit status is decided): the trace's end line */
void rsan_sched_at_exit(void);
/* at exit (init.c's atexit handler, before the reports' summary): while other managed threads
 * still live, the end of the process is a scheduling point (kind exit_process), so that their
 * operations can be ordered around it (docs/scheduling.md "Process exit"). */
void rsan_sched_process_exit(void);

/* 1 when the calling thread is managed (the first thread to ask becomes the one that runs);
 * threads that are not use the real blocking primitives. */
int rsan_sched_manages_current(void);
/* A scheduling point of the calling thread before an operation that cannot block. */
void rsan_sched_point(int kind, const void *addr, int w);
/* A scheduling point before an operation that may block (block: enum rsan_sched_block on
 * addr). timed: the operation may time out; it is then also enabled when no other thread is.
 * Returns 1 when the operation can run now, 0 when it timed out. */
int rsan_sched_point_blocking(int kind, const void *addr, int w, int block, int timed);
/* The controlled run was handed over to the OS scheduler (a stall or handover_steps):
 * the calling thread's blocking operation must now use the real primitive. */
int rsan_sched_handed_over(void);
/* The operation chosen at the last point found addr busy after all (its real try-variant
 * failed, or a wait / BCAS attempt / recognised spin load read another value): the thread
 * is disabled until another thread writes addr's 8-byte word. */
void rsan_sched_retry_after_write(const void *addr);
/* After an atomic access of the calling thread at addr that observed `value` and changed
 * nothing (changed == 0: a load, a failed CAS, an RMW leaving memory as it was), or that
 * changed memory (changed == 1: wakes the threads waiting for a write there). Unrecognised
 * spin loops (the same location read 3 times with the same result and no write of the
 * thread's own in between) make the thread yield until another thread writes there. */
void rsan_sched_note_access(const void *addr, uint64_t value, int changed);
/* tests (rsan_test.h): when set, rsan_sched_point only calls it (rsan_sched_on is then 1) */
extern void (*rsan_sched_test_hook)(int kind, const void *addr, int w);
/* 1 when reports carry "step" and "schedule" (a controlled run, not the test hook) */
int rsan_sched_reports_schedule(void);
/* the step of the current decision (reports: "step"), and the JSON "schedule" object */
uint64_t rsan_sched_step(void);
const char *rsan_sched_name(void);
uint64_t rsan_sched_seed(void);

/* ---- threads (intercept_thread.c) ---- */
/* Before the real create: the parent's spawn point. */
void rsan_sched_spawn(void);
/* After rsan_thread_create: the child is managed (not yet running). */
void rsan_sched_child_created(rsan_thread *child);
/* After the real create: ok == 0 (it failed, the child never runs) or 1 (waits until the
 * child reached its first scheduling point, so that one thread runs at a time). */
void rsan_sched_spawn_done(rsan_thread *child, int ok);
/* The calling thread's exit point (before rsan_thread_finish) ... */
void rsan_sched_exit_point(void);
/* ... and after it: the thread is gone for the scheduler, the baton moves on. */
void rsan_sched_exit_done(void);
/* The join point: enabled once the joinee exited (NULL: unknown joinee, always enabled).
 * how: RSAN_JOIN_WAIT; RSAN_JOIN_TIMED (see rsan_sched_point_blocking); RSAN_JOIN_TRY
 * (always enabled). Returns 1 when it may go on, 0 on time-out. */
enum { RSAN_JOIN_WAIT = 0, RSAN_JOIN_TIMED = 1, RSAN_JOIN_TRY = 2 };
int rsan_sched_join(rsan_thread *joinee, int how);
/* 1 when the scheduler saw the joinee exit (tryjoin). */
int rsan_sched_thread_exited(rsan_thread *joinee);

/* ---- lock model (intercept_sync.c) ---- */
/* The real try-variant succeeded: the calling thread holds addr (write: exclusive). */
void rsan_sched_lock_acquired(const void *addr, int write);
/* The calling thread released addr (mutex / spin / rwlock unlock). */
void rsan_sched_lock_released(const void *addr);

/* ---- condition variables ---- */
/* Called right after the mutex was released for a wait on c: the thread waits for a
 * signal. Returns 1 signalled, 0 timed out (timed waits, when nothing else is enabled). */
int rsan_sched_cond_wait(const void *c, int timed);
/* After the signal / broadcast point on c: wakes the oldest waiter, or all. */
void rsan_sched_cond_signal(const void *c, int all);
void rsan_sched_cancel(rsan_thread *t); /* pthread_cancel: a condition wait of t ends */

/* ---- barriers ---- */
void rsan_sched_barrier_init(const void *b, unsigned count);
/* After the arrival point (RSAN_SK_SYNC_RELEASE on b) and the entry's model: arrives, and
 * unless the round is complete waits until it is; returns 1 for the thread that completed
 * the round (PTHREAD_BARRIER_SERIAL_THREAD), else 0. fallback_count: the barrier's count
 * when its init was not seen. */
int rsan_sched_barrier_wait(const void *b, unsigned fallback_count);
/* (rsan_sched_barrier_wait returns -1 when the run was handed over to the OS scheduler before
 * the round completed: the caller then waits in the real barrier.) */

/* ---- once ---- */
/* The once point (enabled unless another thread runs the routine), before the real once;
 * done: the routine returned (or the real once returned). */
void rsan_sched_once_enter(const void *o);
void rsan_sched_once_done(const void *o);


/* ---- strategies (sched_strategy.c), called by sched.c under its lock ---- */
/* AUTO (the default): PCT from a seed (seed=0: a fresh one), handing the threads over to the
 * OS scheduler after handover_steps scheduling points (docs/scheduling.md "Hand-over"). */
enum rsan_sched_mode {
  RSAN_SCHED_OS = 0,
  RSAN_SCHED_RANDOM,
  RSAN_SCHED_PCT,
  RSAN_SCHED_DFS,
  RSAN_SCHED_AUTO
};
void rsan_strategy_init(int mode, uint64_t seed, int pct_depth, uint64_t pct_steps);
/* PCT's horizon under pct_steps=0: named by the seed's top 4 bits (0: 1000 steps) */
uint64_t rsan_strategy_horizon(uint64_t seed);
/* seed with its top byte naming the smallest horizon >= steps (0: the option's) and the depth
 * (0 or 1: the option's; RSAN_STRATEGY_RANDOM_WALK: random choices instead of PCT)
 * (sched_scout.c) */
#define RSAN_STRATEGY_RANDOM_WALK (-1)
uint64_t rsan_strategy_seed_with(uint64_t seed, uint64_t steps, int depth);
/* a new managed thread (in creation order: deterministic) */
void rsan_strategy_thread_added(int tid);
/* Picks one of the n candidate tids (ascending) for step `step` (0-based); last: the tid
 * that ran the previous step (-1 at the first). */
int rsan_strategy_pick(const int *cand, int n, int last, uint64_t step);
/* the default continuation (docs/scheduling.md): last if it is a candidate, else the lowest */
int rsan_strategy_continue(const int *cand, int n, int last);
#endif /* RSAN_SCHED_H */
