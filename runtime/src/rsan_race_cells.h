/* The shadow cells' checks that race.c (atomic accesses, ranges, the overflow block's scan) and
 * race_plain.c (the plain-access hooks) share: the fast cases of an access to a granule's main
 * cells (cells_fast), the scan and update of a granule's cells (scan_cells), and how a cell is
 * renewed or taken with its site. The rules they keep (replacement, eviction) are race.c's
 * (its opening comment) and docs/design/races.md's. Included by those two files only. */
#ifndef RSAN_RACE_CELLS_H
#define RSAN_RACE_CELLS_H

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

/* race.c: remembers the call stack of this execution of site in t's table (a cell is about to
 * name it), in one of the site's two slots (rsan_race.h rsan_race_site_slot) */
void rsan_race_record_site_stack(rsan_thread *t, uint64_t site, uintptr_t fa);

/* Remembers the call stack of site unless the table already holds the site at the same depth
 * (most likely the same stack). */
static inline __attribute__((always_inline)) void note_site_stack(rsan_thread *t, uint64_t site,
                                                                  uintptr_t fa) {
  if (RSAN_UNLIKELY(!rsan_race_site_known(t, site))) rsan_race_record_site_stack(t, site, fa);
}

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

/* race.c: scan_cells of a granule's main cells for a plain access (main = record = 1, at = 0),
 * out of line */
void rsan_race_scan_main(rsan_thread *t, rsan_cell *c, uintptr_t g, uint32_t mask, int wr, uint64_t epoch,
                         uint64_t site, uintptr_t fa, hit *h);

#endif /* RSAN_RACE_CELLS_H */
