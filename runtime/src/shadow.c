/* Shadow memory of the race detector: RSAN_SHADOW_CELLS cells per 8-byte granule of user
 * memory (ThreadSanitizer's layout idea, algorithm.md §5 "FastTrack/TSan-style shadow cells";
 * architecture.md: direct-mapped or page-table shadow, not a hash map).
 *
 * Two levels: a directory with one pointer per 1 MiB region of the 47-bit user address
 * space (reserved once with MAP_NORESERVE: pages of it are only backed when touched), and
 * per region a block of granules mapped on the first access to the region, each granule's
 * 4 cells followed by their 4 sites (one 64-byte line, RSAN_SHADOW_STRIDE words). Memory is
 * thus bounded by the memory the program touches (8 bytes of user memory -> 64 of shadow).
 * Freed memory and exited threads' stacks are reset (rsan_shadow_reset); large ranges give
 * their pages back with madvise(MADV_DONTNEED), which reads back as zero (empty cells). */
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_internal.h"

#define USER_BITS RSAN_SHADOW_USER_BITS
#define REGION_SHIFT RSAN_SHADOW_REGION_SHIFT /* 1 MiB of user memory per region */
#define NREGIONS (1ull << (USER_BITS - REGION_SHIFT))
#define GRANULE_SHIFT 3
#define STRIDE RSAN_SHADOW_STRIDE
#define REGION_BYTES (RSAN_SHADOW_REGION_WORDS * sizeof(rsan_cell)) /* granules: cells, sites */

rsan_cell **rsan_shadow_directory; /* NREGIONS entries, MAP_NORESERVE */
#define directory rsan_shadow_directory
static rsan_spin dir_lock;
/* regions mapped so far (for the test reset), grown under dir_lock */
static uint32_t *mapped;
static uint32_t nmapped, capmapped;

static void shadow_die(void) {
  static const char msg[] = "pyrsan: cannot map shadow memory for race detection\n";
  (void)!write(2, msg, sizeof msg - 1);
  rsan_exit_raw(RSAN_EXIT_FATAL);
}

static void *map_zero(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) shadow_die();
  return p;
}

static RSAN_NOINLINE rsan_cell *region_slow(uint64_t r) {
  rsan_spin_lock(&dir_lock);
  if (!directory)
    __atomic_store_n(&directory, (rsan_cell **)map_zero(NREGIONS * sizeof(rsan_cell *)), __ATOMIC_RELEASE);
  rsan_cell *c = directory[r];
  if (!c) {
    c = map_zero(REGION_BYTES);
    if (nmapped == capmapped) {
      capmapped = capmapped ? 2 * capmapped : 64;
      mapped = rsan_realloc(mapped, capmapped * sizeof(uint32_t));
    }
    mapped[nmapped++] = (uint32_t)r;
    __atomic_store_n(&directory[r], c, __ATOMIC_RELEASE);
  }
  rsan_spin_unlock(&dir_lock);
  return c;
}

rsan_cell *rsan_shadow_cells(uintptr_t addr) {
  uint64_t r = addr >> REGION_SHIFT;
  if (RSAN_UNLIKELY(r >= NREGIONS)) return NULL;
  rsan_cell **d = __atomic_load_n(&directory, __ATOMIC_ACQUIRE);
  rsan_cell *c = d ? __atomic_load_n(&d[r], __ATOMIC_ACQUIRE) : NULL;
  if (RSAN_UNLIKELY(!c)) c = region_slow(r);
  return c + ((addr & ((1ull << REGION_SHIFT) - 1)) >> GRANULE_SHIFT) * STRIDE;
}

/* Zeroes [p, p + n) of mapped shadow: page-aligned interiors of large spans go back to the
 * kernel (cheap for a thread's 8 MiB stack), the rest is cleared by hand. */
static void clear_shadow(char *p, size_t n) {
  size_t pg = 4096;
  if (n >= 16 * pg) {
    char *lo = (char *)(((uintptr_t)p + pg - 1) & ~(uintptr_t)(pg - 1));
    char *hi = (char *)(((uintptr_t)p + n) & ~(uintptr_t)(pg - 1));
    memset(p, 0, (size_t)(lo - p));
    if (madvise(lo, (size_t)(hi - lo), MADV_DONTNEED) != 0) memset(lo, 0, (size_t)(hi - lo));
    memset(hi, 0, (size_t)(p + n - hi));
    return;
  }
  memset(p, 0, n);
}

/* Empties the granules of [lo, hi) (granule-aligned) inside region r, if it is mapped. */
static void reset_in_region(rsan_cell **d, uint64_t r, uintptr_t lo, uintptr_t hi) {
  uintptr_t rlo = (uintptr_t)r << REGION_SHIFT, rhi = (uintptr_t)(r + 1) << REGION_SHIFT;
  if (lo < rlo) lo = rlo;
  if (hi > rhi) hi = rhi;
  rsan_cell *c = __atomic_load_n(&d[r], __ATOMIC_ACQUIRE);
  if (!c || lo >= hi) return;
  rsan_cell *first = c + ((lo - rlo) >> GRANULE_SHIFT) * STRIDE;
  size_t n = (hi - lo) >> GRANULE_SHIFT;
  /* the sites need no clearing: a site is read only beside a non-empty cell, and a cell's
   * site is stored before the cell; so a few granules (a small block's free) clear their
   * cells only, and larger spans all of it (most pages go back to the kernel) */
  if (n <= 64) {
    for (size_t i = 0; i < n; i++) memset(first + i * STRIDE, 0, RSAN_SHADOW_CELLS * sizeof(rsan_cell));
    return;
  }
  clear_shadow((char *)first, n * STRIDE * sizeof(rsan_cell));
}

void rsan_shadow_reset(uintptr_t addr, size_t n) {
  rsan_cell **d = __atomic_load_n(&directory, __ATOMIC_ACQUIRE);
  if (!d || n == 0) return;
  uintptr_t lo = addr & ~(uintptr_t)7, hi = addr + n;
  if (hi < addr || hi > (uintptr_t)NREGIONS << REGION_SHIFT) hi = (uintptr_t)NREGIONS << REGION_SHIFT;
  /* Only granules entirely inside the range are emptied: a partly covered one may describe
   * live neighbouring bytes. Blocks (16-byte aligned malloc chunks, page-aligned stacks)
   * cover whole granules, so what reuses them starts from empty cells. */
  if (lo < addr) lo += 8;
  hi &= ~(uintptr_t)7;
  if (lo >= hi) return;
  uint64_t rfirst = lo >> REGION_SHIFT, rlast = (hi - 1) >> REGION_SHIFT;
  if (rlast - rfirst < 64) { /* directory entries are only ever set (but by the test reset) */
    for (uint64_t r = rfirst; r <= rlast; r++) reset_in_region(d, r, lo, hi);
    return;
  }
  rsan_spin_lock(&dir_lock); /* a huge range: visit the mapped regions only */
  for (uint32_t i = 0; i < nmapped; i++)
    if (mapped[i] >= rfirst && mapped[i] <= rlast) reset_in_region(d, mapped[i], lo, hi);
  rsan_spin_unlock(&dir_lock);
}

void rsan_shadow_reset_all(void) {
  rsan_spin_lock(&dir_lock);
  for (uint32_t i = 0; i < nmapped; i++) {
    rsan_cell *c = directory[mapped[i]];
    directory[mapped[i]] = NULL;
    munmap(c, REGION_BYTES);
  }
  nmapped = 0;
  rsan_spin_unlock(&dir_lock);
}

/* the census (race_census.c): bytes of shadow mapped, and of those the pages backed (mincore) */
void rsan_shadow_census(uint64_t *mapped_bytes, uint64_t *resident) {
  static unsigned char vec[REGION_BYTES / 4096];
  *mapped_bytes = *resident = 0;
  rsan_spin_lock(&dir_lock);
  for (uint32_t i = 0; i < nmapped; i++) {
    *mapped_bytes += REGION_BYTES;
    if (mincore(directory[mapped[i]], REGION_BYTES, vec) != 0) continue;
    for (size_t k = 0; k < sizeof vec; k++) *resident += (uint64_t)(vec[k] & 1) * 4096;
  }
  rsan_spin_unlock(&dir_lock);
}

/* fork (rsan_fork.h) */
void rsan_shadow_fork_lock(void) { rsan_spin_lock(&dir_lock); }
void rsan_shadow_fork_unlock(void) { rsan_spin_unlock(&dir_lock); }
