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
#include "rsan_race.h"

static inline int on(void) { return rsan_race_on(); }
/* A tail call that must be one (musttail: the callee's frame replaces the caller's, so a hook's
 * frame address stays where the shadow call stack expects it, and a fast path keeps no frame) */
#if defined(__has_attribute) && __has_attribute(musttail)
#define RSAN_MUSTTAIL __attribute__((musttail))
#else
#define RSAN_MUSTTAIL
#endif

/* ---- shadow checks ---- */
typedef rsan_race_hit hit;

static inline __attribute__((always_inline)) void note_site_stack(rsan_thread *t, uint64_t site,
                                                                  uintptr_t fa);

/* Records the access cur in cell k of c, which held this thread's same kind of access. The
 * site is written only when it changes, so that the sites' line stays shared between the
 * threads that use the granule. The call stack of the site is remembered only then too: a
 * cell renewed by the same site (a loop) names a site whose stack this thread remembered
 * when the cell took it (the check of the per-thread table was a sixth of the hook's time);
 * a report may thus show an earlier execution's stack of the same site (rsan_race_prev_stack). */
static inline __attribute__((always_inline)) void renew_cell(rsan_thread *t, rsan_cell *c, int k,
                                                             uint64_t cur, uint64_t site, uintptr_t fa) {
  uint64_t *cell_site = &rsan_cell_site(c)[k];
  int same = __atomic_load_n(cell_site, __ATOMIC_RELAXED) == site;
  if (!same) __atomic_store_n(cell_site, site, __ATOMIC_RELAXED); /* the site first, as in scan_cells */
  __atomic_store_n(&c[k], cur, __ATOMIC_RELEASE);
  if (RSAN_UNLIKELY(!same) && fa && site) note_site_stack(t, site, fa);
}

/* Records the access cur in cell k of c, seen holding seen: a freed cell (W_FREED) or an empty
 * one (0), which stands for no access, or another thread's cell that cur may replace, taken by
 * compare-and-swap against what the pass saw (0: it changed; the scan decides), with the site
 * before and after, as scan_cells stores into another thread's cell. The site's call stack
 * is noted after every take (the cell's old site may be another thread's). */
static inline __attribute__((always_inline)) int take_cell(rsan_thread *t, rsan_cell *c, int k, uint64_t seen,
                                                           uint64_t cur, uint64_t site, uintptr_t fa) {
  uint64_t *cell_site = &rsan_cell_site(c)[k];
  if (__atomic_load_n(cell_site, __ATOMIC_RELAXED) != site)
    __atomic_store_n(cell_site, site, __ATOMIC_RELAXED);
  if (!__atomic_compare_exchange_n(&c[k], &seen, cur, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) return 0;
  if (__atomic_load_n(cell_site, __ATOMIC_RELAXED) != site)
    __atomic_store_n(cell_site, site, __ATOMIC_RELAXED);
  if (fa && site) note_site_stack(t, site, fa);
  return 1;
}

/* The fast cases of the access cur (w_pack: this thread's slot and the access's epoch, bytes
 * and kind, which mask, wr and at repeat for the compiler) to a granule's main cells c,
 * without the scan; 1 when it is done. */
_Static_assert(RSAN_SHADOW_CELLS == 4, "cells_fast reads the four cells of a granule");
static inline __attribute__((always_inline)) int cells_fast(rsan_thread *t, rsan_cell *c, uint64_t cur,
                                                            uint32_t mask, int wr, int at, uint64_t site,
                                                            uintptr_t fa) {
  const uint64_t low = (1ull << W_CLOCK_SHIFT) - 1; /* slot, bytes and kind */
  uint64_t w0 = __atomic_load_n(&c[0], __ATOMIC_RELAXED), d = w0 ^ cur;
  /* the first cell is this thread's access at this epoch that subsumes this one (a read
   * after a write, e.g. of a memcpy's destination): as in scan_cells, nothing to do */
  if (mask == 0xff) { /* a whole granule (constant in the hooks and range loops): one compare */
    if (!(d & ~(wr ? 0 : W_WRITE))) return 1;
  } else if (!(d >> W_TID_SHIFT) && !(mask & ~w_mask(w0)) && (w0 & W_WRITE) >= (wr ? W_WRITE : 0) &&
             (w0 & W_ATOMIC) == (at ? W_ATOMIC : 0)) {
    return 1;
  }
  /* private data: the granule's only cell is this thread's same kind of access at an older
   * epoch (a loop after a lock round): nothing to check, the cell is renewed in place (an
   * empty first cell never matches: cur has bytes) */
  uint64_t w1 = __atomic_load_n(&c[1], __ATOMIC_RELAXED);
  if (RSAN_LIKELY(!(d & low)) && !w1) {
    renew_cell(t, c, 0, cur, site, fa);
    return 1;
  }
  /* shared data that is only read: no cell is a write (a read conflicts with nothing else;
   * a mark has W_WRITE, so a granule with overflow cells never comes here) and one is this
   * thread's same kind of read, which is renewed as the scan would. A cell that already
   * holds this very access (same epoch) is left alone: a store of the same value would still
   * take the line from the other readers' caches, so every read of a variable that several
   * threads read in a loop would move the line between cores. */
  if (!wr && !((w0 | w1) & W_WRITE)) {
    /* a cell that holds this very access, with no write before it, is where the scan returns
     * (a read conflicts with writes only): the cells after it need not be read */
    if (w1 == cur) return 1;
    uint64_t w2 = __atomic_load_n(&c[2], __ATOMIC_RELAXED);
    if (w2 == cur) return 1;
    uint64_t w3 = __atomic_load_n(&c[3], __ATOMIC_RELAXED);
    if (w3 == cur && !(w2 & W_WRITE)) return 1;
    if (!((w2 | w3) & W_WRITE)) {
      uint64_t wk = w0;
      int k = !(d & low)                   ? 0
              : !(((wk = w1) ^ cur) & low) ? 1
              : !(((wk = w2) ^ cur) & low) ? 2
              : !(((wk = w3) ^ cur) & low) ? 3
                                           : -1;
      if (k >= 0) {
        if (wk != cur) renew_cell(t, c, k, cur, site, fa);
        return 1;
      }
    }
  }
  return 0;
}

/* The scan and update of n cells (sites: their sites) for an access. record = 0: check only
 * (the overflow block of a granule whose main cells take the access). main: these are the
 * main cells of a granule (the mark and the overflow apply). */
static inline __attribute__((always_inline)) void scan_cells(rsan_thread *t, rsan_cell *c, uint64_t *sites,
                                                             int n, int main, int record, uintptr_t g,
                                                             uint32_t mask, int wr, int at, uint64_t epoch,
                                                             uint64_t site, uintptr_t fa, hit *h) {
  uint32_t tid = rsan_race_index(t);
  uint64_t cur = w_pack(epoch, tid, mask, wr, at);
rescan:;
  int slot = -1, i;
  uint64_t mark = 0; /* the mark cell, if any */
  uint64_t slot_w = 0; /* what the scan saw in the chosen cell */
  int slot_rank = 0; /* 0: another thread's cell; 1: an own covering cell; 2: of the same kind */
  uint32_t dom = 0; /* cells this access may replace (rule 1 and 2): freed once it is stored */
  uint64_t seen[16]; /* what the scan saw in them */
  _Static_assert(RSAN_SHADOW_CELLS <= 16, "seen holds a granule's main cells");
#pragma GCC unroll 4 /* both compilers: straight-line code for the four main cells */
  for (i = 0; i < n; i++) {
    uint64_t w = __atomic_load_n(&c[i], __ATOMIC_RELAXED);
    /* cells are filled first empty first and emptied a whole granule at a time (shadow.c):
     * the first empty cell ends the used ones */
    if (!w) break;
    if (w == cur) return; /* the same access again: nothing to check or record */
    uint32_t cm = w_mask(w), u = w_tid(w);
    if (main && RSAN_UNLIKELY(u == MARK_TID)) { /* more cells in the overflow block */
      mark = w;
      continue;
    }
    int cw = (w & W_WRITE) != 0, ca = (w & W_ATOMIC) != 0;
    /* this access subsumes the cell: the cell's bytes, a write if the cell is one, and never an
     * atomic access in place of a plain one (a later atomic access unordered with the plain
     * one races with it, but not with this atomic access) */
    int covers = !(cm & ~mask) && (wr || !cw) && (ca || !at);
    seen[i] = w;
    if (u == tid) {
      /* the thread's own access at the same epoch that subsumes this one (a write covers a
       * later read): every access that races with this one races with it too */
      if (w_clock(w) == epoch && !(mask & ~cm) && cw >= wr && ca == at) return;
      if (covers) dom |= 1u << i; /* program order: rule 1 holds */
      /* its own covering cell: one of the same kind (bytes and write) before any other, so
       * that a thread that reads and writes a location keeps one cell of each kind rather than
       * trading a read cell for a write and taking a new cell for its next read */
      int rank = 1 + (cm == mask && cw == wr);
      if (covers && ca == at && rank >= slot_rank) slot = i, slot_w = w, slot_rank = rank;
      continue;
    }
    int conflicting = (cm & mask) && (cw || wr) && !(ca && at);
    /* its clock would tell nothing (an atomic access frees no cell: below) */
    if (!conflicting && (!covers || (at && slot >= 0))) continue;
    if (w_clock(w) <= rsan_vc_get(&t->C, u)) { /* the cell happens before: no race */
      if (covers) dom |= 1u << i;
      if (covers && slot < 0) slot = i, slot_w = w;
      continue;
    }
    if (conflicting && !h->found) {
      h->found = 1;
      h->addr = g + (uintptr_t)__builtin_ctz(cm & mask);
      h->word = w;
      h->site = __atomic_load_n(&sites[i], __ATOMIC_RELAXED);
    }
  }
  if (slot < 0 && i < n) slot = i; /* the first empty cell */
  if (RSAN_UNLIKELY(slot < 0) && record) {
    /* Full, and no cell may give way (the scan took one that may): a cell ordered before this
     * access but not covered by it stays, since a later access may race with it and not with
     * this one. A cell below the floor (ordered before every live and future thread's
     * accesses) can race with nothing any more: it goes, else the granule gets overflow cells. */
    uint64_t now[16];
    for (int j = 0; j < n; j++) now[j] = __atomic_load_n(&c[j], __ATOMIC_RELAXED);
    int k = rsan_race_floor_cached(now, n);
    if (k < 0) k = rsan_race_floor_recompute(now, n);
    if (k >= 0) slot = k, slot_w = now[k];
  }
  if (main && RSAN_UNLIKELY(mark || slot < 0)) {
    int r = rsan_race_overflow(t, c, g, mask, wr, at, epoch, site, fa, h, mark, slot);
    if (r < 0) goto rescan;
    if (r > 0) return; /* recorded in the overflow block */
  }
  if (!record) return;
  /* Full with no overflow cells to be had (the overflow block full, or no block): a cell is
   * lost, which can miss a race (the limit at the top of the file). The least likely to
   * matter goes: one ordered before this access (a read first: only a later write can race
   * with it), else, for a read, a read, keeping the writes; else one chosen by hash. */
  if (RSAN_UNLIKELY(slot < 0))
    for (int j = 0; j < n; j++) {
      uint64_t w = __atomic_load_n(&c[j], __ATOMIC_RELAXED);
      uint32_t u = w_tid(w);
      if (!w || u == MARK_TID || (u != tid && w_clock(w) > rsan_vc_get(&t->C, u))) continue;
      if (slot < 0 || !(w & W_WRITE)) slot = j, slot_w = w;
      if (!(w & W_WRITE)) break;
    }
  if (slot < 0 && !wr) /* a read replaces a read, keeping the writes */
    for (int j = 0; j < n && slot < 0; j++) {
      uint64_t w = __atomic_load_n(&c[j], __ATOMIC_RELAXED);
      if (!(w & W_WRITE) && w_tid(w) != MARK_TID) slot = j;
    }
  if (slot < 0) {
    slot = (int)((epoch ^ (g >> 3)) % (uint64_t)n);
    if (main && w_tid(__atomic_load_n(&c[slot], __ATOMIC_RELAXED)) == MARK_TID)
      slot = (slot + 1) % n; /* one mark */
  }
  /* Two threads accessing the granule at the same moment would both pick the first empty
   * cell, and the later store would erase the earlier access unseen (a missed race): the cell
   * is replaced only if it still holds what this scan saw, else the granule is scanned again.
   * The site goes first (a reader finds it beside any non-empty cell, shadow.c) and again
   * after winning, in case a losing thread's site landed in between. */
  if (slot_w == 0 && slot < i) slot_w = __atomic_load_n(&c[slot], __ATOMIC_RELAXED); /* evicted */
  uint64_t *cell_site = &sites[slot];
  /* a loop re-records its cells with the same sites: a site is written only when it changes,
   * so that the line of sites stays shared between the threads that use the granule */
  if (__atomic_load_n(cell_site, __ATOMIC_RELAXED) != site)
    __atomic_store_n(cell_site, site, __ATOMIC_RELAXED);
  /* The thread's own older cell is replaced by a plain store: the CAS (a full barrier) was
   * most of the cost of a loop that re-records its cells after every release. Another thread
   * writes this cell only when the cell happens before its access and it has no cell of its
   * own here; losing that access is a miss, never a false report. */
  if (slot_w && w_tid(slot_w) == tid) __atomic_store_n(&c[slot], cur, __ATOMIC_RELEASE);
  else if (!__atomic_compare_exchange_n(&c[slot], &slot_w, cur, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    goto rescan;
  if (__atomic_load_n(cell_site, __ATOMIC_RELAXED) != site)
    __atomic_store_n(cell_site, site, __ATOMIC_RELAXED);
  if (fa && site) note_site_stack(t, site, fa);
  /* The other cells this access may replace (rule 1 and 2 at the top of the file) are freed,
   * now that it is stored in the granule: it stands for them (every access that races with
   * one of them races with it). Left in place they would fill the granule (each access takes
   * one cell, but a write after a chain of ordered accesses covers all of theirs) and send
   * its later accesses to the overflow block. A cell that changed since the scan saw it is
   * left alone. Only a plain access frees cells: an atomic one would free the other threads'
   * atomic cells of a contended atomic (an acq_rel counter), each of which its thread renews
   * in place on its next access (rsan_race_atomic_cells) but would then have to take again by a scan. */
  dom &= ~(1u << slot);
  while (!at && RSAN_UNLIKELY(dom)) {
    int j = __builtin_ctz(dom);
    dom &= dom - 1;
    if (seen[j] != W_FREED)
      __atomic_compare_exchange_n(&c[j], &seen[j], W_FREED, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  }
}

/* The scan of a granule's main cells, out of line for the loops over granules (inlined there,
 * it would take the registers of their fast case); one copy per kind of access, so that the
 * atomic one is compiled with at = 1 (no conflict with an atomic cell: only plain cells need
 * a clock for the check). */
static RSAN_NOINLINE void scan_main(rsan_thread *t, rsan_cell *c, uintptr_t g, uint32_t mask, int wr,
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
  else scan_main(t, c, g, mask, wr, epoch, site, fa, h);
}

static inline uint32_t site_slot(uint64_t site) { return rsan_race_site_slot(site); }

/* Remembers the call stack of this execution of site (a cell is about to name it), unless the
 * slot already holds the site at the same depth (most likely the same stack). */
static RSAN_NOINLINE void record_site_stack(rsan_thread *t, uint32_t k, uint64_t site, uintptr_t fa) {
  uint32_t n = rsan_thread_stack(t, fa, t->site_stack[k].stack, RSAN_SITE_STACK_DEPTH);
  for (uint32_t i = n; i < RSAN_SITE_STACK_DEPTH; i++) t->site_stack[k].stack[i] = 0;
  t->site_stack[k].depth = t->depth;
  t->site_stack[k].site = site;
}

static inline __attribute__((always_inline)) void note_site_stack(rsan_thread *t, uint64_t site,
                                                                  uintptr_t fa) {
  uint32_t k = site_slot(site);
  if (RSAN_UNLIKELY(t->site_stack[k].site != site || t->site_stack[k].depth != t->depth))
    record_site_stack(t, k, site, fa);
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

/* ---- ABI: plain accesses (rsan_interface.h), called before the access ----
 * The hook handles the common case itself, in one scan of the granule's cells: a registered
 * thread, an access inside one granule, shadow already mapped. That is also the case of a
 * loop touching its own data again after a lock round (every release bumps the epoch, so
 * such accesses miss the same-epoch shortcut of access_cells and must re-record the cell):
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
    access_cells(t, c, a & ~(uintptr_t)7, w_pack(t->race_epoch, rsan_race_index(t), 0, wr, 0), mask, wr, 0,
                 t->race_epoch, site, fa, &h);
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
 * the other cells it covers and happens after are freed (race.c "Freed cells"). 1: done. */
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
