/* Race detection for plain accesses with C11's happens-before (algorithm.md §5, the RSAN paper
 * §4.2 and Appendix B): the shadow checks of plain and atomic accesses, against the thread
 * clocks that race_clock.c's rules keep (C: current; an access's epoch is C[τ] at the access,
 * bumped after every release, so an epoch e of thread u happens before a thread whose clock has
 * C[u] >= e).
 *
 * Shadow cell (shadow.c, encoding in rsan_race.h): clock (38 bits) | thread slot (16) | byte
 * mask (8) | write | atomic. Vector clocks and cells index threads by slot (rsan_race_index,
 * thread.c: reused only when exact, epochs continuing), so only 65,535 threads alive at once
 * are a limit.
 * A cell conflicts with an access when their byte masks overlap, one of them writes, they
 * are not both atomic and the cell's epoch is not in the accessing thread's C (C11
 * [intro.races]: two atomic accesses never race, whatever their sizes; an atomic and a plain
 * access race on their common bytes unless ordered by happens-before). Atomic accesses are
 * recorded like plain ones, for the plain accesses after them; their own check can only
 * find plain cells (rsan_race_atomic_cells reads no clock unless a plain cell conflicts; race_overflow.c
 * skips an overflow block that has none).
 *
 * Replacement (the argument by which miri's data_race.rs keeps one write per location and
 * ThreadSanitizer lets an access overwrite its thread's weaker cell): the cell of an access a
 * may give way to an access b only when
 *   1. a happens before b (a is this thread's own earlier access, or a's epoch is in b's C), and
 *   2. b covers a: a's bytes are a subset of b's, a is a write only if b is, and b is atomic
 *      only if a is.
 * Then every later access d that races with a races with b too, so the granule still reports
 * d's race (naming b): d overlaps b's bytes because it overlaps a's; d or b writes because d
 * or a does; they are not both atomic because d and a are not; and b does not happen before
 * d, since a hb b hb d would order a before d. A cell may also be dropped when a happens
 * before every access of every live and future thread (its epoch is below the floor of its
 * slot, race_floor.c): no later access can race with it. An access that may replace no cell
 * takes an empty one; a full granule drops a cell below the floor, else takes the overflow
 * block (race_overflow.c): it never drops a cell the access does not cover (an acquire read
 * evicting the release write it read from would hide that write's race with a later plain
 * read). Every cell describes a real access, so a dropped cell can only miss a race, never
 * invent one; cells are lost only when the overflow block is full too (more than
 * RSAN_SHADOW_CELLS - 1 + OVF_CELLS accesses of a granule none of which may replace or drop
 * another) or no block can be had (OVF_SLOTS granules with overflow cells at once): then a cell
 * ordered before the access goes (a read first), else a read gives way to a read, else a cell
 * chosen by hash (scan_cells). */
#include <string.h>

#include "rsan_explain.h"
#include "rsan_race_cells.h"

/* The scan of a granule's main cells, out of line for the loops over granules (inlined there,
 * it would take the registers of their fast case); one copy per kind of access, so that the
 * atomic one is compiled with at = 1 (no conflict with an atomic cell: only plain cells need
 * a clock for the check). */
RSAN_NOINLINE void rsan_race_scan_main(rsan_thread *t, rsan_cell *c, uintptr_t g, uint32_t mask, int wr,
                                       uint64_t epoch, uint64_t site, uintptr_t fa, hit *h) {
  scan_cells(t, c, rsan_cell_site(c), RSAN_SHADOW_CELLS, 1, 1, g, mask, wr, 0, epoch, site, fa, h);
}
static RSAN_NOINLINE void scan_main_atomic(rsan_thread *t, rsan_cell *c, uintptr_t g, uint32_t mask, int wr,
                                           uint64_t epoch, uint64_t site, uintptr_t fa, hit *h) {
  scan_cells(t, c, rsan_cell_site(c), RSAN_SHADOW_CELLS, 1, 1, g, mask, wr, 1, epoch, site, fa, h);
}

/* rsan_race.h: the cells of an overflow block (race_overflow.c), one copy per kind of access */
void rsan_race_scan_block(rsan_thread *t, rsan_cell *cells, uint64_t *sites, int n, int record, uintptr_t g,
                          uint32_t mask, int wr, int at, uint64_t epoch, uint64_t site, uintptr_t fa,
                          hit *h) {
  if (at) scan_cells(t, cells, sites, n, 0, record, g, mask, wr, 1, epoch, site, fa, h);
  else scan_cells(t, cells, sites, n, 0, record, g, mask, wr, 0, epoch, site, fa, h);
}

/* base: w_pack(epoch, this thread's slot, 0, wr, at), hoisted out of the loops over granules */
static inline __attribute__((always_inline)) void access_cells(rsan_thread *t, rsan_cell *c, uintptr_t g,
                                                               uint64_t base, uint32_t mask, int wr, int at,
                                                               uint64_t epoch, uint64_t site, uintptr_t fa,
                                                               hit *h) {
  if (cells_fast(t, c, base | (uint64_t)mask << W_MASK_SHIFT, mask, wr, at, site, fa)) return;
  if (at) scan_main_atomic(t, c, g, mask, wr, epoch, site, fa, h);
  else rsan_race_scan_main(t, c, g, mask, wr, epoch, site, fa, h);
}

/* rsan_race_cells.h */
/* The slot: the one that holds site already (a site is in at most one of its two); else the
 * first if it is empty, then the second if it is, then the first if its site is not at home
 * there (another site's second choice), else the second. So two sites with one first slot
 * each keep a slot (the second one's second), where one slot had them evict each other. */
static uint32_t site_place(const rsan_thread *t, uint64_t site) {
  uint32_t a = rsan_race_site_slot(site), b = rsan_race_site_slot2(site);
  uint64_t sa = t->site_stack[a].site, sb = t->site_stack[b].site;
  if (sa == site || (sb != site && (!sa || (sb && rsan_race_site_slot(sa) != a)))) return a;
  return b;
}
RSAN_NOINLINE void rsan_race_record_site_stack(rsan_thread *t, uint64_t site, uintptr_t fa) {
  uint32_t k = site_place(t, site);
  uint32_t n = rsan_thread_stack(t, fa, t->site_stack[k].stack, RSAN_SITE_STACK_DEPTH);
  for (uint32_t i = n; i < RSAN_SITE_STACK_DEPTH; i++) t->site_stack[k].stack[i] = 0;
  t->site_stack[k].depth = t->depth;
  t->site_stack[k].site = site;
}

/* The granules of [addr, end), one mask per granule; the cells of one shadow region are
 * contiguous, so they are looked up once per region. Inlined once per (wr, at), so that the
 * check of each granule is specialised (a memcpy's destination runs through here). */
static inline __attribute__((always_inline)) void access_span(rsan_thread *t, uintptr_t addr, uintptr_t end,
                                                              int wr, int at, uint64_t epoch, uint64_t site,
                                                              hit *h) {
  const uint64_t base = w_pack(epoch, rsan_race_index(t), 0, wr, at);
  const uintptr_t region = (1ull << RSAN_SHADOW_REGION_SHIFT) - 1;
  for (uintptr_t p = addr; p < end;) {
    uintptr_t g = p & ~(uintptr_t)7;
    rsan_cell *c = rsan_shadow_cells_fast(g);
    if (!c) break; /* outside the user address space */
    /* the whole granules from g to the end of the range or of g's region (cells contiguous) */
    uintptr_t last = (g | region) - 7; /* the region's last granule */
    if (end - 8 < last) last = end - 8; /* end >= g + 8 when p == g and end - g >= 8 */
    if (p == g && end - g >= 8) {
      for (; g <= last; g += 8, c += RSAN_SHADOW_STRIDE)
        access_cells(t, c, g, base, 0xff, wr, at, epoch, site, 0, h);
      p = g;
      continue;
    }
    uintptr_t ge = end - g < 8 ? end : g + 8;
    uint32_t mask = (uint32_t)(((1u << (ge - g)) - 1) & ~((1u << (p - g)) - 1)) & 0xff;
    access_cells(t, c, g, base, mask, wr, at, epoch, site, 0, h);
    p = ge;
  }
}

/* Everything but the fast case of rsan_race_access: ranges, plain accesses (the range hooks),
 * unmapped regions, the scan of an atomic access that rsan_race_atomic_cells left. */
static RSAN_NOINLINE void access_more(rsan_thread *t, uintptr_t addr, uint64_t size, int wr, int at,
                                      uint64_t epoch, uint64_t site, uintptr_t fa) {
  if (!on() || !size || rsan_race_index(t) > MAX_TID) return;
  if (site) note_site_stack(t, site, fa);
  if (!at) RSAN_EXPLAIN(rsan_explain_plain(t, addr, size, wr, site));
  hit h = {0, 0, 0, 0};
  if (at && (addr & 7) + size <= 8) { /* an atomic access of one granule: no loop */
    rsan_cell *c = rsan_shadow_cells_fast(addr);
    if (!c) return;
    uint32_t mask = (uint32_t)(((1ull << size) - 1) << (addr & 7)) & 0xff;
    scan_main_atomic(t, c, addr & ~(uintptr_t)7, mask, wr, epoch, site, 0, &h);
    if (RSAN_UNLIKELY(h.found)) rsan_race_report_hit(t, &h, size, wr, at, site, fa);
    return;
  }
  uintptr_t end = addr + size;
  if (end < addr) end = UINTPTR_MAX;
  if (at) access_span(t, addr, end, wr, 1, epoch, site, &h);
  else if (wr) access_span(t, addr, end, 1, 0, epoch, site, &h);
  else access_span(t, addr, end, 0, 0, epoch, site, &h);
  if (RSAN_UNLIKELY(h.found)) rsan_race_report_hit(t, &h, size, wr, at, site, fa);
}

/* rsan_race.h: rsan_race_access for anything rsan_race_atomic_fast did not settle:
 * (plain cells to check, a mark, no own covering cell), the scan, ranges, plain accesses,
 * unmapped regions. */
void rsan_race_access_general(rsan_thread *t, uintptr_t addr, uint64_t size, int wr, int at, uint64_t epoch,
                              uint64_t site, uintptr_t fa) {
  rsan_cell **d = __atomic_load_n(&rsan_shadow_directory, __ATOMIC_ACQUIRE);
  rsan_cell *c;
  if (RSAN_LIKELY(at && on() && t->race_cur && size && (addr & 7) + size <= 8 && d &&
                  !(addr >> RSAN_SHADOW_USER_BITS) &&
                  (c = __atomic_load_n(&d[addr >> RSAN_SHADOW_REGION_SHIFT], __ATOMIC_ACQUIRE)))) {
    c += rsan_shadow_offset(addr);
    if (site) note_site_stack(t, site, fa);
    uint32_t mask = (uint32_t)(((1ull << size) - 1) << (addr & 7)) & 0xff;
    if (rsan_race_atomic_cells(t, c, w_pack(epoch, rsan_race_index(t), mask, wr, 1), mask, wr, site)) return;
  }
  access_more(t, addr, size, wr, at, epoch, site, fa);
}

/* rsan_race.h's rsan_race_atomic_i, else everything else as a tail call. */
void rsan_race_access(rsan_thread *t, uintptr_t addr, uint64_t size, int wr, int at, uint64_t epoch,
                      uint64_t site, uintptr_t fa) {
  if (RSAN_LIKELY(at && on()) && rsan_race_atomic_fast(t, addr, size, wr, epoch, site)) return;
  RSAN_MUSTTAIL return rsan_race_access_general(t, addr, size, wr, at, epoch, site, fa);
}
