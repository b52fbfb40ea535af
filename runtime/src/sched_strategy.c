/* Scheduling strategies (docs/scheduling.md): which enabled thread runs the next step.
 *
 *  - random: uniform among the enabled threads, from a seeded splitmix64 stream.
 *  - pct: probabilistic concurrency testing (Burckhardt et al., ASPLOS'10): every thread gets
 *    a random initial priority above pct_depth; pct_depth-1 change points are drawn uniformly
 *    among the first pct_steps steps; at change point i the thread that ran the previous step
 *    drops to priority i (below every initial one); the highest-priority enabled thread runs.
 *  - dfs: the default continuation (the previous thread while it is enabled, else the lowest
 *    tid); the driver explores by giving schedule prefixes.
 * Everything is a function of the seed and of the order of calls, which a controlled run
 * makes deterministic. Called by sched.c under its lock. */
#include <stdint.h>

#include "rsan_internal.h"
#include "rsan_sched.h"

#define PCT_MAX_DEPTH 64
#define PCT_DEFAULT_STEPS 1000 /* pct_steps=0, seed < 2^60: a small program's typical number of steps */
#define MAX_PRIO_TIDS 4096

static int mode;
static uint64_t rng_state;
static int pct_changes; /* number of change points (depth - 1) */
static uint64_t pct_change_step[PCT_MAX_DEPTH];
static uint64_t prio[MAX_PRIO_TIDS]; /* by tid; 0: not yet assigned */

/* splitmix64 (Steele, Lea, Flood 2014): a full-period 64-bit generator, one add per call */
static uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* uniform in [0, n) without modulo bias */
static uint64_t rng_below(uint64_t n) {
  if (n <= 1) return 0;
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do r = rng_next();
  while (r >= limit);
  return r % n;
}

/* The seed's top byte may name PCT's parameters, so that a scout (sched_scout.c) that chose
 * them names them with the seed alone: bits 60-63 h, under pct_steps=0, the horizon 2^(h+2)
 * steps (8 .. 131072); bits 56-59 d, the depth d+1 (2 .. 15), or, d = 15, a uniform random
 * choice at every step instead of PCT (as sched=random). 0 means the option (pct_steps=0:
 * PCT_DEFAULT_STEPS; pct_depth): every seed below 2^56, e.g. the driver's, is as before. */
uint64_t rsan_strategy_horizon(uint64_t seed) {
  unsigned h = (unsigned)(seed >> 60);
  return h ? 1ull << (h + 2) : PCT_DEFAULT_STEPS;
}

uint64_t rsan_strategy_seed_with(uint64_t seed, uint64_t steps, int depth) {
  unsigned h = 0, d = depth == RSAN_STRATEGY_RANDOM_WALK ? 15u
                      : depth > 1                        ? (unsigned)(depth > 15 ? 15 : depth) - 1
                                                         : 0;
  if (steps)
    for (h = 1; h < 15 && (1ull << (h + 2)) < steps; h++) {
    }
  return (seed & ~(0xffull << 56)) | ((uint64_t)h << 60) | ((uint64_t)d << 56);
}

void rsan_strategy_init(int m, uint64_t seed, int pct_depth, uint64_t pct_steps) {
  mode = m == RSAN_SCHED_AUTO ? RSAN_SCHED_PCT : m; /* auto is pct until the hand-over */
  rng_state = seed;
  unsigned d = (unsigned)(seed >> 56) & 0xf;
  if (d == 15 && mode == RSAN_SCHED_PCT) mode = RSAN_SCHED_RANDOM;
  else if (d) pct_depth = (int)d + 1;
  if (pct_depth < 1) pct_depth = 1;
  if (pct_depth > PCT_MAX_DEPTH) pct_depth = PCT_MAX_DEPTH;
  pct_changes = pct_depth - 1;
  uint64_t k = pct_steps ? pct_steps : rsan_strategy_horizon(seed);
  for (int i = 0; i < pct_changes; i++) pct_change_step[i] = 1 + rng_below(k);
  for (int i = 0; i < MAX_PRIO_TIDS; i++) prio[i] = 0;
}

void rsan_strategy_thread_added(int tid) {
  if (mode != RSAN_SCHED_PCT || tid < 0 || tid >= MAX_PRIO_TIDS) return;
  /* initial priorities lie above every change-point priority (1 .. depth-1) */
  prio[tid] = (uint64_t)pct_changes + 1 + (rng_next() >> 2);
}

int rsan_strategy_continue(const int *cand, int n, int last) {
  for (int i = 0; i < n; i++)
    if (cand[i] == last) return last;
  return cand[0];
}

static int pct_pick(const int *cand, int n, int last, uint64_t step) {
  for (int i = 0; i < pct_changes; i++)
    if (pct_change_step[i] == step && last >= 0 && last < MAX_PRIO_TIDS) prio[last] = (uint64_t)i + 1;
  int best = cand[0];
  for (int i = 1; i < n; i++) {
    int t = cand[i];
    uint64_t pt = t < MAX_PRIO_TIDS ? prio[t] : 0, pb = best < MAX_PRIO_TIDS ? prio[best] : 0;
    if (pt > pb) best = t; /* ties: the lower tid (cand is ascending) */
  }
  return best;
}

int rsan_strategy_pick(const int *cand, int n, int last, uint64_t step) {
  switch (mode) {
  case RSAN_SCHED_RANDOM: return cand[rng_below((uint64_t)n)];
  case RSAN_SCHED_PCT: return pct_pick(cand, n, last, step);
  default: return rsan_strategy_continue(cand, n, last);
  }
}
