/* The race detector's atomic accesses without a cell of their own in a granule's main cells
 * (rsan_race.h rsan_race_atomic_cells; race.c has the scan they stand in for). */
#include "rsan_race.h"

/* rsan_race.h. The scan of an atomic access cur with no own covering cell, in its common case:
 * scan_cells (main = record = 1, at = 1) step for step, with no report state, while no cell is
 * a mark or another thread's conflicting plain access that does not happen before cur (a
 * race) and the granule has a cell to take: the first other thread's atomic cell that cur
 * covers and that happens before it (a freed one included), else the first empty one, taken
 * by compare-and-swap (lost: 0, and the scan decides), with its site. An atomic access frees no
 * other cell. counters.c: an RMW of a counter whose cells are other threads' earlier RMWs. */
int rsan_race_atomic_take(rsan_thread *t, rsan_cell *c, uint64_t cur, uint32_t mask, int wr, uint64_t site) {
  const uint64_t slot_bits = (uint64_t)TID_MASK << W_TID_SHIFT;
  int slot = -1, i;
  uint64_t slot_w = 0;
#pragma GCC unroll 4
  for (i = 0; i < RSAN_SHADOW_CELLS; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED), x = w ^ cur;
    if (!w) break;
    if (!x) return 1;
    uint32_t u = w_tid(w), cm = w_mask(w);
    int cw = (w & W_WRITE) != 0, ca = (w & W_ATOMIC) != 0;
    if (!(x & slot_bits)) { /* its own: one that subsumes or that it covers changed meanwhile */
      if (!(x >> W_CLOCK_SHIFT) && !(mask & ~cm) && cw >= wr && ca) return 1;
      if (!(cm & ~mask) && (wr || !cw) && ca) return 0;
      continue;
    }
    if (u == MARK_TID) return 0;
    int covers = !(cm & ~mask) && (wr || !cw) && ca, conflicting = (cm & mask) && (cw || wr) && !ca;
    if (!conflicting && (!covers || slot >= 0)) continue;
    if (w_clock(w) <= rsan_vc_get(&t->C, u)) {
      if (covers && slot < 0) slot = i, slot_w = w;
      continue;
    }
    if (conflicting) return 0; /* a race: the scan reports it */
  }
  if (slot < 0 && i < RSAN_SHADOW_CELLS) slot = i; /* the first empty cell */
  if (slot < 0) return 0;
  uint64_t *cell_site = &rsan_cell_site(c)[slot];
  if (__atomic_load_n(cell_site, __ATOMIC_RELAXED) != site)
    __atomic_store_n(cell_site, site, __ATOMIC_RELAXED);
  if (!__atomic_compare_exchange_n(&c[slot], &slot_w, cur, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) return 0;
  if (__atomic_load_n(cell_site, __ATOMIC_RELAXED) != site)
    __atomic_store_n(cell_site, site, __ATOMIC_RELAXED);
  return 1;
}
