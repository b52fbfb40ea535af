/* The race detector's atomic accesses without a cell of their own in a granule's main cells, and
 * those of a crowded (marked) granule (rsan_race.h rsan_race_atomic_cells; rsan_race_cells.h has the scan
 * they stand in for). */
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

/* rsan_race.h. An atomic access cur of a marked granule whose main cells hold nothing it must
 * check (rsan_race_atomic_cells' pass), when the overflow block holds no plain cell (C11: two
 * atomic accesses never race, so nothing there is to check either): cur goes to its slot's
 * lane (rsan_race_lane_take), and an own covering main cell k (kw: what the pass saw there)
 * is then freed. So every atomic access of a crowded atomic granule (a queue's head, read and
 * CAS'd by every thread) writes only its own lane's line, and the main cells' line, which every
 * access reads, is written only when a thread moves its cell out (docs/design/races.md §11).
 * *Exact:* kw is this thread's earlier access that cur covers (rule 1, program order, and rule
 * 2), so cur may stand for it; cur is stored (release) before kw is freed, so a concurrent
 * check finds one of them. Which cell takes cur is a choice the replacement rule leaves open
 * (the scan would take kw itself, or another thread's covered cell that happens before it).
 * Where no lane takes cur: kw is renewed in place as before (k >= 0), else the block's
 * shared cells (rsan_race_overflow_lane allocates the lane chunk, then
 * rsan_race_overflow_atomic_own), else the scan. */
__thread uint8_t rsan_race_crowded __attribute__((tls_model("initial-exec")));

int rsan_race_atomic_marked(rsan_thread *t, rsan_cell *c, uint64_t cur, uint64_t site, uint64_t mark, int k,
                            uint64_t kw) {
  if (RSAN_UNLIKELY(!rsan_race_crowded)) rsan_race_crowded = 1; /* rsan_race_prefetch's hint */
  return rsan_race_marked_steps(t, c, cur, site, mark, k, kw);
}
