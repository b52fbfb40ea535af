/* The controlled scheduler's internals, shared by its files (docs/scheduling.md):
 *   sched.c          the baton, enabledness, the decision, scheduling points, threads, start-up
 *   sched_sync.c     the models of blocking primitives (locks, cond, barriers, once, semaphores)
 *   sched_trace.c    the trace file
 *   sched_schedule.c the schedule file: its prefix and sleep set, and the dependency relation
 *   sched_strategy.c the strategies (rsan_sched.h)
 *   sched_stall.c    the stall watch: when a waiting thread hands the run over
 *   sched_wait.c     waits enabled by memory (sched=dfs: a wait attempt runs only where it succeeds)
 * Everything here runs under rsan_sched.lock unless said otherwise. */
#ifndef RSAN_SCHED_INTERNAL_H
#define RSAN_SCHED_INTERNAL_H

#include <stdint.h>
#include <time.h>

#include "rsan_internal.h"
#include "rsan_sched.h"

#define MAX_THREADS 4096
#define SPIN_REPEATS 3 /* same location, same value, this many reads in a row: a spin loop */
#define SPIN_SLOTS 4
/* reads an await unit may make and still count as a repeat (sched_await.c: its buffers grow to it) */
#define AW_READS_MAX (1 << 16)

enum { ST_NEW = 0, ST_LIVE, ST_EXITED };
enum { LEVEL_ENABLED = 0, LEVEL_YIELDED, LEVEL_TIMEOUT, LEVEL_NONE };
/* what a pending operation waits for, beyond enum rsan_sched_block */
enum { SB_JOIN = 100, SB_COND, SB_BARRIER, SB_AWAIT, SB_VALUE };

typedef struct spin_slot {
  uintptr_t addr;
  uint64_t value;
  int repeats;
  uint64_t heads;   /* the thread's aw_heads at its previous read here */
  int through_head; /* its last re-read here came after an arrival at its marked loop's header */
} spin_slot;

/* a read of an await unit: its address and the write generation of its 8-byte word */
typedef struct aw_read {
  uintptr_t addr;
  uint64_t gen;
} aw_read;

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
  int clean;        /* an SC fence that is clean (sched_fence.c) */
  int block;        /* enum rsan_sched_block, or one of SB_* */
  int timed;
  int timed_out;    /* the last blocking point was chosen as a time-out */
  rsan_thread *joinee;
  /* SB_VALUE (sched_wait.c): a wait enabled only while ((*addr & wv_m) == wv_v) != wv_ne, re-read
   * (wv_stale) after another thread's step that wrote its word */
  uint64_t wv_v, wv_m;
  int wv_size, wv_ne, wv_holds, wv_stale;
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
  int yield_through_head; /* the re-read that made it yield passed the marked loop's header */
  /* await loops (sched_await.c): the loop instance, its header state, the iteration's reads
   * (8-byte words and their write generations) and the previous iteration's */
  uint64_t aw_loop;
  uint64_t aw_state[3];
  int aw_n, aw_prev_n; /* -1: more reads than AW_READS_MAX (never a repeat) */
  int aw_pure, aw_steps, aw_first_fence, aw_any_fence, aw_repeats;
  int aw_iterating; /* an iteration of the instance ended: its re-reads are counted here, not as yields */
  int aw_can_park;  /* ... and (sched_await < 0, no rotation) the last one could repeat, else yields */
  uint64_t aw_heads; /* arrivals from inside at the header of the thread's marked loop */
  int aw_blocked;    /* sched_await < 0: blocked for ever after a failed iteration */
  int aw_imports;    /* the iteration's loads imported into Tsc (sched_await=-2) */
  int aw_bounded;    /* the loop's exits depend on its header values (passes/awaitloops.py) */
  /* the unit compared for repeats is an iteration, rotated to start at an SC fence when the
   * loop's first step is a load (docs/design/exploration.md §10) */
  int aw_it_steps, aw_it_first_fence, aw_it_any_fence; /* the header iteration's shape so far */
  int aw_rotating;         /* the unit ends at this iteration's first SC fence, not at its header */
  int aw_mark, aw_prev_mark; /* reads of the unit before its last iteration start (-1: none) */
  aw_read *aw_cur, *aw_prev; /* the unit's reads, the previous unit's (mapped as they grow) */
  int aw_cur_cap, aw_prev_cap;
} sched_thread;

/* the state every scheduler file reads (the rest is private to its file) */
struct rsan_sched_state {
  rsan_spin lock;
  sched_thread *threads[MAX_THREADS]; /* by tid */
  int nthreads_max;                   /* 1 + the highest managed tid */
  int finished;     /* the run ended (exit, deadlock, bound): everything passes through */
  int handed_over;  /* the OS scheduler runs the threads from now on */
  uint64_t step;    /* decisions taken so far (read without the lock by stalled waiters) */
  int64_t diverged; /* the step at which the run left its schedule prefix, or -1 */
};
extern struct rsan_sched_state rsan_sched;

static inline sched_thread *slot_of(rsan_thread *t) { return t ? (sched_thread *)t->sched : NULL; }

/* 1 when s's pending operation is a clean SC fence: the thread's Ta and Tsc hold nothing its
 * previous SC fence did not leave there (docs/scheduling.md "SC fences: when two commute";
 * sched_fence.c) */
int rsan_sched_fence_clean(const sched_thread *s);

/* the address a trace names for s's pending operation (a join names the joinee's tid; a
 * clean SC fence is named 0x1, RSAN_CLEAN_FENCE_ADDR) */
#define RSAN_CLEAN_FENCE_ADDR 1
static inline uintptr_t op_addr(const sched_thread *s) {
  if (s->kind == RSAN_SK_FENCE_SC) return rsan_sched_fence_clean(s) ? RSAN_CLEAN_FENCE_ADDR : 0;
  if (s->kind != RSAN_SK_JOIN) return s->addr;
  return s->joinee ? (uintptr_t)rsan_thread_tid(s->joinee) : 0;
}

/* ---- sched.c ---- */
int rsan_sched_level_of(const sched_thread *s);
int rsan_sched_dfs(void); /* sched=dfs */
/* The calling thread's slot; the first thread at a scheduling point becomes the holder.
 * NULL: not managed (pass through). */
sched_thread *rsan_sched_self_locked(void);
void rsan_sched_set_pending(sched_thread *s, int kind, const void *addr, int w, int block, int timed);
/* Takes the next decision (a new thread first tells its parent it arrived) and waits for the
 * caller's turn; releases the lock. Returns 0 when the point was chosen as a time-out. */
int rsan_sched_arrive_or_decide(sched_thread *s);

/* ---- sched_await.c ---- */
/* decide(): c's step was chosen (an await iteration's read or fence; a write's generation) */
void rsan_await_chosen(sched_thread *c);
/* the await step of s is enabled: a word its last iteration read was written since */
int rsan_await_enabled(const sched_thread *s);
/* the trace's address of an await step: "0xA+0xB..." (the words read, every one of them),
 * handed to emit in pieces */
void rsan_await_format(const sched_thread *s, void (*emit)(const char *, size_t));
/* 1 when op (kind, addr, w) of another thread writes a word s's await step waits on */
int rsan_await_woken_by(const sched_thread *s, int kind, uintptr_t addr, int w);
/* 1 when s yields inside a marked loop whose header state has not come back since the instance
 * started, and the re-read that made it yield came after an arrival at that header (the loop
 * that spins is the marked one, not a loop inside it): a counter, whose repeats are not
 * equivalent; the trace lists it under "counting" */
int rsan_await_counting(const sched_thread *s);
/* sched_await=-1: a thread blocked for ever after a failed iteration has a word it read written
 * since (the run is not a deadlock: the reversal of that read with the write runs it on) */
int rsan_await_blocked_news(void);
/* rsan_sched_point, before an SC fence of the calling thread: the end of a rotated unit (§10),
 * where the thread may take its await step */
void rsan_await_fence(void);

/* ---- sched_wait.c ---- */
/* s's pending wait (SB_VALUE) would read a value that lets it through (memory re-read only when a
 * write to its word was chosen since the last look) */
int rsan_sched_wait_holds(sched_thread *s);

/* ---- sched_sync.c ---- */
/* enabledness of a pending operation blocked on a modelled primitive (s->block is a lock,
 * semaphore, once or barrier kind) */
int rsan_sched_model_enabled(const sched_thread *s);

/* ---- sched_trace.c ---- */
extern const char *const rsan_sched_kind_names[];
extern const int rsan_sched_nkinds;
void rsan_sched_trace_open(const char *path_template, const char *sched_name, uint64_t seed);
void rsan_sched_trace_step(uint64_t i, int tid, const int *cand, int n);
/* the last line ("exit", "deadlock", "bound", "handover" with a reason); closes the file */
void rsan_sched_trace_end(const char *how, const char *why);
/* fork child: the file is the parent's */
void rsan_sched_trace_forget(void);

/* ---- sched_schedule.c ---- */
/* bad input: one line, exit 86 */
void rsan_sched_bad_input(const char *msg, const char *path) __attribute__((noreturn));
void rsan_sched_load_schedule(const char *path);
void rsan_sched_load_schedule_text(const char *buf, size_t len); /* a schedule file's text */
/* the longest schedule text a fork server's "sched N" request carries (docs/scheduling.md) */
#define RSAN_FORK_SERVER_SCHEDULE_MAX 65536
/* the tid the schedule prefix names for `step`, or -1 past its end */
int rsan_sched_prefix_at(uint64_t step);
/* the first step whose line the trace writes (the schedule's "# trace_from: N", else 0) */
uint64_t rsan_sched_trace_from(void);
/* 1 when a sleep set applies at `step` (it does after the prefix) */
int rsan_sched_sleep_applies(uint64_t step);
int rsan_sched_drop_sleepers(int *cand, int n);
int rsan_sched_asleep(int tid);
void rsan_sched_wake_sleepers(const sched_thread *c);
/* docs/scheduling.md "Trace file": two pending operations (kind, op_addr, w) are dependent */
int rsan_sched_ops_dependent(int ta, int ka, uintptr_t aa, int wa, int tb, int kb, uintptr_t ab, int wb);

/* forget the schedule prefix and the sleep set (a fork-server child loads its own) */
void rsan_sched_forget_schedule(void);

/* ---- sched_closure.c (sched_closure=1: the F-order closure) ---- */
/* 1 when this run searches its closure (sched_closure=1, not a scout, no explain log) */
int rsan_closure_wanted(void);
/* decide(): the step chosen; the first SC fence step forks the snapshot */
void rsan_closure_step(const sched_thread *c);
/* the trace's end line: the closure's field (', "closure": {...}') through emit */
void rsan_closure_finish(void (*emit)(const char *, size_t));
/* a process the program forked (sched.c's fork handler): no part of the run's closure */
void rsan_closure_fork_child(void);

/* ---- sched_forkserver.c ---- */
/* At the first scheduling point under fork_server=FD: serves runs until the driver closes
 * the socket (then exits); returns in each forked child, which runs one schedule. */
void rsan_sched_fork_server(void);

/* ---- sched.c: scouting ---- */
/* The run from now on is the one a start with seed=s gives (no decision taken yet). */
void rsan_sched_reseed(uint64_t s);
/* a decision met more than one candidate (scouts report it) */
extern int rsan_sched_had_choice;

/* ---- sched_scout.c ---- */
/* 1 until the first scheduling point of a run that may scout (sched=auto, fresh seed) */
extern int rsan_scout_pending;
/* A scout's run ends after this many steps: litmus-sized programs take fewer than 100, and a
 * long program's scouts cost little each (the run itself is controlled up to handover_steps). */
#define RSAN_SCOUT_STEPS 256
/* 1 in a scout: its run ends at the hand-over, a deadlock, the bound or the exit */
extern int rsan_scout_child;
/* At the first scheduling point: the scouts, then the re-seed to the first that reported. */
void rsan_sched_scout(void);
/* in a scout: the operation chosen for a step (conflicts between threads) */
void rsan_scout_note(int tid, int kind, uintptr_t addr, int w);
/* a scout's end: its verdict to the parent, then exit */
void rsan_scout_end(void) __attribute__((noreturn));

/* ---- sched_stall.c: the stall watch ---- */
/* the thread expected to make progress: the holder from the moment it is chosen, or the new
 * thread its creator waits for */
extern sched_thread *rsan_sched_runner;
typedef struct rsan_stall_watch {
  uint64_t step;    /* the step counter when the watch (re)started */
  uint64_t last;    /* wall time of the previous sample */
  uint64_t charged; /* time charged to the runner since then */
  uint64_t cpu;     /* the runner's CPU time at the previous sample */
  int ktid;         /* the runner sampled then (0: none yet) */
} rsan_stall_watch;
/* one 20 ms slice of a waiting thread: returns 1 while it is the watcher; hands over (under
 * the lock) once the runner was charged stall_ns without a step */
int rsan_sched_stall_check(rsan_stall_watch *sw, int watching, uint64_t stall_ns);
void rsan_sched_stall_unwatch(void); /* the watcher stops waiting */
/* under lock: the rest of the run belongs to the OS scheduler (sched.c) */
void rsan_sched_handover(const char *why);

static inline uint64_t rsan_sched_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* RSAN_SCHED_INTERNAL_H */
