/* The floor of the race detector's slots (docs/design/races.md §3): F[u] = min over live
 * threads v of C_v[u]. A cell (u, e) with e <= F[u] happens before every access of every live
 * thread, and of every later one (a thread starts from its live creator's C), so it can never
 * again be half of a race (C11 [intro.races]: a race needs two accesses unordered by
 * happens-before): a full granule drops such a cell before it takes overflow cells.
 *
 * F only grows: a live thread's C only grows, a joined thread leaves the minimum (its joiner's
 * C took its clock), a new thread starts from its creator's C, a reused slot continues its
 * previous owner's epochs (thread.c). So a value of F computed at any time is a lower bound of
 * F ever after: floor[] caches the highest one computed per slot, and the cold path that needs
 * a higher one recomputes it, at most once per epoch of the asking thread. The limit: a thread
 * the runtime did not see created (a root thread other than the first: rsan_thread_current of
 * a thread no interceptor announced) starts from an empty clock, so it is unordered with
 * every earlier access; a cell dropped before it appeared can hide a race with it (a miss,
 * never a false report: a dropped cell reports nothing). */
#include "rsan_race.h"

static uint64_t floor_of[MAX_TID + 1]; /* per slot: a lower bound of F (0: none known) */
static uint64_t floor_gen;             /* rsan_thread_generation the values belong to */
static uint32_t floor_hi;              /* slots < floor_hi may be non-zero */
static rsan_spin floor_lock;           /* the reset of a new generation */
/* the thread's epoch and slot (race_cur) and generation of its last recomputation */
static __thread uint64_t tried_cur, tried_gen;

/* A test reset starts a new generation of threads and clocks: the old bounds are void. */
static void check_generation(void) {
  uint64_t gen = __atomic_load_n(&rsan_thread_generation, __ATOMIC_RELAXED);
  if (RSAN_LIKELY(__atomic_load_n(&floor_gen, __ATOMIC_ACQUIRE) == gen)) return;
  rsan_spin_lock(&floor_lock);
  if (floor_gen != gen) {
    for (uint32_t u = 0; u < floor_hi; u++) __atomic_store_n(&floor_of[u], 0, __ATOMIC_RELAXED);
    floor_hi = 0;
    __atomic_store_n(&floor_gen, gen, __ATOMIC_RELEASE);
  }
  rsan_spin_unlock(&floor_lock);
}

typedef struct walk {
  int n;
  uint32_t slot[16];
  uint64_t min[16];
} walk;

static void visit(rsan_thread *v, void *arg) {
  walk *w = arg;
  if (!__atomic_load_n(&v->C.n, __ATOMIC_ACQUIRE)) return; /* joined: its clock is released */
  for (int i = 0; i < w->n; i++) {
    uint64_t e = rsan_vc_read(&v->C, w->slot[i]);
    if (e < w->min[i]) w->min[i] = e;
  }
}

/* F[u] now, for each slot of w (under the thread list's lock and the clocks' lock: no record
 * and no clock array is freed meanwhile); a clock with no entries is a joined thread's (a live
 * thread's holds at least its own slot). */
static void recompute(walk *w) {
  for (int i = 0; i < w->n; i++) w->min[i] = UINT64_MAX;
  rsan_vc_read_lock();
  rsan_thread_for_each(visit, w);
  rsan_vc_read_unlock();
  for (int i = 0; i < w->n; i++) {
    if (w->min[i] == UINT64_MAX) continue; /* no live thread (cannot happen: the caller lives) */
    uint64_t old = __atomic_load_n(&floor_of[w->slot[i]], __ATOMIC_RELAXED);
    while (old < w->min[i] && !__atomic_compare_exchange_n(&floor_of[w->slot[i]], &old, w->min[i], 1,
                                                           __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
}

static int pick(const uint64_t *seen, int n) {
  for (int i = 0; i < n; i++) {
    uint64_t c = seen[i];
    uint32_t u = w_tid(c);
    if (c && u != MARK_TID && w_clock(c) <= __atomic_load_n(&floor_of[u], __ATOMIC_RELAXED)) return i;
  }
  return -1;
}

/* rsan_race.h */
int rsan_race_floor_pick(rsan_thread *t, const uint64_t *seen, int n) {
  check_generation();
  int k = pick(seen, n);
  uint64_t gen = __atomic_load_n(&floor_gen, __ATOMIC_RELAXED);
  if (k >= 0 || (tried_cur == t->race_cur && tried_gen == gen)) return k;
  tried_cur = t->race_cur;
  tried_gen = gen;
  walk w;
  w.n = 0;
  for (int i = 0; i < n; i++) { /* the distinct slots of the cells */
    uint32_t u = w_tid(seen[i]);
    if (!seen[i] || u == MARK_TID) continue;
    int j = 0;
    while (j < w.n && w.slot[j] != u) j++;
    if (j == w.n && w.n < 16) w.slot[w.n++] = u;
  }
  if (!w.n) return -1;
  rsan_spin_lock(&floor_lock);
  for (int i = 0; i < w.n; i++)
    if (w.slot[i] >= floor_hi) floor_hi = w.slot[i] + 1;
  rsan_spin_unlock(&floor_lock);
  recompute(&w);
  return pick(seen, n);
}
