/* The race detector's shadow cells and clocks, shared by race.c (the checks of the main cells;
 * the scan in rsan_race_cells.h), race_plain.c (the plain-access hooks), race_clock.c (the clock rules), race_overflow.c (the overflow blocks of crowded
 * granules), race_floor.c, race_free.c and vclock.c. */
#ifndef RSAN_RACE_H
#define RSAN_RACE_H

#include "rsan_internal.h"

/* race reports on (rsan_flag.report_races: 1, or 2 while the explain log is on) */
static inline int rsan_race_on(void) { return rsan_flag.report_races; }

/* A cell: clock (38 bits) | thread slot (16) | byte mask (8) | write | atomic; 0 is empty. */
#define W_ATOMIC 1ull
#define W_WRITE 2ull
#define W_MASK_SHIFT 2
#define W_TID_SHIFT 10
#define W_CLOCK_SHIFT 26
#define TID_MASK 0xffffu
#define MAX_TID 0xfffd /* tids 0xfffe and 0xffff are not threads: */
#define MARK_TID 0xffffu /* a granule with overflow cells (race_overflow.c) */
#define FREE_TID 0xfffeu /* a freed cell (W_FREED) */

static inline uint64_t w_pack(uint64_t clock, uint32_t tid, uint32_t mask, int wr, int at) {
  return clock << W_CLOCK_SHIFT | (uint64_t)tid << W_TID_SHIFT | (uint64_t)mask << W_MASK_SHIFT |
         (wr ? W_WRITE : 0) | (at ? W_ATOMIC : 0);
}
/* A freed cell: one whose access another cell of the granule stands for (race.c, "Replacement":
 * the access it happens before and that covers it). Neither empty (the first empty cell ends a
 * granule's used cells) nor an access: no bytes (it conflicts with nothing), epoch 0 (it happens
 * before every access), atomic and no write (every access covers it), so the scan gives it to
 * the next access that needs a cell. */
#define W_FREED ((uint64_t)FREE_TID << W_TID_SHIFT | W_ATOMIC)

static inline uint64_t w_clock(uint64_t w) { return w >> W_CLOCK_SHIFT; }
static inline uint32_t w_tid(uint64_t w) { return (uint32_t)(w >> W_TID_SHIFT) & TID_MASK; }
static inline uint32_t w_mask(uint64_t w) { return (uint32_t)(w >> W_MASK_SHIFT) & 0xff; }

/* The first conflicting unordered cell an access found (found == 0: none), for the report. */
typedef struct rsan_race_hit {
  int found;
  uintptr_t addr;
  uint64_t word, site;
} rsan_race_hit;

/* race_overflow.c. The granule g's main cells c are marked (mark: the mark cell) or full
 * (main_slot < 0: no cell this access may take). Checks the access against the overflow
 * block; records it there when main_slot < 0 (marking the granule first if needed).
 * 1: recorded in the block; 0: the caller records it in the main cells (at main_slot, or by
 * eviction when no block can be had); -1: the main cells changed meanwhile, scan them again. */
int rsan_race_overflow(rsan_thread *t, rsan_cell *c, uintptr_t g, uint32_t mask, int wr, int at,
                       uint64_t epoch, uint64_t site, uintptr_t fa, rsan_race_hit *h, uint64_t mark,
                       int main_slot);
/* atomic_fast: the atomic access cur (w_pack; bytes mask) of a marked granule (mark) whose main
 * cells it may not take and whose block holds no plain cell, in the block as the scan would
 * record it there: 1 when a cell of the block is this thread's atomic access at cur's epoch that
 * subsumes cur (nothing to do) or this thread's atomic access that cur covers (the last of
 * cur's kind, else the last such, takes cur); 0 when the scan must decide. */
int rsan_race_overflow_atomic_own(uint64_t mark, uint64_t cur, uint32_t mask, int wr, uint64_t site);
/* An access cur (w_pack) of a marked granule (c: its main cells, mark: its mark) whose main
 * cells it need not check further and takes none of, in its slot's lane of the overflow block
 * (docs/design/races.md §9): 1 done, 2 done and the site changed (the caller remembers its call
 * stack), 0 the scan decides. */
int rsan_race_overflow_lane(rsan_thread *t, rsan_cell *c, uint64_t mark, uint64_t cur, uint64_t site,
                            uintptr_t fa);
/* free(): the first cell of the overflow block of g (mark: its mark) that does not happen
 * before t, into h; 1 if there is one. */
int rsan_race_overflow_unordered(rsan_thread *t, uintptr_t g, uint64_t mark, rsan_race_hit *h);

/* race_overflow.c's blocks (docs/design/races.md §9, §12). Beside its RSAN_OVF_CELLS shared
 * cells a block has, per thread slot below RSAN_LANE_CHUNKS * RSAN_LANE_SLOTS, a *lane*: one cell
 * for the slot's reads (plain or atomic) and one for its atomic writes, at a fixed place, so
 * that a thread finds its own cell without scanning the block and an access of a granule that
 * many threads read, or many threads' atomic accesses, costs the same at 64 threads as at 5. A
 * slot's lane is written only by the thread of that slot (and cleared when the block is
 * emptied). The first RSAN_LANE_SLOTS slots' lanes are packed by slot (rsan_race_lanes: slot
 * u's lanes of blocks i and i + 1 are neighbours, so a thread's lanes of granules that crowd one
 * after the other, e.g. a ring's slots, share its lines: docs/design/races.md §15); a chunk of
 * the next RSAN_LANE_SLOTS slots is allocated when one of them is first used. The blocks are one
 * static array (bss: a page is backed only once a block on it is used; blocks are taken in
 * order, so the used ones are dense), so a mark names its block by its index, and a lane's
 * address follows from the mark and the slot with no load. */
#define RSAN_OVF_CELLS 16
#define RSAN_OVF_SLOTS 4096 /* granules with overflow at any time, at most; beyond: eviction */
#define RSAN_LANE_SLOTS 32
#define RSAN_LANE_CHUNKS 32 /* slots 0..1023 have lanes; others use the shared cells only */
typedef struct rsan_lane {
  rsan_cell cells[2]; /* [0]: a read, [1]: an atomic write; 0 is empty */
  uint64_t sites[2];  /* beside the cells: one line for the check and the store */
} rsan_lane;
_Static_assert(sizeof(rsan_lane) == 32, "two lanes to a line (rsan_lane_at)");
typedef struct rsan_lane_chunk {
  rsan_lane slot[RSAN_LANE_SLOTS]; /* by position: rsan_lane_at */
} rsan_lane_chunk;
/* Slot k's lane in a chunk (k < RSAN_LANE_SLOTS). Two lanes share a line: slots k and k + 16,
 * so that the first 16 slots of a chunk (every thread of a program with up to 16) each have a
 * line of their own; a lane is written at every access whose epoch changed, and two busy slots
 * on one line moved it between the cores at each (mpmc_queue.c's queue heads). */
static inline rsan_lane *rsan_lane_at(rsan_lane_chunk *ch, uint32_t k) {
  return &ch->slot[(k % (RSAN_LANE_SLOTS / 2)) * 2 + k / (RSAN_LANE_SLOTS / 2)];
}
/* Slots 0..RSAN_LANE_SLOTS - 1's lanes, by slot then block index (bss: a page is backed once a
 * lane on it is written; a slot's lanes of the blocks in use are dense, since blocks are taken in
 * order). Two lanes to a line are then two blocks' of one slot: no line is written by two
 * threads. */
extern rsan_lane rsan_race_lanes[RSAN_LANE_SLOTS][RSAN_OVF_SLOTS];
typedef struct rsan_ovf_block {
  uintptr_t g; /* the granule that owns the block (race_overflow.c's table; under its lock) */
  /* chunks of slots RSAN_LANE_SLOTS.. (lanes[0] unused: slots 0.. are in rsan_race_lanes),
   * allocated on first use, kept (cleared) when the block is emptied */
  rsan_lane_chunk *lanes[RSAN_LANE_CHUNKS];
  rsan_cell cells[RSAN_OVF_CELLS] __attribute__((aligned(64)));
  uint64_t sites[RSAN_OVF_CELLS];
} rsan_ovf_block;
extern rsan_ovf_block rsan_ovf_blocks[RSAN_OVF_SLOTS];
/* the blocks taken so far, rsan_ovf_blocks[0 .. rsan_race_ovf_taken) (race_overflow.c, under its
 * lock; read by the tests) */
extern uint32_t rsan_race_ovf_taken;
/* A mark: tid MARK_TID, W_WRITE and W_ATOMIC, no bytes (it conflicts with nothing), its block's
 * index in rsan_ovf_blocks in the low clock bits, and two flags in the high ones, which
 * replace the block's flags so that the check of the main cells reads them with the mark:
 *   MARK_PLAIN: a plain access may have been put in the block (cells or lanes) since the
 *     granule was marked; while clear, every cell of the block is atomic, so an atomic access
 *     (two atomic accesses never race) has nothing to check there;
 *   MARK_WRITES: a write may have been put there; while clear, a plain read (which conflicts
 *     only with writes) has nothing to check there.
 * Each is set (rsan_race_mark_flag, a CAS of the mark: acq_rel) before a cell of its kind is
 * stored in the block, and read with the mark (then an acquire fence): the protocol the block's
 * flag words had. No other code writes a mark but the reset of the main cells (free, thread
 * exit), which removes it. */
#define MARK_PLAIN (1ull << 62)
#define MARK_WRITES (1ull << 63)
_Static_assert(((uint64_t)RSAN_OVF_SLOTS - 1) << W_CLOCK_SHIFT < MARK_PLAIN,
               "the flags above every block index");
static inline rsan_ovf_block *rsan_race_mark_block(uint64_t mark) {
  return &rsan_ovf_blocks[w_clock(mark) % RSAN_OVF_SLOTS];
}
/* Sets flag in the mark of the main cells c, seen as mark (the same block): 1 done (or already
 * set), 0 the granule is no longer marked (reset meanwhile: the caller's scan decides). */
int rsan_race_mark_flag(rsan_cell *c, uint64_t mark, uint64_t flag);
/* The mark of the main cells c now (0: none), for a check of the block whose flags must be
 * read after its own record (race_overflow.c). */
static inline uint64_t rsan_race_mark_now(rsan_cell *c) {
  for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_ACQUIRE);
    if (w_tid(w) == MARK_TID) return w;
  }
  return 0;
}
/* slot u's lane in b, NULL when u has none or its chunk is not allocated yet */
static inline __attribute__((always_inline)) rsan_lane *rsan_race_lane(rsan_ovf_block *b, uint32_t u) {
  if (RSAN_LIKELY(u < RSAN_LANE_SLOTS)) return &rsan_race_lanes[u][b - rsan_ovf_blocks];
  if (u >= RSAN_LANE_CHUNKS * RSAN_LANE_SLOTS) return NULL;
  rsan_lane_chunk *ch = __atomic_load_n(&b->lanes[u / RSAN_LANE_SLOTS], __ATOMIC_ACQUIRE);
  return ch ? rsan_lane_at(ch, u % RSAN_LANE_SLOTS) : NULL;
}
/* The access cur (a read, or an atomic write; not a plain write) in its slot's lane ln of the
 * block of the marked granule c (mark: its mark), for an access whose main cells were checked
 * (none conflicts with it unordered) and that takes none of them (wr and at: its kind, as in
 * cur), once the caller saw that the block holds nothing cur must check (no MARK_PLAIN for an
 * atomic access, no MARK_WRITES for a plain read):
 *   - the lane is empty (taking an empty cell loses nothing), holds cur at its epoch or an
 *     access of this slot at that epoch that subsumes cur (nothing to do, as in rsan_race_cells.h's
 *     scan_cells), or one that cur covers (replacement rules 1, program order, and 2: its bytes
 *     a subset of cur's, a write only if cur is, atomic if cur is): it takes cur, after the
 *     mark's flags of what it stores (set before the cell, read with the mark by the checks).
 * 1: done; 2: done and the site changed (its call stack to remember); 0: the scan decides. */
static inline __attribute__((always_inline)) int
rsan_race_lane_take(rsan_cell *c, uint64_t mark, rsan_lane *ln, uint64_t cur, int wr, int at, uint64_t site) {
  uint32_t mask = w_mask(cur);
  uint64_t w = __atomic_load_n(&ln->cells[wr], __ATOMIC_RELAXED);
  if (w == cur) return 1;
  if (w) {
    uint32_t cm = w_mask(w);
    int ca = (w & W_ATOMIC) != 0; /* a lane of kind wr holds writes only if wr */
    if (w_clock(w) == w_clock(cur) && !(mask & ~cm) && ca == at) return 1; /* subsumed at its epoch */
    if ((cm & ~mask) || (at && !ca)) return 0; /* cur does not cover it */
  }
  if (!at && RSAN_UNLIKELY(!(mark & MARK_PLAIN)) && !rsan_race_mark_flag(c, mark, MARK_PLAIN)) return 0;
  if (wr && RSAN_UNLIKELY(!(mark & MARK_WRITES)) && !rsan_race_mark_flag(c, mark, MARK_WRITES)) return 0;
  int same = __atomic_load_n(&ln->sites[wr], __ATOMIC_RELAXED) == site;
  if (!same) __atomic_store_n(&ln->sites[wr], site, __ATOMIC_RELAXED); /* the site first, as in scan_cells */
  __atomic_store_n(&ln->cells[wr], cur, __ATOMIC_RELEASE);
  return same ? 1 : 2;
}

/* report_race.c: the previous access's call stack into r, if its thread still remembers one for its
 * site (read while that thread may run: a report may then show a stack of a later execution
 * of the same site). */
void rsan_race_prev_stack(rsan_race_info *r);

/* race.c: the check (and record, if record) of an access against n cells of an overflow block
 * and their sites, as for main cells but with no mark and no eviction. fa != 0: the call
 * stack of site is remembered when a cell is stored. */
void rsan_race_scan_block(rsan_thread *t, rsan_cell *cells, uint64_t *sites, int n, int record, uintptr_t g,
                          uint32_t mask, int wr, int at, uint64_t epoch, uint64_t site, uintptr_t fa,
                          rsan_race_hit *h);

/* vclock.c: another thread's vector clock, read while its owner may grow it: between
 * rsan_vc_read_lock and rsan_vc_read_unlock no clock array is freed; an entry read is one the
 * clock held (entries only grow: a lower bound of the owner's later values). */
void rsan_vc_read_lock(void);
/* dst ⊔= src and dst := src for a clock that others read (a thread's C): entries written with
 * relaxed atomic stores (rsan_vc_set writes every clock so). The join returns 1 when an entry
 * of dst changed (for a dst of fewer than RSAN_VC_DENSE entries, which is never exported
 * thin, only when it grew) */
int rsan_vc_join_published(rsan_vc *dst, const rsan_vc *src);
void rsan_vc_assign_published(rsan_vc *dst, const rsan_vc *src);
void rsan_vc_read_unlock(void);
uint64_t rsan_vc_read(const rsan_vc *v, uint32_t tid);

/* vclock.c: a location's S_x coded on a shared base (docs/design/races.md §8). A clock of at
 * least RSAN_VC_DENSE entries is kept as 16-bit offsets over an immutable, reference-counted
 * base clock (rsan_vbase) when every entry fits, so that S_x costs 2 bytes per slot instead of
 * 8 (and a doubled array); smaller ones stay dense arrays (the few-thread hot path). Every
 * rsan_vc function reads a coded clock (rsan_vc_join, rsan_vc_join_published, rsan_vc_leq,
 * rsan_vc_at) or replaces it (rsan_vc_assign, rsan_vc_free). A power of 2: (a | b) < it. */
#define RSAN_VC_DENSE 16
typedef struct rsan_vbase rsan_vbase;
/* The bases one thread slot exports one clock on (race_clock.c race_bases; docs/design/races.md
 * §18): cur, the base its thin exports use (full, or over full); full, the full base its
 * offsets are coded on and its bases over are made over. Each holds a reference; written only
 * by the slot's thread. */
typedef struct rsan_vslot {
  rsan_vbase *cur, *full;
} rsan_vslot;
/* A coded S_x (rsan_vc.e when cap == RSAN_VC_CODED): its base, its owner epoch, its offsets.
 * The owner epoch (docs/design/races.md §9): (u, e) when S_x ⊑ Ĉ_u(e), the
 * clock thread slot u exported at epoch e (its C at the release that ended epoch e, or its R
 * of the release fence that did); own = 0: none recorded. Every release bumps the epoch after
 * its one export, so a thread's exports at epoch e are all that one value, and a clock that
 * holds u's entry e or later was joined from an export of u at e or later: it contains Ĉ_u(e).
 * So V[u] >= e implies S_x ⊑ V for every thread's C, R and A (rsan_vc_sx_in), FastTrack's
 * epoch test in place of an O(threads) comparison or join. */
/* A *thin* S_x (docs/design/races.md §10) has no offsets: S_x = B with entry thin - 1 replaced
 * by val, the export of a clock that equals its slot's base B but for its own entry (a thread
 * that acquired nothing new since B was made from its C); B.n == rsan_vc.n. A *sparse* S_x
 * (docs/design/races.md §20; thin 0, sp > 0) is B with sp entries replaced: off[] holds sp pairs
 * (u, d), u ascending, S_x[u] = B[u] + d, every other entry B's; B.n <= rsan_vc.n. So every kind
 * has B[u] <= S_x[u] for every u. */
typedef struct rsan_vcoded {
  rsan_vbase *base;
  uint64_t own; /* the owner epoch: e << 16 | u (e >= 1); 0: none */
  union {
    uint64_t val; /* thin: S_x[thin - 1] */
    uint64_t sp; /* not thin: the pairs of a sparse S_x; 0: the offsets hold every entry */
  };
  uint32_t thin; /* the replaced entry + 1 when thin; 0: sparse or offsets */
  uint32_t noff; /* 16-bit words allocated (off[]); a thin block may have none */
  uint16_t off[]; /* offsets: rsan_vc.n entries, S_x[u] = B[u] + off[u]; sparse: sp pairs */
} rsan_vcoded;
/* the owner epoch word of slot u's export at epoch e (0, none, if it does not fit) */
static inline uint64_t rsan_vc_own(uint32_t u, uint64_t e) {
  return u <= 0xffff && e && e < (1ull << 48) ? e << 16 | u : 0;
}
/* S_x ⊑ v (a thread's C, R or A) by S_x's owner epoch: 1 proves it; 0 tells nothing */
static inline __attribute__((always_inline)) int rsan_vc_sx_in(const rsan_vc *sx, const rsan_vc *v) {
  if (sx->cap != RSAN_VC_CODED) return 0;
  uint64_t own = ((const rsan_vcoded *)(const void *)sx->e)->own;
  return own && rsan_vc_get(v, (uint32_t)own & 0xffff) >= own >> 16;
}
uint64_t rsan_vc_at(const rsan_vc *v, uint32_t u); /* any clock's entry u, coded or not */
/* How an export codes S_x (race_clock.c decides, from what it knows of the exporting C;
 * docs/design/races.md §18, §20): THIN: thin on s->cur, which the caller knows to equal src but
 * for src[slot]; REBASE: s->cur := a new base made from src (over s->full when it fits, else
 * full), then thin; CODE (src moved since the slot's last export, or is an R): sparse over
 * s->cur when at most 64 entries differ, else as REBASE; SAME (src did not move since the
 * slot's last export, and fewer than 4 SAME exports in a row were sparse): sparse when at most 8
 * differ, else as REBASE. Without a slot (s NULL): offsets on a base of its own. */
enum { RSAN_EXPORT_CODE, RSAN_EXPORT_THIN, RSAN_EXPORT_REBASE, RSAN_EXPORT_SAME };
/* S_x := src / S_x ⊔= src (src a thread's C at a release or its R: the export of slot at its
 * epoch src[slot]), coded on s (how): the exporting slot's bases for that clock (NULL: none).
 * S_x := src records the owner epoch (slot, src[slot]); so does S_x ⊔= src when S_x ⊑ src
 * (the join is src); another join records none. Returns 1 when s->cur now equals src but for
 * src[slot] (a new base made from src, or THIN), 2 when SAME made a sparse S_x, 0 when nothing
 * is known; the join returns how == RSAN_EXPORT_THIN when it exported nothing (S_x ⋢ src: s is
 * left as it was). */
int rsan_vc_export(rsan_vc *dst, const rsan_vc *src, rsan_vslot *s, uint32_t slot, int how);
int rsan_vc_join_export(rsan_vc *dst, const rsan_vc *src, rsan_vslot *s, uint32_t slot, int how);
void rsan_vbase_drop(rsan_vbase *b);
/* race_census.c (the census): v's array or coded block in bytes (*thin: 1 a thin coded clock, 2 a
 * sparse one);
 * the shared bases live and their bytes; the shadow mapped and backed */
uint64_t rsan_vc_bytes(const rsan_vc *v, int *thin);
void rsan_vc_census(uint64_t *bases, uint64_t *bytes);
void rsan_vc_census_made(uint64_t *unfit, uint64_t *rebase, uint64_t *over, uint64_t *over_nz,
                         uint64_t *sparse);
void rsan_vc_census_peak(uint64_t *now, uint64_t *peak,
                         uint64_t *peak_bases); /* coded blocks and bases: malloc's bytes */
void rsan_race_census_sample(void); /* race_census.c: malloc's heap at a join (verbosity >= 1) */
void rsan_vc_coded_stats(const rsan_vc *v, uint32_t *n, uint32_t *nonzero, uint32_t *maxoff);
void rsan_shadow_census(uint64_t *mapped_bytes, uint64_t *resident);
void rsan_race_print_census(void); /* verbosity >= 1, at exit */

/* thread.c: fn(t, arg) for every thread record (joined ones too: their clocks are empty),
 * under the lock of the thread list, so that no record is freed meanwhile. */
void rsan_thread_for_each(void (*fn)(rsan_thread *t, void *arg), void *arg);

/* race_floor.c: the floor of each slot (F[u] = min over live threads v of C_v[u]; a cell (u, e)
 * with e <= F[u] happens before every access of every live and future thread). Cached lower
 * bounds, which only grow. */
extern uint64_t rsan_race_floor_of[TID_MASK + 1];
/* The index of a cell of cells[0..n) (seen: what the caller read in them) below the cached
 * floor, or -1. (A mark's slot has no floor; a freed cell's epoch 0 is below any.) */
static inline int rsan_race_floor_cached(const uint64_t *seen, int n) {
  for (int i = 0; i < n; i++) {
    uint64_t c = seen[i];
    if (c && w_tid(c) != MARK_TID &&
        w_clock(c) <= __atomic_load_n(&rsan_race_floor_of[w_tid(c)], __ATOMIC_RELAXED))
      return i;
  }
  return -1;
}
/* The same after recomputing the floor of the cells' slots (now and then: race_floor.c). */
int rsan_race_floor_recompute(const uint64_t *seen, int n);
/* 0 when this thread's next rsan_race_floor_recompute walks the threads (race_floor.c) */
extern __thread uint32_t rsan_race_floor_misses_left __attribute__((tls_model("initial-exec")));
/* Recomputes the floor of every slot at this thread's first call and then once per
 * SX_BUDGET calls (race_floor.c): 1 when it did, 0 when it was not due. */
int rsan_race_floor_sx_miss(void);
/* A coded S_x (docs/design/races.md §17) whose owner epoch (u, e) has e <= F[u]: every live
 * thread's C holds it (C_v[u] >= e, §9), and every later thread starts from a live thread's C,
 * so joining it into any thread's C or A changes nothing that is ever read again, and it may
 * be dropped (S_x := ⊥). 1 when the cached floor (recomputed now and then) shows it. */
static inline int rsan_race_sx_below_floor(const rsan_vc *sx) {
  uint64_t own = ((const rsan_vcoded *)(const void *)sx->e)->own;
  if (!own) return 0;
  uint64_t e = own >> 16, *f = &rsan_race_floor_of[own & 0xffff];
  if (e <= __atomic_load_n(f, __ATOMIC_RELAXED)) return 1;
  return rsan_race_floor_sx_miss() && e <= __atomic_load_n(f, __ATOMIC_RELAXED);
}
/* A test reset (thread.c). */
void rsan_race_floor_reset(void);

/* race.c: rsan_race_access without its first step, rsan_race_atomic_fast (below) */
void rsan_race_access_general(rsan_thread *t, uintptr_t addr, uint64_t size, int wr, int at, uint64_t epoch,
                              uint64_t site, uintptr_t fa);

/* report_race.c: the report of an access (size, wr, at, site; fa: its hook's frame, for its call
 * stack) whose check found h */
void rsan_race_report_hit(rsan_thread *t, const rsan_race_hit *h, uint64_t size, int wr, int at,
                          uint64_t site, uintptr_t fa);

/* race_atomic.c: rsan_race_atomic_cells' end in a marked granule (mark), k its own covering cell or
 * -1 (kw: what the pass saw in it). 1: done, 0: the scan decides. */
int rsan_race_atomic_marked(rsan_thread *t, rsan_cell *c, uint64_t cur, uint64_t site, uint64_t mark, int k,
                            uint64_t kw);

/* race_atomic.c: rsan_race_atomic_cells' end when cur has no own covering cell and no mark is in the
 * granule: another thread's cell or an empty one to take. 1: done, 0: the scan decides. */
int rsan_race_atomic_take(rsan_thread *t, rsan_cell *c, uint64_t cur, uint32_t mask, int wr, uint64_t site);

/* race.c: the two slots a site may have in a thread's table of recent sites' call stacks
 * (two-choice: a site is in at most one of them; race.c rsan_race_record_site_stack places it).
 * A site id is its module's prefix (high 32 bits) | its index in the module (passes/sites.py),
 * and the sites of one loop have nearby indices: the index modulo the table size (mixed with
 * the prefix, which permutes the slots of a module's sites) gives RSAN_SITE_STACKS consecutive
 * sites distinct first slots. The second slot is never the first and differs for two sites
 * RSAN_SITE_STACKS apart (h / RSAN_SITE_STACKS differs by one). Sites that share a slot record
 * their call stack at every access, each evicting the other (docs/design/races.md §19). Which
 * slot a site has changes only which stacks a report can still show. */
static inline uint32_t rsan_race_site_hash(uint64_t site) { return (uint32_t)(site ^ (site >> 32)); }
static inline uint32_t rsan_race_site_slot(uint64_t site) {
  return rsan_race_site_hash(site) % RSAN_SITE_STACKS;
}
static inline uint32_t rsan_race_site_slot2(uint64_t site) {
  uint32_t h = rsan_race_site_hash(site);
  return (h + 1 + h / RSAN_SITE_STACKS % (RSAN_SITE_STACKS - 1)) % RSAN_SITE_STACKS;
}
/* 1 when t remembers the call stack of site at its current depth (in either slot) */
static inline __attribute__((always_inline)) int rsan_race_site_known(const rsan_thread *t, uint64_t site) {
  uint32_t a = rsan_race_site_slot(site);
  if (RSAN_LIKELY(t->site_stack[a].site == site && t->site_stack[a].depth == t->depth)) return 1;
  uint32_t b = rsan_race_site_slot2(site);
  return t->site_stack[b].site == site && t->site_stack[b].depth == t->depth;
}
/* The slot of u's table that holds site (u may be running: relaxed loads), -1 when none does
 * (report_race.c, a report's previous access) */
static inline int rsan_race_site_find(const rsan_thread *u, uint64_t site) {
  uint32_t a = rsan_race_site_slot(site), b = rsan_race_site_slot2(site);
  if (__atomic_load_n(&u->site_stack[a].site, __ATOMIC_RELAXED) == site) return (int)a;
  if (__atomic_load_n(&u->site_stack[b].site, __ATOMIC_RELAXED) == site) return (int)b;
  return -1;
}

/* Main cell k renewed in place with cur (rsan_race_cells.h renew_cell, with no call stack to
 * note): the site first, then the cell (release), so a check that reads the cell finds its site. */
static inline __attribute__((always_inline)) void rsan_race_renew_in_place(rsan_cell *c, int k, uint64_t cur,
                                                                           uint64_t site) {
  uint64_t *cell_site = &rsan_cell_site(c)[k];
  if (__atomic_load_n(cell_site, __ATOMIC_RELAXED) != site)
    __atomic_store_n(cell_site, site, __ATOMIC_RELAXED);
  __atomic_store_n(&c[k], cur, __ATOMIC_RELEASE);
}

/* The steps of rsan_race_atomic_marked (race_atomic.c, where the rule and its exactness are
 * stated), in one place for the function and for the inline case below: the mark's flags, no
 * plain cell in the block; the slot's lane takes cur and the own covering main cell k is freed
 * (a slot's lane chunk not allocated yet: rsan_race_overflow_lane allocates it); else k renewed
 * in place; else the block's shared cells. 1: done, 0: the scan decides. */
static inline __attribute__((always_inline)) int rsan_race_marked_steps(rsan_thread *t, rsan_cell *c,
                                                                        uint64_t cur, uint64_t site,
                                                                        uint64_t mark, int k, uint64_t kw) {
  int wr = (cur & W_WRITE) != 0;
  __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the mark's flags */
  if (mark & MARK_PLAIN) return 0; /* the scan checks the block */
  rsan_lane *ln = rsan_race_lane(rsan_race_mark_block(mark), w_tid(cur));
  if (ln ? rsan_race_lane_take(c, mark, ln, cur, wr, 1, site)
         : rsan_race_overflow_lane(t, c, mark, cur, site, 0)) {
    if (k >= 0) __atomic_compare_exchange_n(&c[k], &kw, W_FREED, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return 1;
  }
  if (k >= 0) {
    rsan_race_renew_in_place(c, k, cur, site);
    return 1;
  }
  return rsan_race_overflow_atomic_own(mark, cur, w_mask(cur), wr, site);
}

/* race_atomic.c: 1 once this thread's atomic access met a crowded (marked) granule, until
 * rsan_race_prefetch finds one that is not (a hint for the prefetch and for the inline case) */
extern __thread uint8_t rsan_race_crowded __attribute__((tls_model("initial-exec")));

/* rsan_race_atomic_marked's common case inline (docs/design/races.md §16): a thread with a lane
 * in rsan_race_lanes (slot below RSAN_LANE_SLOTS: rsan_race_lane never NULL, so the lane chunk
 * branch folds away) that met crowded granules before (the hint is already set). Anything else
 * goes to the function. */
static inline __attribute__((always_inline)) int rsan_race_atomic_marked_i(rsan_thread *t, rsan_cell *c,
                                                                           uint64_t cur, uint64_t site,
                                                                           uint64_t mark, int k,
                                                                           uint64_t kw) {
  if (RSAN_UNLIKELY(w_tid(cur) >= RSAN_LANE_SLOTS || !rsan_race_crowded))
    return rsan_race_atomic_marked(t, c, cur, site, mark, k, kw);
  return rsan_race_marked_steps(t, c, cur, site, mark, k, kw);
}

/* The common case of an atomic access cur (w_pack with at = 1) of the bytes mask to a granule's
 * main cells c: what race.c's scan would do, without its clock reads (but for a conflicting
 * plain cell), CAS or call. C11 [intro.races]: two atomic accesses never race; an atomic and a
 * plain access to common bytes race unless happens-before orders them. So a cell needs its
 * clock read only if it is another thread's plain access that conflicts (common bytes, one of
 * them a write): if that one does not happen before cur, the scan reports it (0). Else, when
 * one cell is this thread's atomic access at cur's epoch that subsumes it, there is nothing to
 * do; when one is this thread's atomic access that cur covers, cur is stored in the cell the
 * scan takes (the last of cur's kind, else the last such; the site only when it changes, so
 * that the sites' line stays shared); nothing is stored when the cell already holds cur. A
 * mark (the granule has overflow cells): rsan_race_atomic_marked decides; no own covering
 * cell: rsan_race_atomic_take. 1: done; 0: the scan decides. */
static inline __attribute__((always_inline)) int
rsan_race_atomic_cells(rsan_thread *t, rsan_cell *c, uint64_t cur, uint32_t mask, int wr, uint64_t site) {
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT, low = (1ull << W_CLOCK_SHIFT) - 1;
  int k = -1, same = 0;
  uint64_t mark = 0, kw = 0;
#pragma GCC unroll 4
  for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
    if (!w) break; /* the first empty cell ends the used ones */
    /* a freed cell stands for no access: it conflicts with nothing, is no thread's and no
     * mark, so every test below passes it by (the branch for another thread's atomic cell);
     * tested first, since a crowded granule's main cells are mostly freed ones (its threads'
     * accesses moved to their lanes: rsan_race_atomic_marked) */
    if (w == W_FREED) continue;
    if (w == cur) return 1; /* this very access */
    uint64_t x = w ^ cur;
    if (x & slot_bits) { /* another thread's, or a mark */
      if (RSAN_UNLIKELY(!(w & W_ATOMIC))) { /* plain: fine if it happens before cur */
        if ((w_mask(w) & mask) && ((w & W_WRITE) || wr) && w_clock(w) > rsan_vc_get(&t->C, w_tid(w)))
          return 0;
        continue;
      }
      if (RSAN_UNLIKELY(w_tid(w) == MARK_TID)) mark = w; /* more cells in the overflow block */
      continue;
    }
    if (RSAN_UNLIKELY(!(w & W_ATOMIC))) continue; /* own plain cell: never replaced by an atomic one */
    if (!(x & low)) { /* the same kind at another epoch */
      k = i, same = 1, kw = w;
      continue;
    }
    uint32_t cm = w_mask(w);
    int cw = (w & W_WRITE) != 0;
    if (!(x >> W_CLOCK_SHIFT) && !(mask & ~cm) && cw >= wr) return 1; /* subsumed at its epoch */
    if (!same && !(cm & ~mask) && (wr || !cw)) k = i, kw = w;
  }
  if (RSAN_UNLIKELY(mark)) return rsan_race_atomic_marked_i(t, c, cur, site, mark, k, kw);
  if (RSAN_UNLIKELY(k < 0)) return rsan_race_atomic_take(t, c, cur, mask, wr, site);
  rsan_race_renew_in_place(c, k, cur, site);
  return 1;
}


/* The lines an atomic access of p will use in the race detector, prefetched by the atomic entry
 * points (atomic.c) once they hold the location's lock, so that their misses overlap the
 * engine's work instead of following it: the granule's cells (with intent to write: the
 * access renews its cell whenever its epoch changed), and S_x's entries (read by every load
 * and RMW, written by every store). No effect on any value (docs/design/races.md §11).
 * Returns the granule's main cells, which the entry point hands to rsan_race_atomic_at at the
 * end of the operation (docs/design/races.md §16: one lookup of the shadow per atomic access),
 * or NULL when races are off, the address is beyond the user space or its region is not
 * mapped yet (then rsan_race_access_general decides, and maps it). */
static inline __attribute__((always_inline)) rsan_cell *rsan_race_prefetch(const rsan_loc *l, const void *p) {
  if (!rsan_race_on()) return NULL;
  uintptr_t addr = (uintptr_t)p;
  rsan_cell **d = __atomic_load_n(&rsan_shadow_directory, __ATOMIC_ACQUIRE);
  rsan_cell *c;
  if (l->S.n) __builtin_prefetch(l->S.e);
  if (RSAN_UNLIKELY(!d || (addr >> RSAN_SHADOW_USER_BITS) ||
                    !(c = __atomic_load_n(&d[addr >> RSAN_SHADOW_REGION_SHIFT], __ATOMIC_ACQUIRE))))
    return NULL;
  c += rsan_shadow_offset(addr);
  __builtin_prefetch(c, 1);
  /* a crowded granule's accesses go to their lanes (rsan_race_atomic_marked): the lane's
   * address follows from the mark and the slot (rsan_race_lane), so its line is fetched now
   * too, once the cells are read (a line that only this thread writes, but one per crowded
   * granule and thread: often out of the nearest cache). Only while this thread's atomic
   * accesses meet crowded granules (rsan_race_crowded, set by rsan_race_atomic_marked,
   * cleared here when the cells hold no mark): elsewhere the cells are not read here. */
  if (!rsan_race_crowded) return c;
  rsan_thread *t = rsan_tls_current;
#pragma GCC unroll 4
  for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
    if (!w) break;
    if (RSAN_UNLIKELY(w_tid(w) == MARK_TID)) {
      uint32_t u = t ? w_tid(t->race_cur) : RSAN_LANE_SLOTS;
      if (u < RSAN_LANE_SLOTS) __builtin_prefetch(&rsan_race_lanes[u][w_clock(w) % RSAN_OVF_SLOTS], 1);
      return c;
    }
  }
  rsan_race_crowded = 0;
  return c;
}

/* rsan_race_access's first step for an atomic access (at = 1) whose granule's main cells c the
 * caller found (rsan_race_prefetch, or the directory in rsan_race_atomic_fast: a region's
 * cells never move once mapped, so the two are the same cells), inline and without any call in
 * its common case: 1 when it is done, 0 when rsan_race_access_general must decide (from the
 * start). The caller checked that race reports are on. It takes an access of one granule
 * whose site's call stack this thread already remembers (rsan_race_cells.h note_site_stack
 * would do nothing) and that rsan_race_atomic_cells settles. docs/design/races.md section 7. */
static inline __attribute__((always_inline)) int rsan_race_atomic_at(rsan_thread *t, rsan_cell *c,
                                                                     uintptr_t addr, uint64_t size, int wr,
                                                                     uint64_t epoch, uint64_t site) {
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT;
  uint64_t me = t->race_cur; /* 0: a thread whose slot a cell cannot hold */
  /* size - 1 < 8 - (addr & 7): 1 <= size and the access ends in addr's granule */
  if (RSAN_UNLIKELY(!me || size - 1 >= 8 - (addr & 7))) return 0;
  if (site && RSAN_UNLIKELY(!rsan_race_site_known(t, site))) return 0;
  uint32_t mask = (uint32_t)(((1ull << size) - 1) << (addr & 7)) & 0xff;
  uint64_t cur = epoch << W_CLOCK_SHIFT | (me & slot_bits) | (uint64_t)mask << W_MASK_SHIFT |
                 (wr ? W_WRITE : 0) | W_ATOMIC;
  return rsan_race_atomic_cells(t, c, cur, mask, wr, site);
}

/* The same, finding the cells itself (rsan_race_access: an atomic access with no prefetch). */
static inline __attribute__((always_inline)) int
rsan_race_atomic_fast(rsan_thread *t, uintptr_t addr, uint64_t size, int wr, uint64_t epoch, uint64_t site) {
  if (RSAN_UNLIKELY(addr >> RSAN_SHADOW_USER_BITS)) return 0;
  rsan_cell **d = __atomic_load_n(&rsan_shadow_directory, __ATOMIC_ACQUIRE);
  rsan_cell *c;
  if (RSAN_UNLIKELY(!d || !(c = __atomic_load_n(&d[addr >> RSAN_SHADOW_REGION_SHIFT], __ATOMIC_ACQUIRE))))
    return 0;
  return rsan_race_atomic_at(t, c + rsan_shadow_offset(addr), addr, size, wr, epoch, site);
}

#endif /* RSAN_RACE_H */
