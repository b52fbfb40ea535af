/* Overflow blocks of the race detector's shadow (race.c checks the main cells; rsan_race.h).
 *
 * When every cell of a granule holds an access of another thread that this access may not
 * replace (more than RSAN_SHADOW_CELLS concurrent accessors, e.g. 8 threads reading one
 * variable), one cell moves to an overflow block of OVF_CELLS more cells (a small global table
 * keyed by granule) and is replaced by a mark (tid MARK_TID): accesses of a marked granule are
 * also checked against the block, and recorded there when the main cells are full. The mark is
 * cleared with the main cells (free, thread exit), which orphans the block; a block is emptied
 * when it is marked again. Beyond OVF_SLOTS granules with overflow at once, the main cells
 * evict (race.c scan_cells): a miss, never a false report.
 *
 * C11 [intro.races]: two atomic accesses never race; an atomic and a plain access to common
 * bytes race unless happens-before orders them. So an atomic access that is not recorded in
 * a block skips the check of a block that holds no plain cell (`plain`). */
#include <string.h>

#include "rsan_race.h"

#define OVF_CELLS 16
#define OVF_SLOTS 4096 /* granules with overflow at any time, at most; beyond: eviction */
typedef struct ovf_block {
  uintptr_t g;
  /* 1 once a plain access may have been put in cells (since the block was last emptied):
   * while 0, every cell is atomic, so an atomic access has nothing to check here */
  int plain;
  rsan_cell cells[OVF_CELLS];
  uint64_t sites[OVF_CELLS];
} ovf_block;
static ovf_block *ovf_table[OVF_SLOTS]; /* open addressing; entries are only ever added */
static rsan_spin ovf_lock;
/* a mark: tid MARK_TID, the block's index in ovf_table in the clock bits */
/* W_WRITE and W_ATOMIC set, no bytes: never a conflict, and the read-only fast case of
 * cells_fast, which requires no write among the cells, excludes marked granules for free */
static inline uint64_t mark_word(uint32_t index) {
  return (uint64_t)index << W_CLOCK_SHIFT | (uint64_t)MARK_TID << W_TID_SHIFT | W_WRITE | W_ATOMIC;
}
static inline ovf_block *mark_block(uint64_t mark) {
  return __atomic_load_n(&ovf_table[w_clock(mark) % OVF_SLOTS], __ATOMIC_ACQUIRE);
}

static uint32_t ovf_hash(uintptr_t g) {
  return (uint32_t)(((g >> 3) * 0x9E3779B97F4A7C15ull) >> 52) % OVF_SLOTS;
}

/* under ovf_lock: the index of g's block, created if needed (-1 when the table is full) */
static int ovf_get(uintptr_t g) {
  for (uint32_t k = 0, h = ovf_hash(g); k < OVF_SLOTS; k++, h = (h + 1) % OVF_SLOTS) {
    ovf_block *b = ovf_table[h];
    if (b && b->g == g) return (int)h;
    if (!b) {
      b = rsan_alloc(sizeof *b);
      memset(b, 0, sizeof *b);
      b->g = g;
      __atomic_store_n(&ovf_table[h], b, __ATOMIC_RELEASE);
      return (int)h;
    }
  }
  return -1;
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
    int index = ovf_get(g);
    if (index < 0) {
      rsan_spin_unlock(&ovf_lock);
      return 0;
    }
    b = ovf_table[index];
    int v = -1;
    for (int j = 0; j < RSAN_SHADOW_CELLS; j++)
      if (w_tid(__atomic_load_n(&c[j], __ATOMIC_RELAXED)) == MARK_TID) v = -2; /* marked meanwhile */
    if (v == -2) {
      rsan_spin_unlock(&ovf_lock);
      return -1;
    }
    /* the granule is not marked: the block is new or an orphan of a reset granule */
    memset(b->cells, 0, sizeof b->cells);
    __atomic_store_n(&b->plain, 0, __ATOMIC_RELAXED);
    for (int j = 0; j < RSAN_SHADOW_CELLS && v < 0; j++) /* move a read if there is one */
      if (!(__atomic_load_n(&c[j], __ATOMIC_RELAXED) & W_WRITE)) v = j;
    if (v < 0) v = (int)((epoch ^ (g >> 3)) % RSAN_SHADOW_CELLS);
    uint64_t vw = __atomic_load_n(&c[v], __ATOMIC_RELAXED);
    b->sites[0] = __atomic_load_n(&rsan_cell_site(c)[v], __ATOMIC_RELAXED);
    if (!(vw & W_ATOMIC)) __atomic_store_n(&b->plain, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&b->cells[0], vw, __ATOMIC_RELEASE);
    int won = vw && __atomic_compare_exchange_n(&c[v], &vw, mark_word((uint32_t)index), 0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_RELAXED);
    if (!won) __atomic_store_n(&b->cells[0], 0, __ATOMIC_RELAXED);
    rsan_spin_unlock(&ovf_lock);
    if (!won) return -1;
  }
  if (!b) return 0;
  int record = main_slot < 0;
  /* C11: two atomic accesses never race; an atomic and a plain access to common bytes race
   * unless one happens before the other. So the block's cells can only conflict with an
   * atomic access if one of them is plain: when none is (plain == 0) and the atomic access is
   * not recorded here (record == 0: the check-only scan has no other effect), there is nothing
   * to do. A plain access marks the block before its cell can be stored (below), so skipping
   * is what the scan would have found, or what it finds when it runs just before a concurrent
   * plain access is recorded (the outcomes the scan itself allows). */
  if (at && !record && !__atomic_load_n(&b->plain, __ATOMIC_ACQUIRE)) return 0;
  if (!at && record) __atomic_store_n(&b->plain, 1, __ATOMIC_RELEASE);
  rsan_race_scan_block(t, b->cells, b->sites, OVF_CELLS, record, g, mask, wr, at, epoch, site, fa, h);
  return record;
}
/* rsan_race.h: read as the check-only scan of rsan_race_overflow reads it */
int rsan_race_overflow_has_plain(uint64_t mark) {
  ovf_block *b = mark_block(mark);
  return b && __atomic_load_n(&b->plain, __ATOMIC_ACQUIRE);
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
  if (!b || __atomic_load_n(&b->plain, __ATOMIC_ACQUIRE)) return 0;
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT, low = (1ull << W_CLOCK_SHIFT) - 1;
  int k = -1, same = 0;
  for (int i = 0; i < OVF_CELLS; i++) {
    uint64_t w = __atomic_load_n(&b->cells[i], __ATOMIC_RELAXED);
    if (!w) break; /* the first empty cell ends the used ones */
    if (w == cur) return 1;
    uint64_t x = w ^ cur;
    /* another thread's (a freed cell's slot is no thread's); every cell is atomic (plain == 0,
     * read with acquire: a plain access sets it before storing its cell) */
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
  for (int i = 0; b && i < OVF_CELLS; i++) {
    uint64_t w = __atomic_load_n(&b->cells[i], __ATOMIC_ACQUIRE);
    if (!w || w_tid(w) == rsan_race_index(t) || w_clock(w) <= rsan_vc_get(&t->C, w_tid(w))) continue;
    h->found = 1;
    h->addr = g + (uintptr_t)__builtin_ctz(w_mask(w));
    h->word = w;
    h->site = __atomic_load_n(&b->sites[i], __ATOMIC_RELAXED);
    return 1;
  }
  return 0;
}
