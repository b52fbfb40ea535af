/* A closure state saved and restored in the search process (sched_closure_state.c): the records
 * a replayed step can change, so that the search explores one fence order after another
 * without a fork per branching state. */
#ifndef RSAN_SCHED_CLOSURE_STATE_H
#define RSAN_SCHED_CLOSURE_STATE_H

#include "rsan_engine.h"

typedef struct rsan_cstate rsan_cstate;

/* A state of the threads' and locations' records and of the program's memory at each location
 * (sizes[i] bytes at locs[i]->addr; 0: none), pushed as the innermost: its copies are taken
 * lazily, each record's at its first rsan_cstate_touch after the save. The arrays must live as
 * long as the state. Only the innermost state is restored or freed. */
rsan_cstate *rsan_cstate_save(rsan_thread *const *threads, int nt, rsan_loc *const *locs, const int *sizes,
                              int nl);
/* The records and memory as they were at the save; the report dedup table emptied */
void rsan_cstate_restore(const rsan_cstate *s);
void rsan_cstate_free(rsan_cstate *s);
/* The caller names, before each step, the records (by their index in the arrays it saves, the
 * same at every save, nt and nl of them) that the step may change: each is copied into the
 * innermost state the first time after its save, and only the copied ones are restored */
void rsan_cstate_track(int nt, int nl);
void rsan_cstate_touch(int thread_i, int loc_i); /* -1: none */

#endif /* RSAN_SCHED_CLOSURE_STATE_H */
