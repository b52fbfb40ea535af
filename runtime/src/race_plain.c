/* The race detector's plain-access hooks (rsan_interface.h's __rsan_read_N, __rsan_write_N and
 * the range hooks): the fast cases of a plain access to one granule, then the scan of its cells
 * (rsan_race_cells.h), with race.c's rules (its opening comment). */
#include "rsan_explain.h"
#include "rsan_race_cells.h"

/* ---- ABI: plain accesses (rsan_interface.h), called before the access ----
 * The hook handles the common case itself, in one scan of the granule's cells: a registered
 * thread, an access inside one granule, shadow already mapped. That is also the case of a
 * loop touching its own data again after a lock round (every release bumps the epoch, so
 * such accesses miss the same-epoch shortcut of cells_fast and must re-record the cell):
 * checking it inline costs the cells' loads and one store, no vector-clock work (an own
 * cell needs no clock, another thread's cell one entry of C). Everything else (first use,
 * ranges, unaligned accesses, reports) is the out-of-line slow path. */
static RSAN_NOINLINE void plain_slow(void *p, uint64_t n, int wr, uint64_t site, uintptr_t fa) {
  if (!on()) return; /* also before start-up: flags not read yet */
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_fast();
  uintptr_t a = (uintptr_t)p;
  if (RSAN_LIKELY(n && (a & 7) + n <= 8 && t->race_cur)) { /* one granule */
    RSAN_EXPLAIN(rsan_explain_plain(t, a, n, wr, site));
    rsan_cell *c = rsan_shadow_cells_fast(a);
    if (!c) return;
    hit h;
    h.found = 0; /* the other fields are set with it */
    uint32_t mask = (uint32_t)(((1u << n) - 1) << (a & 7)) & 0xff;
    uint64_t cur = w_pack(t->race_epoch, rsan_race_index(t), mask, wr, 0);
    if (!cells_fast(t, c, cur, mask, wr, 0, site, fa))
      rsan_race_scan_main(t, c, a & ~(uintptr_t)7, mask, wr, t->race_epoch, site, fa, &h);
    if (RSAN_UNLIKELY(h.found)) rsan_race_report_hit(t, &h, n, wr, 0, site, fa);
    return;
  }
  rsan_race_access(t, a, n, wr, 0, rsan_race_epoch(t), site, fa); /* explains itself */
}

/* The hook's common case, with no call on its way (so that it saves no registers): races on
 * and the explain log off (report_races is 2 while the log is on, explain.c, so one word says
 * both), a registered thread whose slot a cell can hold, an access inside one granule whose
 * shadow region is mapped, and a fast case of cells_fast. 1: done; 0: plain_more. */
static inline __attribute__((always_inline)) rsan_cell *plain_cells(void *p, uint32_t n, rsan_thread **tp) {
  rsan_thread *t = rsan_tls_current;
  uintptr_t a = (uintptr_t)p;
  rsan_cell **d = __atomic_load_n(&rsan_shadow_directory, __ATOMIC_ACQUIRE);
  rsan_cell *c;
  if (RSAN_UNLIKELY(rsan_flag.report_races != 1 || !t ||
                    rsan_tls_epoch != __atomic_load_n(&rsan_thread_generation, __ATOMIC_RELAXED) ||
                    !t->race_cur || (a & 7) + n > 8 || (a >> RSAN_SHADOW_USER_BITS) || !d ||
                    !(c = __atomic_load_n(&d[a >> RSAN_SHADOW_REGION_SHIFT], __ATOMIC_ACQUIRE))))
    return NULL;
  *tp = t;
  return c + rsan_shadow_offset(a);
}

/* 1: done; 0: plain_more (the gating failed); -1: the gating passed, cells_fast did not */
static inline __attribute__((always_inline)) int plain_fast(void *p, uint32_t n, int wr, uint64_t site,
                                                            uintptr_t fa) {
  rsan_thread *t;
  rsan_cell *c = plain_cells(p, n, &t);
  if (RSAN_UNLIKELY(!c)) return 0;
  uint32_t mask = (uint32_t)(((1ull << n) - 1) << ((uintptr_t)p & 7)) & 0xff;
  return cells_fast(t, c, t->race_cur | (uint64_t)mask << W_MASK_SHIFT | (wr ? W_WRITE : 0), mask, wr, 0,
                    site, fa)
             ? 1
             : -1;
}

/* A plain read cur that cells_fast did not settle, without the scan in its common cases: data
 * that several threads read, with a write among the cells that happens before cur (main's
 * initialising write of a global, read by every thread after it was created: cells_fast's
 * read-only case needs no write at all), or with more than four readers (a marked granule:
 * cells_fast never takes one). One pass over the main cells, which returns 0 (the scan
 * reports) at another thread's write on common bytes that does not happen before cur, and 1
 * at a cell that holds cur or this thread's access at this epoch that subsumes it (where the
 * scan returns too). Then cur is stored where the scan may store it: in this thread's own main
 * cell of its kind, which cur covers (the scan's first choice; with a mark, only while the
 * block holds no write: a read conflicts only with writes), else, with a mark, in its lane
 * (race_overflow.c; the scan would take another thread's covered cell that happens before cur,
 * or a shared cell of the block: a choice among cells the replacement rule lets go, or an
 * empty one). The scan would also free the other cells cur covers and happens after: an
 * optimisation this path skips (but for a write below the floor). 1: done; 0: the scan decides. */
static RSAN_NOINLINE int read_ordered(rsan_thread *t, rsan_cell *c, uint64_t cur, uint64_t site,
                                      uintptr_t fa) {
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT, low = (1ull << W_CLOCK_SHIFT) - 1;
  uint32_t mask = w_mask(cur);
  uint64_t mark = 0, dead_w = 0, free_w = 0;
  int k = -1, dead = -1, free = -1;
  for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED), x = w ^ cur;
    if (!w) {
      if (free < 0) free = i, free_w = 0;
      break;
    }
    if (!x) return 1;
    if (x & slot_bits) {
      if (w_tid(w) == MARK_TID) {
        mark = w;
      } else if (w == W_FREED) {
        if (free < 0) free = i, free_w = w;
      } else if ((w & W_WRITE) && (w_mask(w) & mask)) {
        if (w_clock(w) > rsan_vc_get(&t->C, w_tid(w))) return 0;
        dead = i, dead_w = w;
      }
      continue;
    }
    if (!(x >> W_CLOCK_SHIFT) && !(mask & ~w_mask(w)) && !(w & W_ATOMIC)) return 1; /* subsumed */
    if (!(x & low)) k = i; /* its own cell of this kind */
  }
  /* A write below the floor (race_floor.c: it happens before every access of every live and
   * future thread, so it can race with nothing any more; main's initialising write of a
   * global) is freed, so that the granule's later reads take cells_fast's read-only case. */
  if (dead >= 0 && (rsan_race_floor_cached(&dead_w, 1) == 0 || rsan_race_floor_recompute(&dead_w, 1) == 0))
    __atomic_compare_exchange_n(&c[dead], &dead_w, W_FREED, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_ACQUIRE); /* a mark's flags (rsan_race.h) */
  if (k >= 0) {
    if (mark & MARK_WRITES) return 0;
    renew_cell(t, c, k, cur, site, fa);
    return 1;
  }
  if (!mark) return free >= 0 && take_cell(t, c, free, free_w, cur, site, fa);
  int r = rsan_race_overflow_lane(t, c, mark, cur, site, fa);
  if (r == 2) note_site_stack(t, site, fa);
  return r != 0;
}

/* read_shared's end with no mark, out of line (its common case, a crowded granule, stays a
 * leaf with few registers): the first freed or empty cell of c, taken by take_cell (what the
 * pass found is what read_ordered would take). 1: done, 0: the scan decides. */
static RSAN_NOINLINE int read_take(rsan_thread *t, rsan_cell *c, uint64_t cur, uint64_t site, uintptr_t fa) {
  for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
    if (!w || w == W_FREED) return take_cell(t, c, i, w, cur, site, fa);
  }
  return 0;
}

/* read_ordered's common case at many threads, without a clock read or a call: a granule that
 * more than four threads read (a global that every thread reads, written before they were
 * created: the mark of its overflow block among the main cells) and that no write has reached
 * since (no write on common bytes among the main cells, the block's writes flag clear). A read
 * conflicts only with writes, so there is nothing to check; cur is stored where read_ordered
 * stores it: this thread's own main cell of its kind, else its lane (rsan_race_lane_take; a
 * lane not allocated yet is read_ordered's). Every return 1 is one of read_ordered's, reached
 * after the same cells; anything else (a write among the main cells, whose clock read_ordered
 * reads; no mark; a block with writes) is read_ordered's. 1: done; 0: read_ordered decides. */
static inline __attribute__((always_inline)) int read_shared(rsan_thread *t, rsan_cell *c, uint64_t cur,
                                                             uint64_t site, uintptr_t fa) {
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT, low = (1ull << W_CLOCK_SHIFT) - 1;
  uint32_t mask = w_mask(cur);
  uint64_t mark = 0;
  int k = -1;
#pragma GCC unroll 4
  for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED), x = w ^ cur;
    if (!w) break;
    if (x & slot_bits) { /* another thread's cell, a mark (W_WRITE, no bytes) or a freed one */
      if (w & W_WRITE) {
        if (w_tid(w) == MARK_TID) mark = w;
        else if (w_mask(w) & mask) return 0; /* a write to check */
      }
      continue;
    }
    if (!x) return 1;
    if (!(x >> W_CLOCK_SHIFT) && !(mask & ~w_mask(w)) && !(w & W_ATOMIC)) return 1; /* subsumed */
    if (!(x & low)) k = i; /* its own cell of this kind */
  }
  __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the mark's flags (rsan_race.h) */
  if (mark & MARK_WRITES) return 0;
  if (k >= 0) {
    renew_cell(t, c, k, cur, site, fa);
    return 1;
  }
  if (!mark) return read_take(t, c, cur, site, fa);
  rsan_lane *ln = rsan_race_lane(rsan_race_mark_block(mark), w_tid(cur));
  if (!ln) return 0;
  int r = rsan_race_lane_take(c, mark, ln, cur, 0, 0, site);
  if (r == 2 && fa && site) note_site_stack(t, site, fa);
  return r != 0;
}

/* The plain write cur (w_pack) to the main cells c that cells_fast did not settle, without the
 * scan in its common case: every cell this thread's access or one that happens before cur (a
 * slot of a ring that threads hand over by a release and an acquire, mpmc_queue.c's `value`;
 * a stack variable written again after a release). scan_cells (main = record = 1, at = 0)
 * step for step, without the report state: a mark (the overflow block), another thread's cell
 * on common bytes that does not happen before cur (the scan reports it) or a full granule with
 * no cell to take: 0, the scan decides. Else cur is stored where the scan stores it (its own
 * covering plain cell, one of the same bytes and kind first; else the first other thread's
 * cell it covers that happens before it, by compare-and-swap; else the first empty cell) and
 * the other cells it covers and happens after are freed (as scan_cells frees them). 1: done. */
static inline __attribute__((always_inline)) int write_ordered(rsan_thread *t, rsan_cell *c, uint64_t cur,
                                                               uint64_t site, uintptr_t fa) {
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT;
  uint32_t mask = w_mask(cur), dom = 0;
  uint64_t seen[RSAN_SHADOW_CELLS], slot_w = 0;
  int slot = -1, rank = 0, i;
#pragma GCC unroll 4
  for (i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED), x = w ^ cur;
    if (!w) break;
    if (!x) return 1;
    uint32_t cm = w_mask(w);
    int covers = !(cm & ~mask); /* a plain write covers every access of its bytes */
    seen[i] = w;
    if (!(x & slot_bits)) { /* its own: program order */
      if (!(x >> W_CLOCK_SHIFT) && !(mask & ~cm) && (w & W_WRITE) && !(w & W_ATOMIC)) return 1; /* subsumed */
      int r = 1 + (cm == mask && (w & W_WRITE));
      if (covers) dom |= 1u << i;
      if (covers && !(w & W_ATOMIC) && r >= rank) slot = i, slot_w = w, rank = r;
      continue;
    }
    if (RSAN_UNLIKELY(w_tid(w) == MARK_TID)) return 0;
    if (!(cm & mask) && !covers) continue; /* neither conflicting nor covered */
    if (w_clock(w) > rsan_vc_get(&t->C, w_tid(w)))
      return 0; /* on common bytes: a race (a freed cell is at 0) */
    if (covers) {
      dom |= 1u << i;
      if (slot < 0) slot = i, slot_w = w;
    }
  }
  if (slot < 0) {
    if (i == RSAN_SHADOW_CELLS) return 0; /* full: the floor, the overflow block */
    slot = i;
  }
  if (slot_w && !((slot_w ^ cur) & slot_bits)) renew_cell(t, c, slot, cur, site, fa);
  else if (!take_cell(t, c, slot, slot_w, cur, site, fa)) return 0;
  dom &= ~(1u << slot);
  while (RSAN_UNLIKELY(dom)) {
    int j = __builtin_ctz(dom);
    dom &= dom - 1;
    if (seen[j] != W_FREED)
      __atomic_compare_exchange_n(&c[j], &seen[j], W_FREED, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  }
  return 1;
}

/* Everything plain_fast did not do: the scan of the granule's cells, or plain_slow. */
static inline __attribute__((always_inline)) void plain_more(void *p, uint32_t n, int wr, uint64_t site,
                                                             uintptr_t fa) {
  rsan_thread *t;
  rsan_cell *c = plain_cells(p, n, &t);
  if (!c) {
    plain_slow(p, n, wr, site, fa);
    return;
  }
  uintptr_t a = (uintptr_t)p;
  uint32_t mask = (uint32_t)(((1ull << n) - 1) << (a & 7)) & 0xff;
  if (!wr && read_ordered(t, c, t->race_cur | (uint64_t)mask << W_MASK_SHIFT, site, fa)) return;
  hit h;
  h.found = 0; /* the other fields are set with it */
  scan_cells(t, c, rsan_cell_site(c), RSAN_SHADOW_CELLS, 1, 1, a & ~(uintptr_t)7, mask, wr, 0, t->race_epoch,
             site, fa, &h);
  if (RSAN_UNLIKELY(h.found)) rsan_race_report_hit(t, &h, n, wr, 0, site, fa);
}

/* The cells of a and the cell word of thread t's access of n bytes there, found again for a
 * hook whose gating (plain_cells) passed an instant before on this thread and whose
 * cells_fast did not settle the access: the thread, its slot and the flags are what the hook
 * saw (a region is unmapped only by a reset of the whole shadow, rsan_shadow_reset_all: then
 * NULL). */
static inline __attribute__((always_inline)) rsan_cell *lane_cells(uintptr_t a) {
  rsan_cell **d = __atomic_load_n(&rsan_shadow_directory, __ATOMIC_ACQUIRE);
  rsan_cell *c;
  if (RSAN_UNLIKELY(!d || !(c = __atomic_load_n(&d[a >> RSAN_SHADOW_REGION_SHIFT], __ATOMIC_ACQUIRE))))
    return NULL;
  return c + rsan_shadow_offset(a);
}
static inline __attribute__((always_inline)) uint64_t lane_cell(const rsan_thread *t, uintptr_t a,
                                                                uint32_t n) {
  uint32_t mask = (uint32_t)(((1ull << n) - 1) << (a & 7)) & 0xff;
  return t->race_cur | (uint64_t)mask << W_MASK_SHIFT;
}
/* read_shared for such a hook: 1 done, 0 read_more decides */
static inline __attribute__((always_inline)) int read_lane(void *p, uint32_t n, uint64_t site, uintptr_t fa) {
  rsan_thread *t = rsan_tls_current;
  rsan_cell *c = lane_cells((uintptr_t)p);
  return c ? read_shared(t, c, lane_cell(t, (uintptr_t)p, n), site, fa) : 0;
}

/* write_ordered for a write hook whose gating passed and whose cells_fast did not settle the
 * write, as read_lane for reads. 1 done, 0 write_more decides. */
static inline __attribute__((always_inline)) int write_lane(void *p, uint32_t n, uint64_t site,
                                                            uintptr_t fa) {
  rsan_thread *t = rsan_tls_current;
  rsan_cell *c = lane_cells((uintptr_t)p);
  return c ? write_ordered(t, c, lane_cell(t, (uintptr_t)p, n) | W_WRITE, site, fa) : 0;
}

/* A hook: its fast case (plain_fast), else, as tail calls (the frame address, fa, stays the
 * hook's), for a read that passed the gating read_shared_N (read_shared, a leaf in its common
 * case, with none of the scan's registers), then KIND_more_N (the rest). */
#define RSAN_DEF_PLAIN_MORE(KIND, WR, N) \
  static RSAN_NOINLINE void KIND##_more_##N(void *p, uint64_t site) { \
    plain_more(p, N, WR, site, (uintptr_t)__builtin_frame_address(0)); \
  }
#define RSAN_DEF_PLAIN_HOOK(KIND, WR, N, NEXT) \
  RSAN_EXPORT RSAN_NOINLINE void __rsan_##KIND##_##N(void *p, uint64_t site) { \
    int r = plain_fast(p, N, WR, site, (uintptr_t)__builtin_frame_address(0)); \
    if (RSAN_LIKELY(r > 0)) return; \
    if (r < 0) RSAN_MUSTTAIL return NEXT##_##N(p, site); \
    RSAN_MUSTTAIL return KIND##_more_##N(p, site); \
  }
#define RSAN_DEF_PLAIN(N) \
  RSAN_DEF_PLAIN_MORE(read, 0, N) \
  static RSAN_NOINLINE void read_shared_##N(void *p, uint64_t site) { \
    if (RSAN_LIKELY(read_lane(p, N, site, (uintptr_t)__builtin_frame_address(0)))) return; \
    RSAN_MUSTTAIL return read_more_##N(p, site); \
  } \
  RSAN_DEF_PLAIN_HOOK(read, 0, N, read_shared) \
  RSAN_DEF_PLAIN_MORE(write, 1, N) \
  static RSAN_NOINLINE void write_shared_##N(void *p, uint64_t site) { \
    if (RSAN_LIKELY(write_lane(p, N, site, (uintptr_t)__builtin_frame_address(0)))) return; \
    RSAN_MUSTTAIL return write_more_##N(p, site); \
  } \
  RSAN_DEF_PLAIN_HOOK(write, 1, N, write_shared)
RSAN_DEF_PLAIN(1)
RSAN_DEF_PLAIN(2)
RSAN_DEF_PLAIN(4)
RSAN_DEF_PLAIN(8)
RSAN_DEF_PLAIN(16)

RSAN_EXPORT RSAN_NOINLINE void __rsan_read_range(void *p, uint64_t n, uint64_t site) {
  plain_slow(p, n, 0, site, (uintptr_t)__builtin_frame_address(0));
}
RSAN_EXPORT RSAN_NOINLINE void __rsan_write_range(void *p, uint64_t n, uint64_t site) {
  plain_slow(p, n, 1, site, (uintptr_t)__builtin_frame_address(0));
}