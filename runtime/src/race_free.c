/* The race check of free() (rsan_sync.h), beside race.c's checks of accesses: the block is
 * written as a whole, so every cell of its granules that the freeing thread's clock does not
 * contain is a race with the free (C11 [intro.races]: the deallocation conflicts with every
 * access of the object). */
#include <string.h>

#include "rsan_race.h"

/* rsan_sync.h: free() as a write of the whole block, checked only (its shadow is reset right
 * after). Regions never touched by instrumented code have no shadow: skipped, not mapped. */
void rsan_race_free(const void *p, size_t n) {
  if (!rsan_flag.report_races || !n || !__atomic_load_n(&rsan_inited, __ATOMIC_ACQUIRE)) return;
  rsan_thread *t = rsan_thread_peek_current();
  rsan_cell **d = __atomic_load_n(&rsan_shadow_directory, __ATOMIC_ACQUIRE);
  if (!t || !d || rsan_race_index(t) > MAX_TID) return;
  uintptr_t lo = (uintptr_t)p & ~(uintptr_t)7, hi = (uintptr_t)p + n;
  rsan_race_hit h = {0, 0, 0, 0};
  for (uintptr_t g = lo; g < hi && !h.found;) {
    uintptr_t r = g >> RSAN_SHADOW_REGION_SHIFT;
    uintptr_t next_region = (r + 1) << RSAN_SHADOW_REGION_SHIFT;
    rsan_cell *c = r < (1ull << (RSAN_SHADOW_USER_BITS - RSAN_SHADOW_REGION_SHIFT))
                       ? __atomic_load_n(&d[r], __ATOMIC_ACQUIRE)
                       : NULL;
    if (!c) {
      g = next_region;
      continue;
    }
    uintptr_t end = hi < next_region ? hi : next_region;
    for (; g < end && !h.found; g += 8) {
      rsan_cell *cells = c + rsan_shadow_offset(g);
      for (int i = 0; i < RSAN_SHADOW_CELLS; i++) {
        uint64_t w = __atomic_load_n(&cells[i], __ATOMIC_RELAXED);
        if (w_tid(w) == MARK_TID) { /* a mark is no access: its overflow block holds the cells */
          if (rsan_race_overflow_unordered(t, g, w, &h)) break;
          continue;
        }
        if (!w || w_tid(w) == rsan_race_index(t) || w_clock(w) <= rsan_vc_get(&t->C, w_tid(w))) continue;
        h.found = 1;
        h.addr = g + (uintptr_t)__builtin_ctz(w_mask(w));
        h.word = w;
        h.site = __atomic_load_n(&rsan_cell_site(cells)[i], __ATOMIC_RELAXED);
        break;
      }
    }
  }
  if (!h.found) return;
  /* the free's own site is the call site on top of the shadow stack (free is not
   * instrumented, its caller is) */
  rsan_race_info ri;
  memset(&ri, 0, sizeof ri);
  uint64_t st[RSAN_SHADOW_MAX];
  uint32_t k = rsan_thread_stack(t, (uintptr_t)__builtin_frame_address(0), st, RSAN_SHADOW_MAX);
  ri.addr = h.addr;
  ri.site = k ? st[0] : 0;
  for (uint32_t i = 1; i < k; i++) ri.stack[ri.nstack++] = st[i];
  ri.tid = t->tid;
  ri.is_write = 1;
  ri.is_free = 1;
  rsan_block_info blk; /* the size the program asked for, not malloc_usable_size */
  ri.size = rsan_heap_find((uintptr_t)p, &blk) && blk.addr == (uintptr_t)p ? (int)blk.size : (int)n;
  ri.prev_site = h.site;
  ri.prev_tid = rsan_thread_tid_at(w_tid(h.word), w_clock(h.word));
  rsan_race_prev_stack(&ri);
  ri.prev_is_write = (h.word & W_WRITE) != 0;
  ri.prev_is_atomic = (h.word & W_ATOMIC) != 0;
  ri.prev_size = __builtin_popcount(w_mask(h.word));
  rsan_report_race(&ri);
}
