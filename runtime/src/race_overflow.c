/* Overflow blocks of the race detector's shadow (race.c checks the main cells; rsan_race.h).
 *
 * When every cell of a granule holds an access of another thread that this access may not
 * replace (more than RSAN_SHADOW_CELLS concurrent accessors, e.g. 8 threads reading one
 * variable), one cell moves to an overflow block of OVF_CELLS more cells (a static array of
 * blocks taken in order, found by granule through a table by hash) and is replaced by a mark
 * (tid MARK_TID, the block's index, the flags of what the block may hold: rsan_race.h):
 * accesses of a marked granule are also checked against the block, and recorded there when
 * the main cells are full. The mark is cleared with the main cells (free, thread exit), which
 * orphans the block; a block is emptied when it is marked again. Beyond OVF_SLOTS granules with overflow at once, or where the
 * OVF_PROBES slots from a granule's hash are taken, the main cells evict (race.c scan_cells):
 * a miss, never a false report.
 *
 * C11 [intro.races]: two atomic accesses never race; an atomic and a plain access to common
 * bytes race unless happens-before orders them. So an atomic access that is not recorded in
 * a block skips the check of a block that holds no plain cell (`plain`). */
#include <string.h>

#include "rsan_race.h"

/* The block's layout (ovf_block, its lanes) and the lane's take are in rsan_race.h, so that
 * race.c's reads and atomic accesses find their lane inline. */
#define OVF_CELLS RSAN_OVF_CELLS
#define OVF_SLOTS RSAN_OVF_SLOTS
#define LANE_SLOTS RSAN_LANE_SLOTS
#define LANE_CHUNKS RSAN_LANE_CHUNKS
typedef rsan_lane lane;
typedef rsan_lane_chunk lane_chunk;
typedef rsan_ovf_block ovf_block;
/* The blocks, taken in order (rsan_race_ovf_taken: the next one), so that the pages of the array a
 * program backs are those of the blocks it uses (docs/design/races.md §13); a block, once
 * taken, stays its granule's (an orphan is emptied when its granule is marked again). */
rsan_ovf_block rsan_ovf_blocks[RSAN_OVF_SLOTS];
rsan_lane rsan_race_lanes[RSAN_LANE_SLOTS][RSAN_OVF_SLOTS] __attribute__((aligned(64)));
/* open addressing by granule: ovf_table[h] is the index + 1 of the block of a granule whose
 * probe sequence passes h, 0 where no granule took the slot; one slot per block, so that a
 * slot is taken exactly where the block of the same index was taken when the blocks sat by
 * hash (the same granules get a block) */
static uint16_t ovf_table[RSAN_OVF_SLOTS];
_Static_assert(RSAN_OVF_SLOTS <= 0xffff, "a slot holds a block's index + 1");
uint32_t rsan_race_ovf_taken; /* rsan_race.h */
static rsan_spin ovf_lock;
/* a mark: tid MARK_TID, the block's index in rsan_ovf_blocks in the clock bits, W_WRITE and
 * W_ATOMIC set, no bytes: never a conflict, and the read-only fast case of cells_fast, which
 * requires no write among the cells, excludes marked granules for free; flags: MARK_PLAIN,
 * MARK_WRITES (rsan_race.h) */
static inline uint64_t mark_word(uint32_t index, uint64_t flags) {
  return (uint64_t)index << W_CLOCK_SHIFT | (uint64_t)MARK_TID << W_TID_SHIFT | W_WRITE | W_ATOMIC | flags;
}
static inline ovf_block *mark_block(uint64_t mark) { return rsan_race_mark_block(mark); }

static uint32_t ovf_hash(uintptr_t g) {
  return (uint32_t)(((g >> 3) * 0x9E3779B97F4A7C15ull) >> 52) % OVF_SLOTS;
}

/* Probes per lookup: a block is only ever taken within OVF_PROBES slots of its granule's hash,
 * so a lookup finds it there, and its cost stays bounded once the blocks are all taken
 * (blocks are never given back: a full table made every new crowded granule scan all
 * OVF_SLOTS, under ovf_lock, before it evicted). Where the probed slots are all taken, the
 * main cells evict: a miss, never a false report, as with a full table. */
#define OVF_PROBES 64

/* under ovf_lock: the index of g's block, taken if needed (-1 when its slots are taken);
 * *fresh: never used before (all zero, nothing to empty) */
static int ovf_get(uintptr_t g, int *fresh) {
  for (uint32_t k = 0, h = ovf_hash(g); k < OVF_PROBES; k++, h = (h + 1) % OVF_SLOTS) {
    uint32_t e = ovf_table[h];
    if (e && rsan_ovf_blocks[e - 1].g == g) return *fresh = 0, (int)(e - 1);
    if (!e) { /* a free slot: a block is free too (one slot per block) */
      uint32_t index = rsan_race_ovf_taken++;
      rsan_ovf_blocks[index].g = g;
      ovf_table[h] = (uint16_t)(index + 1);
      return *fresh = 1, (int)index;
    }
  }
  return -1;
}

static void clear_chunk(lane_chunk *ch) {
  for (int k = 0; k < LANE_SLOTS; k++)
    for (int m = 0; m < 2; m++) __atomic_store_n(&ch->slot[k].cells[m], 0, __ATOMIC_RELAXED);
}

/* chunk j >= 1 of b's lanes, NULL if not allocated */
static inline lane_chunk *chunk(ovf_block *b, int j) {
  return __atomic_load_n(&b->lanes[j], __ATOMIC_ACQUIRE);
}

/* slot j * LANE_SLOTS + k's lane in b (its chunk ch when j >= 1) */
static inline lane *lane_of(ovf_block *b, int j, lane_chunk *ch, int k) {
  return j ? rsan_lane_at(ch, (uint32_t)k) : &rsan_race_lanes[k][b - rsan_ovf_blocks];
}

/* empties b's lanes of slots 0..LANE_SLOTS - 1 (a lane never written is not touched: its page
 * stays unbacked) */
static void clear_lanes0(ovf_block *b) {
  for (int k = 0; k < LANE_SLOTS; k++)
    for (int m = 0; m < 2; m++) {
      rsan_cell *w = &rsan_race_lanes[k][b - rsan_ovf_blocks].cells[m];
      if (__atomic_load_n(w, __ATOMIC_RELAXED)) __atomic_store_n(w, 0, __ATOMIC_RELAXED);
    }
}

/* rsan_race.h */
int rsan_race_mark_flag(rsan_cell *c, uint64_t mark, uint64_t flag) {
  if (mark & flag) return 1;
  for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
    while (w_tid(w) == MARK_TID && w_clock(w) % RSAN_OVF_SLOTS == w_clock(mark) % RSAN_OVF_SLOTS) {
      if (w & flag) return 1;
      if (__atomic_compare_exchange_n(&c[i], &w, w | flag, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return 1;
    }
  }
  return 0;
}

/* The first cell of b's lanes of another thread's slot that conflicts with the access (mask,
 * wr, at; all = 1: every cell, as free() conflicts with every access) and does not happen
 * before t, into h (found: 1). C11 [intro.races]: common bytes, a write among the two, not
 * both atomic. */
static int lanes_unordered_all(rsan_thread *t, ovf_block *b, uint32_t mask, int wr, int at, int all,
                               rsan_race_hit *h) {
  uint32_t me = rsan_race_index(t);
  for (int j = 0; j < LANE_CHUNKS; j++) {
    lane_chunk *ch = j ? chunk(b, j) : NULL;
    if (j && !ch) continue;
    for (int k = 0; k < LANE_SLOTS; k++)
      for (int m = 0; m < 2; m++) {
        uint64_t w = __atomic_load_n(&lane_of(b, j, ch, k)->cells[m], __ATOMIC_ACQUIRE);
        if (!w || w_tid(w) == me) continue;
        int cw = (w & W_WRITE) != 0, ca = (w & W_ATOMIC) != 0;
        if (!all && (!(w_mask(w) & mask) || !(cw || wr) || (ca && at))) continue;
        if (w_clock(w) <= rsan_vc_get(&t->C, w_tid(w))) continue;
        h->found = 1;
        h->addr = b->g + (uintptr_t)__builtin_ctz(all ? w_mask(w) : w_mask(w) & mask);
        h->word = w;
        h->site = __atomic_load_n(&lane_of(b, j, ch, k)->sites[m], __ATOMIC_RELAXED);
        return 1;
      }
  }
  return 0;
}
static int lanes_unordered(rsan_thread *t, ovf_block *b, uint32_t mask, int wr, int at, rsan_race_hit *h) {
  return lanes_unordered_all(t, b, mask, wr, at, 0, h);
}

/* rsan_race.h */
int rsan_race_overflow(rsan_thread *t, rsan_cell *c, uintptr_t g, uint32_t mask, int wr, int at,
                       uint64_t epoch, uint64_t site, uintptr_t fa, rsan_race_hit *h, uint64_t mark,
                       int main_slot) {
  ovf_block *b;
  if (mark) {
    b = mark_block(mark);
  } else {
    rsan_spin_lock(&ovf_lock);
    int fresh, index = ovf_get(g, &fresh);
    if (index < 0) {
      rsan_spin_unlock(&ovf_lock);
      return 0;
    }
    b = &rsan_ovf_blocks[index];
    int v = -1;
    for (int j = 0; j < RSAN_SHADOW_CELLS; j++)
      if (w_tid(__atomic_load_n(&c[j], __ATOMIC_RELAXED)) == MARK_TID) v = -2; /* marked meanwhile */
    if (v == -2) {
      rsan_spin_unlock(&ovf_lock);
      return -1;
    }
    /* the granule is not marked: the block is fresh or an orphan of a reset granule */
    if (!fresh) {
      memset(b->cells, 0, sizeof b->cells);
      clear_lanes0(b);
      for (int j = 1; j < LANE_CHUNKS; j++)
        if (chunk(b, j)) clear_chunk(chunk(b, j));
    }
    for (int j = 0; j < RSAN_SHADOW_CELLS && v < 0; j++) /* move a read if there is one */
      if (!(__atomic_load_n(&c[j], __ATOMIC_RELAXED) & W_WRITE)) v = j;
    if (v < 0) v = (int)((epoch ^ (g >> 3)) % RSAN_SHADOW_CELLS);
    uint64_t vw = __atomic_load_n(&c[v], __ATOMIC_RELAXED);
    b->sites[0] = __atomic_load_n(&rsan_cell_site(c)[v], __ATOMIC_RELAXED);
    uint64_t m = mark_word((uint32_t)index,
                           (vw & W_ATOMIC ? 0 : MARK_PLAIN) | (vw & W_WRITE ? MARK_WRITES : 0));
    __atomic_store_n(&b->cells[0], vw, __ATOMIC_RELEASE);
    int won = vw && __atomic_compare_exchange_n(&c[v], &vw, m, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    if (!won) __atomic_store_n(&b->cells[0], 0, __ATOMIC_RELAXED);
    rsan_spin_unlock(&ovf_lock);
    if (!won) return -1;
    mark = m;
  }
  int record = main_slot < 0;
  /* C11: two atomic accesses never race; an atomic and a plain access to common bytes race
   * unless one happens before the other. So the block's cells can only conflict with an
   * atomic access if one of them is plain: when none is (no MARK_PLAIN) and the atomic access
   * is not recorded here (record == 0: the check-only scan has no other effect), there is
   * nothing to do. A plain access sets the flag before its cell can be stored (below), so
   * skipping is what the scan would have found, or what it finds when it runs just before a
   * concurrent plain access is recorded (the outcomes the scan itself allows). */
  __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the mark was read before: its flags' protocol */
  if (at && !record && !(mark & MARK_PLAIN)) return 0;
  if (!at && record && !rsan_race_mark_flag(c, mark, MARK_PLAIN)) return -1; /* reset meanwhile */
  if (wr && record && !rsan_race_mark_flag(c, mark, MARK_WRITES)) return -1;
  rsan_race_scan_block(t, b->cells, b->sites, OVF_CELLS, record, g, mask, wr, at, epoch, site, fa, h);
  /* the lanes after the shared cells: other threads' lane cells are checked as the scan
   * checks cells (their own slot's lanes need no check: program order) */
  if (!h->found && (!at || (rsan_race_mark_now(c) & MARK_PLAIN))) lanes_unordered(t, b, mask, wr, at, h);
  return record;
}

/* rsan_race.h. What rsan_race_scan_block does for cur when it records it (race.c scan_cells,
 * record = 1): its own covering cell (the last of cur's kind, else the last) is the one it
 * takes, before any other; with
 * no plain cell in the block an atomic access has nothing to check there (C11: two atomic
 * accesses never race). The scan would also free the other cells cur may replace: an
 * optimisation this path skips. Anything else (no own cell: an empty or another thread's cell
 * to take) is left to the scan. */
int rsan_race_overflow_atomic_own(uint64_t mark, uint64_t cur, uint32_t mask, int wr, uint64_t site) {
  ovf_block *b = mark_block(mark);
  __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the mark's flags (rsan_race.h) */
  if (mark & MARK_PLAIN) return 0;
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT, low = (1ull << W_CLOCK_SHIFT) - 1;
  int k = -1, same = 0;
  for (int i = 0; i < OVF_CELLS; i++) {
    uint64_t w = __atomic_load_n(&b->cells[i], __ATOMIC_RELAXED);
    if (!w) break; /* the first empty cell ends the used ones */
    if (w == cur) return 1;
    uint64_t x = w ^ cur;
    /* another thread's (a freed cell's slot is no thread's); every cell is atomic (plain == 0,
     * read with the mark: a plain access sets it before storing its cell) */
    if (x & slot_bits) continue;
    if (!(x & low)) { /* the same kind at another epoch */
      k = i, same = 1;
      continue;
    }
    uint32_t cm = w_mask(w);
    int cw = (w & W_WRITE) != 0;
    if (!(x >> W_CLOCK_SHIFT) && !(mask & ~cm) && cw >= wr) return 1;
    if (!same && !(cm & ~mask) && (wr || !cw)) k = i;
  }
  if (k < 0) return 0;
  if (__atomic_load_n(&b->sites[k], __ATOMIC_RELAXED) != site)
    __atomic_store_n(&b->sites[k], site, __ATOMIC_RELAXED);
  __atomic_store_n(&b->cells[k], cur, __ATOMIC_RELEASE);
  return 1;
}

/* rsan_race.h (free) */
int rsan_race_overflow_unordered(rsan_thread *t, uintptr_t g, uint64_t mark, rsan_race_hit *h) {
  ovf_block *b = mark_block(mark);
  for (int i = 0; i < OVF_CELLS; i++) {
    uint64_t w = __atomic_load_n(&b->cells[i], __ATOMIC_ACQUIRE);
    if (!w || w_tid(w) == rsan_race_index(t) || w_clock(w) <= rsan_vc_get(&t->C, w_tid(w))) continue;
    h->found = 1;
    h->addr = g + (uintptr_t)__builtin_ctz(w_mask(w));
    h->word = w;
    h->site = __atomic_load_n(&b->sites[i], __ATOMIC_RELAXED);
    return 1;
  }
  return lanes_unordered_all(t, b, 0xff, 1, 0, 1, h);
}

/* rsan_race.h. The lane of cur's slot and kind (a read: [0]; an atomic write: [1]; a plain
 * write never takes a lane) in the block of a marked granule, for an access whose main cells
 * were checked (none conflicts with it unordered) and that takes none of them, its chunk
 * allocated on first use, when the block holds nothing cur has to check: no plain cell for an
 * atomic access (two atomic accesses never race), no write for a plain read (a read conflicts
 * only with writes). The mark's flags are set before a cell of that kind is stored (acq_rel;
 * read here with the mark), so a cell stored concurrently is one the scan could have missed
 * the same way. Then rsan_race_lane_take. 0: the scan decides (and records cur in the shared
 * cells); 1: done; 2: done and the site changed (only when fa and site are not 0). */
int rsan_race_overflow_lane(rsan_thread *t, rsan_cell *c, uint64_t mark, uint64_t cur, uint64_t site,
                            uintptr_t fa) {
  (void)t;
  uint32_t u = w_tid(cur);
  int wr = (cur & W_WRITE) != 0, at = (cur & W_ATOMIC) != 0;
  if (u >= LANE_CHUNKS * LANE_SLOTS || (wr && !at)) return 0;
  ovf_block *b = mark_block(mark);
  __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the mark's flags (rsan_race.h) */
  if (mark & (at ? MARK_PLAIN : MARK_WRITES)) return 0;
  lane *ln = rsan_race_lane(b, u);
  if (RSAN_UNLIKELY(!ln)) {
    lane_chunk *fresh = rsan_alloc_line(sizeof *fresh), *none = NULL;
    if (!__atomic_compare_exchange_n(&b->lanes[u / LANE_SLOTS], &none, fresh, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
      rsan_free(fresh), fresh = none;
    ln = rsan_lane_at(fresh, u % LANE_SLOTS);
  }
  int r = rsan_race_lane_take(c, mark, ln, cur, wr, at, site);
  return r == 2 && (!fa || !site) ? 1 : r;
}
