/* The closure search's lean state (sched_closure_lean.c; docs/design/exploration.md §19): the
 * values at the focus location of every clock a replayed step reads or writes, as pairs
 * (timestamp, U timestamp), and the rules of the replayed steps on those values, in place of the
 * engine's records. */
#ifndef RSAN_SCHED_CLOSURE_LEAN_H
#define RSAN_SCHED_CLOSURE_LEAN_H

#include <stdint.h>

#include "rsan_sched_closure_internal.h"

enum { LEAN_TC, LEAN_TR, LEAN_TA, LEAN_TSC };  /* a thread's clocks: pair u * 4 + k */
enum { LEAN_W, LEAN_WSC, LEAN_MSC };           /* a location's: pair lean_loc_base + i * 3 + k */

/* the values: rsan_lean_v[2 * p] the timestamp of pair p, [2 * p + 1] its U timestamp; after
 * the locations' pairs (F's last, index naddrs) the focus location's stamp and U stamp */
extern uint64_t *rsan_lean_v;
extern int rsan_lean_loc_base;
static inline int lean_tp(int u, int k) { return u * 4 + k; }
static inline int lean_lp(int i, int k) { return rsan_lean_loc_base + i * 3 + k; }

/* Once per log: 1 when every step is one the lean rules know and its replay reads what the run
 * read (a static replay of the program's memory in the run's order), else the engine searches */
int rsan_lean_log(const step *steps, int n, int nthreads, const uintptr_t *addrs, int naddrs);
/* Per focus location (addrs[focus]): 1 when the lean state can search it: every clock exact there
 * at the root (its values start as the engine's answers) */
int rsan_lean_begin(int focus, rsan_thread *const *rec, rsan_loc *const *locs);
/* Step j's rules on the values; 1 when it is a check at the focus location that may report on
 * them (the search then leaves the focus to the engine) */
int rsan_lean_step(int j);
/* The key's hash of the live pairs (exact: each once, in two lanes; sched_closure_search.c
 * state_key), and the fences' commutation test on the values (fences_commute) */
void rsan_lean_hash(const int *live, int nlive, uint64_t *h, uint64_t *g);
int rsan_lean_fences_commute(int ta, int tb);
/* a branching state's values, pushed; restored; popped (innermost only, as the search nests) */
int rsan_lean_save(void);
void rsan_lean_restore(int depth);
void rsan_lean_free(int depth);

#endif /* RSAN_SCHED_CLOSURE_LEAN_H */
