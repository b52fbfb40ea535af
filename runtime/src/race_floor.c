/* The floor of the race detector's slots (docs/design/races.md §3): F[u] = min over live
 * threads v of C_v[u]. A cell (u, e) with e <= F[u] happens before every access of every live
 * thread, and of every later one (a thread starts from its live creator's C), so it can never
 * again be half of a race (C11 [intro.races]: a race needs two accesses unordered by
 * happens-before): a full granule drops such a cell before it takes overflow cells.
 *
 * F only grows: a live thread's C only grows, a joined thread leaves the minimum (its joiner's
 * C took its clock), a new thread starts from its creator's C, a reused slot continues its
 * previous owner's epochs (thread.c). So a value of F computed at any time is a lower bound of
 * F ever after: floor_of[] caches the highest one computed per slot, and the cold path that needs
 * a higher one recomputes it (at most once per FLOOR_BUDGET misses of the asking thread). The limit: a thread
 * the runtime did not see created (a root thread other than the first: rsan_thread_current of
 * a thread no interceptor announced) starts from an empty clock, so it is unordered with
 * every earlier access; a cell dropped before it appeared can hide a race with it (a miss,
 * never a false report: a dropped cell reports nothing). */
#include "rsan_race.h"

uint64_t rsan_race_floor_of[TID_MASK + 1]; /* rsan_race.h: per slot, a lower bound of F */
static uint32_t floor_hi;                    /* slots < floor_hi may be non-zero */
static rsan_spin floor_lock;                 /* floor_hi */
/* A recomputation walks every thread under the thread list's lock: a thread that found no
 * cell below the cached floor recomputes only after FLOOR_BUDGET more such misses (its first
 * miss recomputes at once). Programs whose full granules hold concurrent accesses (a queue's
 * head, read and CAS'd by every thread) thus pay one walk per FLOOR_BUDGET full-granule
 * accesses; a program whose floor rises (a read-shared array) finds it on its first miss, or
 * FLOOR_BUDGET misses after it rose. */
#define FLOOR_BUDGET 256
__thread uint32_t rsan_race_floor_misses_left __attribute__((tls_model("initial-exec")));
#define misses_left rsan_race_floor_misses_left
static __thread uint32_t sx_misses_left
    __attribute__((tls_model("initial-exec"))); /* rsan_race_floor_sx_miss */

/* rsan_race.h: a test reset starts new threads and clocks; the old bounds are void (no other
 * thread runs then) */
void rsan_race_floor_reset(void) {
  rsan_spin_lock(&floor_lock);
  for (uint32_t u = 0; u < floor_hi; u++) __atomic_store_n(&rsan_race_floor_of[u], 0, __ATOMIC_RELAXED);
  floor_hi = 0;
  rsan_spin_unlock(&floor_lock);
  misses_left = 0;
  sx_misses_left = 0;
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
    uint64_t old = __atomic_load_n(&rsan_race_floor_of[w->slot[i]], __ATOMIC_RELAXED);
    while (old < w->min[i] && !__atomic_compare_exchange_n(&rsan_race_floor_of[w->slot[i]], &old, w->min[i],
                                                           1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
}

/* rsan_race.h */
int rsan_race_floor_recompute(const uint64_t *seen, int n) {
  if (misses_left) {
    misses_left--;
    return -1;
  }
  misses_left = FLOOR_BUDGET;
  walk w;
  w.n = 0;
  for (int i = 0; i < n; i++) { /* the distinct slots of the cells */
    uint32_t u = w_tid(seen[i]);
    if (!seen[i] || u > MAX_TID) continue; /* a mark or a freed cell */
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
  return rsan_race_floor_cached(seen, n);
}

/* ---- the floor of every slot, for a location's S_x (docs/design/races.md §17) ----
 * An S_x whose owner epoch (u, e) has e <= F[u] is contained in every live thread's C (and so
 * in every later thread's): it can be dropped (S_x := ⊥) with no effect on any join. A thread
 * that meets a coded S_x above the cached floor recomputes the floor of every slot at its
 * first such miss and then once per SX_BUDGET of them (a walk of the live threads' clocks). */
#define SX_BUDGET 16384
static uint32_t sx_budget = SX_BUDGET; /* the tests set it (__rsan_test_sx_budget) */
static rsan_spin all_lock;      /* the walk's scratch below (one full walk at a time) */
static uint64_t all_min[TID_MASK + 1];
static uint32_t all_n, all_lo; /* the walk's slots (max C.n) and min C.n over the live threads */

static void visit_all(rsan_thread *v, void *arg) {
  (void)arg;
  uint32_t n = __atomic_load_n(&v->C.n, __ATOMIC_ACQUIRE);
  if (!n) return; /* joined: its clock is released */
  const uint64_t *e = __atomic_load_n(&v->C.e, __ATOMIC_ACQUIRE);
  if (n > TID_MASK + 1) n = TID_MASK + 1;
  for (uint32_t u = all_n; u < n; u++) all_min[u] = UINT64_MAX; /* slots no earlier thread had */
  if (n > all_n) all_n = n;
  if (n < all_lo) all_lo = n; /* entries >= n of this thread are 0: the floor there is 0 */
  for (uint32_t u = 0; u < n; u++) {
    uint64_t x = __atomic_load_n(&e[u], __ATOMIC_RELAXED);
    if (x < all_min[u]) all_min[u] = x;
  }
}

int rsan_race_floor_sx_miss(void) {
  if (sx_misses_left) {
    sx_misses_left--;
    return 0;
  }
  sx_misses_left = __atomic_load_n(&sx_budget, __ATOMIC_RELAXED);
  rsan_spin_lock(&all_lock);
  all_n = 0;
  all_lo = UINT32_MAX;
  rsan_vc_read_lock();
  rsan_thread_for_each(visit_all, NULL);
  rsan_vc_read_unlock();
  uint32_t lo = all_lo == UINT32_MAX ? 0 : all_lo; /* (no live thread: cannot happen, the caller lives) */
  rsan_spin_lock(&floor_lock);
  if (lo > floor_hi) floor_hi = lo;
  rsan_spin_unlock(&floor_lock);
  for (uint32_t u = 0; u < lo; u++) {
    uint64_t old = __atomic_load_n(&rsan_race_floor_of[u], __ATOMIC_RELAXED);
    while (old < all_min[u] && !__atomic_compare_exchange_n(&rsan_race_floor_of[u], &old, all_min[u], 1,
                                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
  rsan_spin_unlock(&all_lock);
  return 1;
}

/* tests (testsuite/runtime/test_race_sx_floor.py): the calls between two walks (0: every
 * miss walks); the old value */
RSAN_EXPORT uint32_t __rsan_test_sx_budget(uint32_t n) {
  uint32_t o = __atomic_exchange_n(&sx_budget, n, __ATOMIC_RELAXED);
  sx_misses_left = 0;
  return o;
}
