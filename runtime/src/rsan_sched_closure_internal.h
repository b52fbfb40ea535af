/* What the two sides of the F-order closure share (docs/design/exploration.md §2): the log's
 * step, the memory the snapshot's process tree shares, and the snapshot's entry point.
 * sched_closure.c is the run's side (the log, the snapshot's process, the wait), sched_closure_search.c
 * the snapshot's (the replay and the search over fence orders). */
#ifndef RSAN_SCHED_CLOSURE_INTERNAL_H
#define RSAN_SCHED_CLOSURE_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "rsan_internal.h"

#define MAX_LOG 4096       /* steps after the snapshot */
#define MAX_FOUND 16       /* report interleavings kept */
#define KEY_SLOTS (1u << 18) /* hash set of closure keys (2 MiB, and 2 MiB of sleep masks) */
#define MAX_STATES 100000  /* branching states per closure: beyond, incomplete */

enum { EV_NONE = 0, EV_ACCESS, EV_FENCE, EV_SYNC_ACQ, EV_SYNC_ACQ_LOAD, EV_SYNC_REL, EV_JOIN, EV_SPAWN };

typedef struct step {
  rsan_thread *t; /* the run's record: valid in the snapshot for threads that existed then */
  int tid, kind, w;
  uintptr_t addr; /* as op_addr names it: a clean SC fence 0x1 */
  int ev, nev;    /* the engine event of the step (EV_*), how many */
  int op, rmw_op, order, size, has_read, has_write;
  uintptr_t at; /* the event's address (access, sync) */
  int other; /* the joinee's tid (join) or the new thread's (spawn), else -1 */
  uint64_t read, written, site;
  int wait_block; /* a WAIT step inside op_wait: its block mode (1 blocking, 2 spin, 3 spin_ne) */
  uint64_t wait_v;
  uint64_t loc_id; /* the location record's id (an access): a record made again is another state */
} step;

/* shared with the snapshot's process tree */
typedef struct shared {
  uint64_t states;
  uint64_t forks, pruned; /* children forked; branching states already seen */
  uint64_t lean, lean_back; /* focus searches on the lean state; of them handed back to the engine */
  int incomplete; /* 1: budget, 2: diverged, 3: unsupported step (4: timeout, the run's side) */
  int nfound;
  uint64_t found_key[MAX_FOUND];
  int found_len[MAX_FOUND];
  uint16_t found[MAX_FOUND][MAX_LOG];
  uint64_t keys[KEY_SLOTS];
  uint64_t masks[KEY_SLOTS]; /* the sleep set of the key's visits (threads, as bits) */
} shared;
extern shared *rsan_closure_sh; /* mapped by the run at its snapshot (sched_closure.c) */

/* Only accesses make robustness checks. A write raises its location's stamp, and a non-RMW
 * one its U stamp too (atomic.c, sync.c: a lock's acquisition and release count as writes) */
static inline int checks(const step *s) { return s->ev == EV_ACCESS; }
static inline int writes_stamp(const step *x) {
  return (x->ev == EV_ACCESS && x->has_write) || x->ev == EV_SYNC_ACQ || x->ev == EV_SYNC_REL;
}
static inline int writes_stamp_u(const step *x) {
  return (x->ev == EV_ACCESS && x->has_write && x->op == RSAN_OP_STORE) || x->ev == EV_SYNC_REL;
}

/* the closure key's mixing step (sched_closure_search.c, sched_closure_lean.c) */
static inline uint64_t rsan_closure_mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/* The static pass (sched_closure_dead.c). need[j * nthreads + u]: how many steps of thread u
 * precede step j in every interleaving of the run's coarse class (its coarse predecessors) */
void rsan_closure_coarse_need(const step *steps, int n, int nthreads, const int *index_in_thread, int *need);
/* the stamps of step j's location just before it (both kinds), from the log and the records at
 * the root */
void rsan_closure_stamps_before(const step *steps, int n, const uintptr_t *addrs, int naddrs,
                                uint64_t *stamp_before, uint64_t *stampu_before);
/* known_before[j]: step j's check is dead in every interleaving of the run's coarse class
 * (need: the coarse predecessors, steps x threads; sched_closure_dead.c) */
void rsan_closure_dead_checks(const step *steps, int n, int nthreads, const int *need,
                              const int *index_in_thread, const int *first_of, const int *offset,
                              char *known_before);

/* the snapshot process: read the log from fd, search, exit; done_w held to its end, alive_r
 * the read end of a pipe only the run writes to, at whose end (the run is gone) the search
 * ends (sched_closure_search.c) */
void rsan_closure_snapshot_main(int fd, int done_w, int alive_r) __attribute__((noreturn));
/* Replay one logged step as its thread (rec: the threads' records by tid): 0, or why the
 * closure is incomplete (2: the step read another value, 3: not replayable) (sched_closure_replay.c) */
int rsan_closure_replay(const step *s, rsan_thread **rec, int nthreads);
/* waitpid, retried on EINTR */
int rsan_closure_wait_child(pid_t pid, int *st, int flags);
/* sched_closure_keys.c: whether a state (key, sleep set) must be explored (the visited set) */
int rsan_closure_key_visit(uint64_t key, uint64_t sleep, int in_process);

#endif /* RSAN_SCHED_CLOSURE_INTERNAL_H */
