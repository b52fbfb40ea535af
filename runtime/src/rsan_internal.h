/* pyrsan runtime: what the engine's files share (internal; not an ABI).
 *
 * Files: clock.c (location clocks), location.c (location table; the records, facts and write
 * history are declared in rsan_location.h, included below), thread.c (thread state,
 * shadow call stack); the engine (rsan_engine.h): rules.c (the clock rules), atomic.c (the
 * __rsan_* atomic entry points), history.c, value.c (value checks), memop.c, sync.c
 * (rsan_sync.h), alloc.c, init.c; sites.c (module registry), flags.c (PYRSAN_OPTIONS),
 * report.c, report_robustness.c, report_race.c, suppressions.c, textbuf.c (reports;
 * rsan_report.h), test.c (test hooks, see rsan_test.h); race detection (algorithm.md §5):
 * vclock.c (vector clocks), race_clock.c (the algorithm.md §5 clock rules), race.c (the checks of
 * plain accesses), race_overflow.c (crowded granules), shadow.c
 * (shadow cells), heap.c (heap blocks, for naming objects). The interceptors only see rsan_sync.h.
 *
 * Locking: the engine never calls intercepted functions (pthread_mutex_*, malloc/free) with a
 * lock held; its own locks spin briefly and then park on a futex (lock.c) and its memory comes from
 * __libc_malloc/__libc_free, which the interceptors do not interpose.
 */
#ifndef RSAN_INTERNAL_H
#define RSAN_INTERNAL_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "rsan_interface.h"
#include "rsan_signal.h"
#include "rsan_sync.h"

#define RSAN_EXPORT __attribute__((visibility("default")))
/* Data the hot paths read, hidden: the runtime is linked whole into the executable
 * (pyrsan/build.py), and nothing outside it names these, so a read is one RIP-relative load
 * instead of a GOT load and a load (docs/design/clocks.md §24) */
#define RSAN_HIDDEN __attribute__((visibility("hidden")))
#define RSAN_NOINLINE __attribute__((noinline))
#define RSAN_LIKELY(x) __builtin_expect(!!(x), 1)
#define RSAN_UNLIKELY(x) __builtin_expect(!!(x), 0)

#ifdef RSAN_DEBUG
#define RSAN_ASSERT(c) \
  do { \
    if (!(c)) rsan_die_assert(#c, __FILE__, __LINE__); \
  } while (0)
#else
#define RSAN_ASSERT(c) ((void)0)
#endif
void rsan_die_assert(const char *cond, const char *file, int line) __attribute__((noreturn));

/* ---- memory orders (algorithm.md §2 "Modes"; consume is treated as acquire) ---- */
static inline int mo_acq(int mo) {
  return mo == RSAN_ACQUIRE || mo == RSAN_CONSUME || mo == RSAN_ACQ_REL || mo == RSAN_SEQ_CST;
}
static inline int mo_rel(int mo) { return mo == RSAN_RELEASE || mo == RSAN_ACQ_REL || mo == RSAN_SEQ_CST; }

/* ---- memory (never the interposed malloc/free) ---- */
void *rsan_alloc(size_t n);   /* zeroed; aborts on failure */
void *rsan_realloc(void *p, size_t n);
void rsan_free(void *p);
/* Size classes (alloc.c): zeroed memory of n bytes, 64-byte aligned when n >= 64 (else 16),
 * from per-size slabs and free lists when n <= RSAN_SLAB_MAX (larger: rsan_alloc_line), given
 * back by rsan_slab_free with the same n. For a location's satellites: no malloc on an
 * operation (docs/design/clocks.md §20). */
#define RSAN_SLAB_MAX 512
void *rsan_slab_alloc(size_t n);
void rsan_slab_free(void *p, size_t n); /* p NULL: nothing */
uint64_t rsan_slab_bytes(void);         /* the chunks taken so far, in bytes */
void rsan_slab_fork_lock(void);         /* taken last (history.c's fork lock), leaves */
void rsan_slab_fork_unlock(void);

/* ---- runtime locks (lock.c) ----
 * A word: 0 free, 1 locked, 2 locked and a waiter may be parked on it (the three-state futex
 * mutex of Drepper's "Futexes are tricky"). Taking a free lock is one CAS; releasing one that
 * nobody waits for is one exchange. A thread that finds the lock taken spins a little (a
 * critical section is a few hundred ns while its holder runs) and then parks on the word with
 * FUTEX_WAIT: the programs run more threads than cores, and a holder that was preempted can
 * only finish once a waiter gives up its core (spinning or sched_yield kept it; a parked waiter
 * lets the kernel run the holder there). The unlock that finds 2 wakes one waiter.
 * A thread holding a runtime lock is inside the runtime: a signal arriving then is deferred
 * to the unlock of its last lock (rsan_signal.h); a parked waiter is inside it too (its
 * FUTEX_WAIT returns on the signal, the deferring wrapper records it, and it parks again). */
typedef struct rsan_spin {
  uint32_t v;
} rsan_spin;

void rsan_spin_lock_slow(rsan_spin *l); /* lock.c: spin, then park */
void rsan_spin_wake(rsan_spin *l);      /* lock.c: wake one parked waiter */
void rsan_lock_print_stats(void);       /* lock.c: parks and wakes (verbosity >= 1, at exit) */
/* lock.c: FUTEX_WAIT while *w == val (timeout NULL: none) and FUTEX_WAKE of one waiter; both
 * keep errno, since they run inside the program's own operations */
struct timespec;
void rsan_futex_wait(uint32_t *w, uint32_t val, const struct timespec *timeout);
void rsan_futex_wake(uint32_t *w);

static inline void rsan_spin_lock(rsan_spin *l) {
  rsan_rt_enter();
  uint32_t free_ = 0;
  if (RSAN_LIKELY(__atomic_compare_exchange_n(&l->v, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
    return;
  rsan_spin_lock_slow(l);
}
static inline int rsan_spin_trylock(rsan_spin *l) {
  rsan_rt_enter();
  uint32_t free_ = 0;
  if (__atomic_compare_exchange_n(&l->v, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 1;
  rsan_rt_leave();
  return 0;
}
static inline void rsan_spin_unlock(rsan_spin *l) {
  if (RSAN_UNLIKELY(__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)) rsan_spin_wake(l);
  rsan_rt_leave();
}

/* ---- clocks: thread-indexed vector clocks over per-location facts (clock.c) ----
 * docs/design/clocks.md. Every clock of algorithm.md §2 with its U twin (thread Tc Tr Ta Tsc,
 * location W Wsc Msc) is a vector clock V over thread slots: an entry per slot, the newest
 * epoch of that slot's facts the clock contains. A fact is what a thread's atomic access to x
 * adds (location.c): (slot, epoch, ts, tsU). The clock's value at x is
 *     C(x) = max { ts(F) : F a fact on x, epoch(F) <= V[slot(F)] }   (tsU alike)
 * so ⊔ on clocks is the pointwise max of vector clocks and := a copy: joins cost O(threads),
 * never O(locations), and retiring a location leaves nothing in any clock. */
/* Versions: every change of a clock's content gives it a new version, unique in the process
 * (rsan_clk_newver: per-thread blocks of a global counter); a copy takes the source's
 * version, ⊥ is version 0. So equal versions mean equal contents, whichever clocks hold
 * them: a location clock that is known to contain a version of a thread clock needs no join
 * of it again (rules.c, Msc(x) and msc_in). */
/* Layout: one cache line. Up to RSAN_CLK_INLINE slots (the main thread and five more) the
 * entries are inline, so a location's clock is the line that holds its header, with no
 * pointer to follow; a clock that holds more slots keeps them in an array (ext). Inline
 * entries >= n are 0 (kept so by every operation), so a join or copy of two inline clocks is
 * a fixed-size loop over all of them, with no bounds. */
/* Width (docs/design/clocks.md §13): a location clock's array holds 32-bit entries while
 * every entry fits (narrow: half the memory and the bytes a join reads, at many threads); an
 * entry that does not fit makes the array 64-bit before it is stored (clock.c). Thread clocks
 * and inline entries are always 64-bit, so the hot paths that read thread clocks by pointer
 * (rsan_clk_e, rsan_clk_ce, rsan_clk_at) never meet a narrow clock. An inline location clock
 * has cap RSAN_CLK_INLINE_LOC: its array, when it grows one, starts narrow. */
/* Sharing (docs/design/clocks.md §13): a location clock assigned a thread clock of more than
 * RSAN_CLK_INLINE slots refers to an immutable, reference-counted snapshot of that thread clock
 * (rsan_snap, narrow) plus the up to RSAN_CLK_DELTA entries in which the thread clock differs
 * from it (cap RSAN_CLK_SHARED). A thread keeps the last snapshot of each clock it exports (Tc,
 * Tr, Tsc) and takes a new one only when its clock moved too far from it, so the location
 * clocks its writes set share one array instead of having one each. */
#define RSAN_CLK_INLINE 6
#define RSAN_CLK_INLINE_LOC 1       /* cap of an inline location clock (location.c) */
#define RSAN_CLK_SHARED 0xFFFFFFFFu /* cap of a shared location clock */
#define RSAN_CLK_DELTA 5
typedef struct __attribute__((aligned(64))) rsan_snap {
  /* atomic: the holders (location clocks, the exporting thread) with a bias while the
   * exporting thread holds it (clock.c); alone in its cache line, which other threads write,
   * so that the lines every thread reads stay shared */
  uint64_t refs;
  char refs_line[56];
  uint32_t n;
  uint32_t mix; /* the memo entry that remembers its lineage (rsan_memo) */
  /* its place in its lineage (docs/design/clocks.md §16): the snapshots of one thread clock in
   * one life of its thread record share lin (unique in the process) and grow with seq */
  uint64_t lin, seq;
  uint32_t e[]; /* n entries, never changed once made */
} rsan_snap;
typedef struct __attribute__((aligned(64))) rsan_clk {
  uint32_t n, cap; /* entries >= n are 0; cap <= RSAN_CLK_INLINE: inline (0 in zeroed memory) */
  uint64_t ver;    /* 0: ⊥ */
  union {
    uint64_t inl[RSAN_CLK_INLINE];
    struct {
      void *ext;       /* cap entries: uint32_t when narrow, else uint64_t */
      uint32_t narrow; /* (location clocks only) */
    } x;
    struct {
      rsan_snap *snap;
      uint32_t slot[RSAN_CLK_DELTA], ep[RSAN_CLK_DELTA]; /* entry slot[i] is ep[i] (0: unused) */
    } s; /* cap RSAN_CLK_SHARED: entry u = max(snap->e[u], the ep[i] of slot u) */
  } u; /* by thread slot */
} rsan_clk;
static inline int rsan_clk_narrow(const rsan_clk *c) {
  return c->cap > RSAN_CLK_INLINE && c->cap != RSAN_CLK_SHARED && c->u.x.narrow;
}
static inline int rsan_clk_shared(const rsan_clk *c) { return c->cap == RSAN_CLK_SHARED; }
/* a 64-bit clock's entries (never a narrow one: thread clocks, inline clocks) */
static inline uint64_t *rsan_clk_e(rsan_clk *c) {
  RSAN_ASSERT(!rsan_clk_narrow(c) && !rsan_clk_shared(c));
  return c->cap > RSAN_CLK_INLINE ? (uint64_t *)c->u.x.ext : c->u.inl;
}
static inline const uint64_t *rsan_clk_ce(const rsan_clk *c) {
  RSAN_ASSERT(!rsan_clk_narrow(c) && !rsan_clk_shared(c));
  return c->cap > RSAN_CLK_INLINE ? (const uint64_t *)c->u.x.ext : c->u.inl;
}

extern __thread uint64_t rsan_clk_ver_next __attribute__((tls_model("initial-exec"))),
    rsan_clk_ver_end __attribute__((tls_model("initial-exec"))); /* as the runtime's other TLS (§24) */
uint64_t rsan_clk_newver_slow(void);
static inline uint64_t rsan_clk_newver(void) {
  if (RSAN_UNLIKELY(rsan_clk_ver_next == rsan_clk_ver_end)) return rsan_clk_newver_slow();
  return rsan_clk_ver_next++;
}
/* three consecutive fresh versions (the first returned): one bound check for the three thread
 * clocks a fact changes */
static inline uint64_t rsan_clk_newver3(void) {
  if (RSAN_UNLIKELY(rsan_clk_ver_end - rsan_clk_ver_next < 3)) {
    rsan_clk_ver_next = rsan_clk_ver_end; /* the block's rest is never handed out */
    uint64_t v = rsan_clk_newver_slow(); /* a new block of RSAN_VER_BLOCK >= 3 */
    rsan_clk_ver_next += 2;
    return v;
  }
  uint64_t v = rsan_clk_ver_next;
  rsan_clk_ver_next += 3;
  return v;
}
void rsan_clk_init(rsan_clk *c);
void rsan_clk_release(rsan_clk *c); /* c := ⊥, memory released */
void rsan_clk_unshare(rsan_clk *c); /* a shared clock := ⊥, an inline location clock */
static inline void rsan_clk_clear(rsan_clk *c) { /* c := ⊥, memory kept (a shared one's dropped) */
  if (RSAN_UNLIKELY(rsan_clk_shared(c))) {
    rsan_clk_unshare(c);
    return;
  }
  if (c->cap <= RSAN_CLK_INLINE)
    for (int i = 0; i < RSAN_CLK_INLINE; i++) c->u.inl[i] = 0;
  c->n = 0;
  c->ver = 0;
}
/* entry slot of a 64-bit clock (a thread clock); rsan_clk_get reads any clock */
static inline uint64_t rsan_clk_at(const rsan_clk *c, uint32_t slot) {
  return slot < c->n ? rsan_clk_ce(c)[slot] : 0;
}
uint64_t rsan_clk_get(const rsan_clk *c, uint32_t slot);
void rsan_clk_grow(rsan_clk *c, uint32_t n); /* makes n entries (rare: the slot count grew) */
static inline void rsan_clk_set(rsan_clk *c, uint32_t slot, uint64_t epoch) {
  if (RSAN_UNLIKELY(slot >= c->n)) rsan_clk_grow(c, slot + 1);
  rsan_clk_e(c)[slot] = epoch;
  c->ver = rsan_clk_newver();
}
void rsan_clk_join_slow(rsan_clk *dst, const rsan_clk *src);
void rsan_clk_assign_slow(rsan_clk *dst, const rsan_clk *src);
/* dst ⊔= src. Equal versions mean equal contents, so a join of a clock's own version is
 * skipped, and a join that changed no entry keeps dst's version (it still names dst's
 * contents): a later join, or the Msc(x) check of rules.c, that knows it is skipped too. */
/* the inline entries as vectors (rsan_clk_join_inline, rsan_clk_assign_inline): entries 0-3,
 * 4-5; 8-byte aligned loads and stores, aliasing the entries */
typedef uint64_t rsan_u64x4 __attribute__((vector_size(32), aligned(8), may_alias));
typedef uint64_t rsan_u64x2 __attribute__((vector_size(16), aligned(8), may_alias));
_Static_assert(RSAN_CLK_INLINE == 6, "the inline join and copy are one vector of 4 and one of 2");
/* the case of a join where both clocks are inline: 0 (nothing done) when one is not */
static inline __attribute__((always_inline)) int rsan_clk_join_inline(rsan_clk *dst, const rsan_clk *src) {
  if (!RSAN_LIKELY(src->cap <= RSAN_CLK_INLINE && dst->cap <= RSAN_CLK_INLINE)) return 0;
  /* entries 0-3 and 4-5 as two vectors (GCC vector extensions: one AVX2 and one SSE
   * register where the caller is built for AVX2, atomic.c; pairs of SSE2 registers
   * otherwise): k marks the entries where src is above dst (unsigned compare), which are
   * then src's; changed iff some k is set. The same pointwise max as the loop over six. */
  rsan_u64x4 *d4 = (rsan_u64x4 *)dst->u.inl, a4 = *d4, b4 = *(const rsan_u64x4 *)src->u.inl;
  rsan_u64x2 *d2 = (rsan_u64x2 *)(dst->u.inl + 4), a2 = *d2, b2 = *(const rsan_u64x2 *)(src->u.inl + 4);
  rsan_u64x4 k4 = (rsan_u64x4)(b4 > a4);
  rsan_u64x2 k2 = (rsan_u64x2)(b2 > a2);
  *d4 = (a4 & ~k4) | (b4 & k4);
  *d2 = (a2 & ~k2) | (b2 & k2);
  rsan_u64x2 kk = k2 | __builtin_shufflevector(k4, k4, 0, 1) | __builtin_shufflevector(k4, k4, 2, 3);
  uint64_t changed = kk[0] | kk[1];
  if (src->n > dst->n) dst->n = src->n;
  if (changed || !dst->ver) dst->ver = rsan_clk_newver();
  return 1;
}
static inline __attribute__((always_inline)) void rsan_clk_join(rsan_clk *dst, const rsan_clk *src) {
  if (!src->ver || src->ver == dst->ver) return; /* version 0: ⊥ */
  if (!rsan_clk_join_inline(dst, src)) rsan_clk_join_slow(dst, src);
}
/* the case of := where both clocks are inline: 0 (nothing done) when one is not */
static inline __attribute__((always_inline)) int rsan_clk_assign_inline(rsan_clk *dst, const rsan_clk *src) {
  if (!RSAN_LIKELY(src->cap <= RSAN_CLK_INLINE && dst->cap <= RSAN_CLK_INLINE)) return 0;
  *(rsan_u64x4 *)dst->u.inl = *(const rsan_u64x4 *)src->u.inl;
  *(rsan_u64x2 *)(dst->u.inl + 4) = *(const rsan_u64x2 *)(src->u.inl + 4);
  dst->n = src->n;
  dst->ver = src->ver;
  return 1;
}
/* dst := src */
static inline void rsan_clk_assign(rsan_clk *dst, const rsan_clk *src) {
  if (dst->ver == src->ver && dst->n == src->n) return; /* the same content */
  if (!rsan_clk_assign_inline(dst, src)) rsan_clk_assign_slow(dst, src);
}
int rsan_clk_leq(const rsan_clk *a, const rsan_clk *b);    /* a ⊑ b pointwise */
/* ---- what a thread knows of shared snapshots (docs/design/clocks.md §16) ----
 * Memo: per thread clock X (Tc, Ta, Tsc), per lineage entry (rsan_snap.mix), the highest seq
 * of that lineage whose snapshot is known to be contained in X. A lineage's snapshots only
 * grow with seq (they are taken of one thread clock, which only grows in its thread's life),
 * and X only grows in its thread's life, so "S ⊑ X" stays true from the memo's store to its
 * use: a join X ⊔= (S, pairs) with S remembered joins only the pairs. Cleared whenever the
 * thread's clocks are released (thread.c); thread records are never reused. */
#define RSAN_MEMO 128 /* entries per memo: snapshots of slot s use 2s, 2s + 1 (c, r), s (sc) */
typedef struct rsan_memo {
  uint64_t lin, seq; /* lin 0: empty */
} rsan_memo;
/* Export state of an exported thread clock X (Tc, Tr, Tsc) beside its last snapshot S: while
 * X's version is dver, every entry in which X differs from S is at slot own or in dslot[0, dk)
 * (and above S's: X only grew since S was taken). Then an export is S with those entries,
 * O(RSAN_CLK_DELTA) instead of comparing every entry. Any change of X that does not keep the
 * delta gives X a new version and so turns it off (the next export compares and sets it). */
typedef struct rsan_xclk {
  uint64_t nref; /* the references to X's snapshot this thread gave location clocks (clock.c) */
  uint64_t lin;  /* lineage of X's snapshots in this life (0: none taken yet) */
  uint64_t dver; /* 0: no delta */
  uint32_t dk;
  uint32_t dslot[RSAN_CLK_DELTA];
} rsan_xclk;
/* slot u of X changed (own: the thread's slot, always part of the delta): 1 if the delta
 * still holds every changed slot */
static inline int rsan_xclk_note(rsan_xclk *x, uint32_t own, uint32_t u) {
  if (u == own) return 1;
  for (uint32_t i = 0; i < x->dk; i++)
    if (x->dslot[i] == u) return 1;
  if (x->dk == RSAN_CLK_DELTA) return 0;
  x->dslot[x->dk++] = u;
  return 1;
}
/* ---- vector clocks of the race detector (vclock.c), indexed by thread id ---- */
typedef struct rsan_vc {
  uint32_t n, cap; /* entries >= n are 0 */
  uint64_t *e;     /* cap RSAN_VC_CODED (a location's S_x only): a coded clock (vclock.c) */
} rsan_vc;
#define RSAN_VC_CODED 0xFFFFFFFFu
static inline uint64_t rsan_vc_get(const rsan_vc *v, uint32_t tid) { return tid < v->n ? v->e[tid] : 0; }
void rsan_vc_set(rsan_vc *v, uint32_t tid, uint64_t c);
void rsan_vc_join(rsan_vc *dst, const rsan_vc *src);   /* dst ⊔= src */
void rsan_vc_assign(rsan_vc *dst, const rsan_vc *src); /* dst := src */
int rsan_vc_leq(const rsan_vc *a, const rsan_vc *b);
void rsan_vc_free(rsan_vc *v); /* v := ⊥, memory released */

#include "rsan_location.h" /* facts, write history, location records */

/* ---- thread state (thread.c) ---- */
#define RSAN_SHADOW_MAX 64
#define RSAN_RECENT 4
#define RSAN_CREATE_STACK 8
/* race reports: per-thread call stacks of recent access sites (docs/design/races.md §19) */
#define RSAN_SITE_STACKS 64
#define RSAN_SITE_STACK_DEPTH 4

enum rsan_opkind {
  RSAN_OP_LOAD = 0,
  RSAN_OP_STORE,
  RSAN_OP_RMW,
  RSAN_OP_CAS_WEAK,
  RSAN_OP_CAS_STRONG,
  RSAN_OP_SYNC,
  RSAN_OP_WAIT,  /* pyrsan_wait: a load that blocks until the value is seen */
  RSAN_OP_BCAS,  /* pyrsan_bcas: a CAS retried until it succeeds */
  RSAN_OP_CASLOOP, /* the successful attempt of a CAS retry loop: one RMW (casloop.c) */
};

/* A robustness report already emitted, by what decides its dedup key (report_robustness.c
 * rsan_repeat_*): the access's site, the type and the stale write's source (its site, an older
 * write, or the initial value of the global at an address), under a site-registry generation
 * and a report epoch. meta 0: empty. */
typedef struct rsan_repeat {
  uint64_t site, x, meta, gen, epoch;
} rsan_repeat;
#define RSAN_REPEATS 16 /* per thread, direct-mapped */

typedef struct rsan_recent {
  uint64_t site;
  uint64_t loc_id;
  uintptr_t addr;
  uint8_t op;
  uint8_t rmw_op;
  uint8_t size;
} rsan_recent;

#define RSAN_ELIDED 16 /* a power of 2 */
struct rsan_thread {
  int tid;
  int ktid; /* the kernel's thread id (gettid), set by the thread itself: the scheduler's
             * stall watch reads its CPU time and state (sched.c) */
  uint32_t finished;
  rsan_clk Tc, Tr, Ta, Tsc; /* algorithm.md §2, each fused with its U twin (vector clocks) */
  rsan_clk Fa, Fsc; /* Ta and Tsc as the thread's last SC fence left them (sched_fence.c) */
  rsan_snap *snap_c, *snap_r, *snap_sc; /* the last snapshots of Tc, Tr, Tsc (rsan_clk_export) */
  /* Thread slot: the index of this thread in every vector clock, and its fact epoch (the
   * epoch of its newest fact; Tc, Ta and Tsc hold it at slot, Tr the one of the last release
   * fence). A slot is reused (thread.c) only by a thread created by one whose clocks contain
   * the previous owner's last epoch; epochs continue from there, never restart. */
  uint32_t slot;
  uint64_t epoch;
  /* the loads whose fact was elided, by location id modulo RSAN_ELIDED: the write each read
   * (x's id, stamp, stampU; id 0: none), so that a re-read of it is known (rsan_engine.h
   * rsan_load_fact_i, docs/design/clocks.md §26). Saved and restored with the clocks. */
  struct {
    uint64_t id, stamp, stampU;
  } elided[RSAN_ELIDED];
  uint32_t finished_slot; /* joined: its slot went to the joiner's free_slots */
  uint32_t nfree_slots, cap_free_slots; /* slots of threads this one joined: reusable by its */
  uint32_t *free_slots;                 /* children (docs/design/clocks.md) */
  uint32_t depth; /* shadow call stack */
  uint64_t shadow_site[RSAN_SHADOW_MAX];
  uintptr_t shadow_frame[RSAN_SHADOW_MAX];
  uint32_t recent_next;
  rsan_recent recent[RSAN_RECENT];
  /* race detector (algorithm.md §5): current, released-by-fence, pending-acquire */
  rsan_vc C, R, A;
  uint64_t race_epoch; /* C[tid], kept here for the hot path */
  uint64_t race_cur;   /* race.c: C[tid] and slot packed as in a shadow cell (0: no checks) */
  /* the call stack of the latest execution of recent plain-access sites, direct-mapped by
   * site: the previous side of a race report (race.c) */
  struct {
    uint64_t site;
    uint32_t depth; /* shadow stack depth when recorded */
    uint64_t stack[RSAN_SITE_STACK_DEPTH];
  } site_stack[RSAN_SITE_STACKS];
  /* the keys of its latest writes' history entries (rsan_engine.h): a cache of the key pool,
   * whose keys are never forgotten, so any content is as good as the saved one (the closure
   * search neither copies nor restores it, sched_closure_state.c) */
  rsan_hkc hkc[RSAN_HKC];
  int parent_tid;  /* -1: a root thread */
  uint32_t ncreate; /* the creator's call stack at the creation, innermost first */
  uint64_t create_stack[RSAN_CREATE_STACK];
  void *sched; /* the controlled scheduler's slot (sched.c), NULL when not managed */
  /* the last attempt of a recognised spin loop read another value: the loop goes on, and a
   * repair fence next to its load waits for the attempt that leaves it (__rsan_fence_spin) */
  int spin_failed;
  rsan_repeat repeats[RSAN_REPEATS]; /* reports this thread's checks repeat (report_robustness.c) */
  struct rsan_thread *all_next;
  /* docs/design/clocks.md §16: the export state of Tc, Tr, Tsc, the snapshots' seq counter,
   * and the memos of Tc, Ta, Tsc (what shared snapshots each is known to contain) */
  rsan_xclk xc, xr, xsc;
  uint64_t snap_seq;
  uint64_t memo_used; /* 0: every memo is empty (clock.c memo_put, rsan_thread_snaps_release) */
  rsan_memo memo_c[RSAN_MEMO], memo_a[RSAN_MEMO], memo_sc[RSAN_MEMO];
};

/* The thread clock rules' joins and exports with the memos and export states above
 * (docs/design/clocks.md §16), beyond RSAN_CLK_INLINE slots (rsan_engine.h has the inline
 * case): X ⊔= L, L := X, L ⊔= X for a thread clock X of t (which: RSAN_X_*) and a location
 * clock L. */
enum { RSAN_X_C, RSAN_X_R, RSAN_X_SC, RSAN_X_A };
void rsan_clk_join_t_slow(rsan_thread *t, rsan_clk *dst, const rsan_clk *src, rsan_memo *memo, rsan_xclk *x);
void rsan_clk_export_t_slow(rsan_clk *dst, rsan_thread *t, const rsan_clk *src, rsan_snap **snap,
                            rsan_xclk *x, int which);
void rsan_clk_join_loc_t_slow(rsan_clk *dst, rsan_thread *t, const rsan_clk *src, rsan_memo *memo,
                              rsan_snap **snap, rsan_xclk *x, int which);
void rsan_thread_snaps_release(rsan_thread *t); /* its snapshots, export states and memos */
void rsan_thread_snaps_claim(rsan_thread *t);   /* a restored copy's snapshots become t's */

rsan_thread *rsan_thread_new_root(void);
int rsan_thread_next_tid(void); /* the tid the next new thread gets */
void rsan_thread_set_current(rsan_thread *t);
void rsan_thread_reset_all(void);
#ifdef RSAN_DEBUG
void rsan_thread_check_invariants(const rsan_thread *t);
#else
static inline void rsan_thread_check_invariants(const rsan_thread *t) { (void)t; } /* debug builds only */
#endif
/* tests: which = 0 Tc, 1 Tr, 2 Ta, 3 Tsc, 4 TcU, 5 TrU, 6 TaU, 7 TscU; l locked */
uint64_t rsan_thread_clock_get(const rsan_thread *t, int which, rsan_loc *l);
uint32_t rsan_thread_slot_count(void); /* slots handed out (tests, benchmarks) */
void rsan_thread_skip_epochs(rsan_thread *t, uint64_t n); /* tests: t's epoch += n (thread.c) */
/* Race detection indexes threads by slot too (race.c): the tid of the thread that held slot
 * when its race epoch was race_epoch (-1 unknown), for reports of a previous access. */
static inline uint32_t rsan_race_index(const rsan_thread *t) { return t->slot; }
int rsan_thread_tid_at(uint32_t slot, uint64_t race_epoch);
/* Shadow call stack: copies up to max call sites (innermost first) whose recorded frame is
 * above hook_frame; returns how many. */
uint32_t rsan_thread_stack(const rsan_thread *t, uintptr_t hook_frame, uint64_t *out, uint32_t max);
void rsan_thread_note_access(rsan_thread *t, uint64_t site, const rsan_loc *l, int op, int rmw_op, int size);
/* the same, inline (the atomic entry points: every operation notes itself) */
static inline __attribute__((always_inline)) void
rsan_thread_note_access_i(rsan_thread *t, uint64_t site, const rsan_loc *l, int op, int rmw_op, int size) {
  rsan_recent *r = &t->recent[t->recent_next++ % RSAN_RECENT];
  r->site = site;
  r->loc_id = l->id;
  r->addr = l->addr;
  r->op = (uint8_t)op;
  r->rmw_op = (uint8_t)rmw_op;
  r->size = (uint8_t)size;
}
/* the thread with id tid (NULL when unknown), and the calling thread's state without
 * registering it (NULL when the OS thread is not known yet) */
rsan_thread *rsan_thread_by_tid(int tid);
rsan_thread *rsan_thread_peek_current(void);
/* rsan_thread_current with its common case inlined (the hot path of plain accesses) */
/* initial-exec, as the runtime's other TLS: the plain-access hook reads both on its hot path,
 * and a general-dynamic access is a call there (the registers the hook would then save) */
extern __thread rsan_thread *rsan_tls_current __attribute__((tls_model("initial-exec")));
extern __thread uint64_t rsan_tls_epoch __attribute__((tls_model("initial-exec")));
extern uint64_t rsan_thread_generation RSAN_HIDDEN;
static inline rsan_thread *rsan_thread_fast(void) {
  rsan_thread *t = rsan_tls_current;
  if (RSAN_LIKELY(t && rsan_tls_epoch == __atomic_load_n(&rsan_thread_generation, __ATOMIC_RELAXED)))
    return t;
  return rsan_thread_current();
}

/* ---- race detection (race_clock.c, race.c): algorithm.md §5 ----
 * The clock rules run under the location lock of the atomic (S_x lives there); the shadow
 * checks run without any lock (rsan_race_access). Every entry point is a no-op with
 * report_races=0. Epoch of an access: the thread's own entry C[tid] at the access. */
void rsan_race_thread_init(rsan_thread *t);                     /* a root thread: C[t] := 1 */
void rsan_race_thread_create(rsan_thread *parent, rsan_thread *child);
void rsan_race_thread_join(rsan_thread *joiner, rsan_thread *joinee);
void rsan_race_thread_free(rsan_thread *t);
void rsan_race_load(rsan_thread *t, rsan_loc *l, int mo);        /* after the seq_cst mapping */
uint64_t rsan_race_store(rsan_thread *t, rsan_loc *l, int mo);   /* returns the access's epoch */
uint64_t rsan_race_rmw(rsan_thread *t, rsan_loc *l, int mo);     /* returns the access's epoch */
void rsan_race_fence_acq(rsan_thread *t);
void rsan_race_fence_rel(rsan_thread *t);
static inline uint64_t rsan_race_epoch(const rsan_thread *t) { return t->race_epoch; }
/* A memory access of [addr, addr + size) by t at epoch (plain: the current one), checked
 * against the shadow and recorded there; reports a race. fa: the hook's frame address. */
void rsan_race_access(rsan_thread *t, uintptr_t addr, uint64_t size, int is_write, int is_atomic,
                      uint64_t epoch, uint64_t site, uintptr_t fa);

/* ---- shadow cells (shadow.c): RSAN_SHADOW_CELLS per 8-byte granule ----
 * A cell is one word (the packed access, race.c; 0: empty). A granule's cells are followed by
 * the site ids of their accesses (rsan_cell_site), RSAN_SHADOW_STRIDE words in all: one
 * 64-byte line per granule, so that an access touches one line (cells and sites) and two
 * granules' accesses never share one. */
#define RSAN_SHADOW_CELLS 4
#define RSAN_SHADOW_STRIDE (2 * RSAN_SHADOW_CELLS) /* words per granule: cells, then sites */
#define RSAN_SHADOW_REGION_SHIFT 20
#define RSAN_SHADOW_USER_BITS 47
#define RSAN_SHADOW_REGION_WORDS ((1ull << (RSAN_SHADOW_REGION_SHIFT - 3)) * RSAN_SHADOW_STRIDE)
typedef uint64_t rsan_cell;
static inline uint64_t *rsan_cell_site(rsan_cell *c) { return c + RSAN_SHADOW_CELLS; }
/* The cells of the granule containing addr (allocated on first use); NULL outside the
 * user address space. */
rsan_cell *rsan_shadow_cells(uintptr_t addr);
/* the index in its region's cells of the granule containing addr (a region is one mapping
 * of RSAN_SHADOW_STRIDE words per 8-byte granule, docs/design/races.md §1) */
static inline uintptr_t rsan_shadow_offset(uintptr_t addr) {
  return ((addr & ((1ull << RSAN_SHADOW_REGION_SHIFT) - 1)) >> 3) * RSAN_SHADOW_STRIDE;
}
/* the inlined common case of rsan_shadow_cells: the region is mapped */
extern rsan_cell **rsan_shadow_directory RSAN_HIDDEN;
static inline rsan_cell *rsan_shadow_cells_fast(uintptr_t addr) {
  rsan_cell **d = __atomic_load_n(&rsan_shadow_directory, __ATOMIC_ACQUIRE);
  uintptr_t r = addr >> RSAN_SHADOW_REGION_SHIFT;
  rsan_cell *c;
  if (RSAN_LIKELY(d && r < (1ull << (RSAN_SHADOW_USER_BITS - RSAN_SHADOW_REGION_SHIFT)) &&
                  (c = __atomic_load_n(&d[r], __ATOMIC_ACQUIRE))))
    return c + rsan_shadow_offset(addr);
  return rsan_shadow_cells(addr);
}
void rsan_shadow_reset(uintptr_t addr, size_t n); /* empties the cells of [addr, addr + n) */
void rsan_shadow_reset_all(void);                 /* tests */

/* ---- heap blocks (heap.c), to name the object of a race ---- */
typedef struct rsan_block_info {
  uintptr_t addr;
  uint64_t size;
  int tid;          /* allocating thread, -1 unknown */
  uint64_t site;    /* innermost call site of the allocation (0 unknown) */
  uint64_t stack[4];
} rsan_block_info;
int rsan_heap_find(uintptr_t addr, rsan_block_info *out); /* 1 when a live block contains addr */
void rsan_heap_reset_all(void);

/* ---- sites (sites.c) ---- */
const rsan_site *rsan_site_lookup(uint64_t site);
/* rsan_site_lookup, and the registry's generation at the lookup (*gen; 0 for no site): a
 * site id means the same record and frames as long as the generation is the same */
const rsan_site *rsan_site_lookup_gen(uint64_t site, uint64_t *gen);
/* name of the global containing addr; *off = addr - start. NULL when unknown. */
const char *rsan_global_lookup(uintptr_t addr, uint64_t *off);
void rsan_sites_reset(void);

/* ---- options (flags.c) ---- */
enum rsan_sc_mode { RSAN_SC_FENCED = 0, RSAN_SC_RA = 1 };
#define RSAN_FLAG_STRING_MAX 512
/* The option structs, one field per row of rsan_flags.inc (its meaning: the row's help):
 * rsan_flag holds the ENGINE rows, rsan_sched_flag the SCHED rows. The C type of a field
 * follows the row's type. */
#define RSAN_FLAG_CTYPE_F_BOOL int
#define RSAN_FLAG_CTYPE_F_INT int
#define RSAN_FLAG_CTYPE_F_EXIT int
#define RSAN_FLAG_CTYPE_F_SC_MODE int /* enum rsan_sc_mode */
#define RSAN_FLAG_CTYPE_F_SCHED int   /* enum rsan_sched_mode (rsan_sched.h) */
#define RSAN_FLAG_CTYPE_F_U64 unsigned long long
#define RSAN_FLAG_CTYPE_F_STRING char
#define RSAN_FLAG_DIM_F_BOOL
#define RSAN_FLAG_DIM_F_INT
#define RSAN_FLAG_DIM_F_EXIT
#define RSAN_FLAG_DIM_F_SC_MODE
#define RSAN_FLAG_DIM_F_SCHED
#define RSAN_FLAG_DIM_F_U64
#define RSAN_FLAG_DIM_F_STRING [RSAN_FLAG_STRING_MAX]
#define RSAN_FLAG_FIELD(type, name) RSAN_FLAG_CTYPE_##type name RSAN_FLAG_DIM_##type;
#define RSAN_FLAG_ENGINE_IN_ENGINE(type, name) RSAN_FLAG_FIELD(type, name)
#define RSAN_FLAG_ENGINE_IN_SCHED(type, name)
#define RSAN_FLAG_SCHED_IN_ENGINE(type, name)
#define RSAN_FLAG_SCHED_IN_SCHED(type, name) RSAN_FLAG_FIELD(type, name)
typedef struct rsan_flags {
#define RSAN_FLAG(group, type, name, def, help) RSAN_FLAG_##group##_IN_ENGINE(type, name)
#include "rsan_flags.inc"
#undef RSAN_FLAG
} rsan_flags;
extern rsan_flags rsan_flag RSAN_HIDDEN;
/* the controlled scheduler's options (docs/scheduling.md "Options") */
typedef struct rsan_sched_flags {
#define RSAN_FLAG(group, type, name, def, help) RSAN_FLAG_##group##_IN_SCHED(type, name)
#include "rsan_flags.inc"
#undef RSAN_FLAG
} rsan_sched_flags;
extern rsan_sched_flags rsan_sched_flag RSAN_HIDDEN;
/* Parses s into rsan_flag (on top of the defaults). Returns 0, or -1 after writing a one-line
 * message to err (size errn). */
int rsan_flags_parse(const char *s, char *err, size_t errn);
void rsan_flags_defaults(void);
void rsan_flags_print_help(void);

/* ---- initialisation (init.c) ---- */
extern int rsan_inited RSAN_HIDDEN;
void rsan_init_slow(void);
static inline void rsan_ensure_init(void) {
  if (RSAN_UNLIKELY(!__atomic_load_n(&rsan_inited, __ATOMIC_ACQUIRE))) rsan_init_slow();
}
extern int rsan_test_mode; /* set by the test hooks: no exit-status change, no _exit */

/* ---- reports (report.c) ---- */
typedef struct rsan_report_info {
  int is_write; /* write check (U clocks) failed, else read check */
  uintptr_t addr;
  uint64_t loc_id;
  /* the access */
  uint64_t site;
  int tid;
  int op;     /* enum rsan_opkind */
  int rmw_op; /* enum rsan_rmw_op for RMW */
  int order;  /* as written */
  int size;
  uint32_t nstack;
  uint64_t stack[RSAN_SHADOW_MAX];
  /* timestamps compared */
  uint64_t ts_hb, ts_sc;
  /* the hb-aware write (previous) and the write SC forces the access to see */
  int prev_state; /* 0 initial, 1 known (prev), 2 older write */
  rsan_write prev;
  int forced_state;
  rsan_write forced;
  /* the thread's access before this one, for the suggestion */
  int have_before;
  rsan_recent before;
  /* for the report (report_robustness.c rsan_report_note_state, called by rsan_fill_report under
   * the location lock): the expected value of a CAS (set by op_cas); the known writes the
   * access may still read / overwrite (timestamps in [hb, sc), oldest first) and whether that
   * list is complete (no candidate left the bounded history); the location's initial value;
   * whether the thread's pending-acquire view Ta already reaches the write SC requires (an
   * acquire on its earlier read, or an acquire fence, would then make the access see it) */
  int has_expected;
  uint64_t expected;
  uint32_t ncand;
  int cand_complete;
  int cand_init;
  uint64_t init_value;
  rsan_write cand[RSAN_HIST];
  int prev_oldest_retained; /* prev is the oldest retained candidate, not the write at hb */
  int ta_covers;
  /* the thread's latest read of another location is the only site whose reads without acquire
   * can have brought the write SC requires into Ta: the thread's whole life of atomic accesses
   * is in its recent ring, and every other read of another location there acquires (so an
   * acquire on that one site is a repair, docs/reports.md §5) */
  int before_sole_carrier;
  /* what the report's dedup key is made of, and the thread's cache slot to remember it in
   * once the key is in the dedup table (rsan_repeat_note) */
  rsan_repeat repeat;
  rsan_repeat *repeat_slot;
} rsan_report_info;

void rsan_report_robustness(rsan_report_info *r);
/* report_robustness.c: 1 if k (gen and epoch filled in here) is remembered by the thread: the
 * dedup key it gives is in the dedup table, the report would be dropped as a repeat; else 0
 * and *slot is where rsan_report_robustness may remember it */
int rsan_repeat_seen(struct rsan_thread *t, rsan_repeat *k, rsan_repeat **slot);
uint64_t rsan_sites_generation(void); /* sites.c: changes whenever the registry does */
/* the part of a robustness report that needs the location's state (its lock held) */
struct rsan_loc;
void rsan_report_note_state(rsan_report_info *r, const rsan_thread *t, struct rsan_loc *l);

/* a data race: the current access and the previous one from the shadow */
typedef struct rsan_race_info {
  uintptr_t addr; /* first byte both accesses touch */
  /* the current access */
  uint64_t site;
  int tid, is_write, is_atomic, size;
  int is_free; /* the access is free() of the block (a write of all of it) */
  uint32_t nstack;
  uint64_t stack[RSAN_SHADOW_MAX];
  /* the previous access (from its shadow cell; its call stack from its thread's recent
   * site stacks when still there) */
  uint64_t prev_site;
  uint32_t prev_nstack;
  uint64_t prev_stack[RSAN_SITE_STACK_DEPTH];
  int prev_tid, prev_is_write, prev_is_atomic, prev_size;
} rsan_race_info;
void rsan_report_race(rsan_race_info *r);
/* the controlled scheduler's deadlock report (text and JSON line, docs/scheduling.md) */
typedef struct rsan_deadlock_thread {
  int tid;
  const rsan_thread *thread;
  char waiting_for[160];
} rsan_deadlock_thread;
void rsan_report_deadlock(const rsan_deadlock_thread *threads, int n);
/* copies a path option to out, `%p` replaced by the pid */
void rsan_expand_pid(const char *path, char *out, size_t n);
uint64_t rsan_report_count(void);
void rsan_report_reset(void);
void rsan_report_at_exit(void);
const char *rsan_order_name(int order);

#endif /* RSAN_INTERNAL_H */
