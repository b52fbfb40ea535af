/* The location table: address -> location state (algorithm.md §2), thread-safe.
 *
 * Locations are keyed by exact address (algorithm.md §6.6). The table is direct-mapped, like
 * ThreadSanitizer's meta map: a directory with one entry per 16 MiB region of the 47-bit user
 * address space (reserved once with MAP_NORESERVE), and per region one slot per 8-byte
 * granule (mapped on the region's first location; pages of it are backed only when touched).
 * A slot heads the chain of the granule's locations (more than one only for sub-8-byte
 * atomics side by side). Addresses above the user space share one chain.
 *
 * Finding a location takes no lock but the location's own: the slot and the chain are read
 * with atomic loads. Inserting and unlinking take one of RSAN_LT_STRIPES stripe locks (by
 * user page), which also make insertion unique: the inserter re-scans the chain under it.
 *
 * Retirement and stale pointers: location records are never returned to the system
 * (type-stable memory): a retired record is unlinked, cleared under its own lock with
 * `retired` set, and recycled through a free list. A reader may still hold it (it loaded the
 * pointer before the unlink), so a reader trusts only what it checks under the record's
 * lock: not retired and the address it looked for; otherwise it looks again. Since there is
 * at most one live record per address (insertion is unique), a record that passes that check
 * is the location, however the reader reached it. A chain walk that met a recycled record
 * may end in another chain: a miss is therefore confirmed under the stripe lock before a
 * location is created, and walks are bounded (a longer one goes the locked way).
 *
 * Retiring [p, p+n) (free, thread exit) visits the granules of the range, skipping regions
 * and 4 KiB pages that hold no location (counts per region and per page).
 *
 * Lock order: stripe -> location -> free list.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_internal.h"
#include "rsan_loc_slab.h"
#if defined(__x86_64__)
#include <cpuid.h>
#endif

/* whether the processor has PREFETCHW (CPUID 0x80000001 ECX bit 8): rsan_prefetchw */
uint8_t rsan_prefetchw_ok;
__attribute__((constructor)) static void prefetchw_detect(void) {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (__get_cpuid(0x80000001u, &a, &b, &c, &d)) rsan_prefetchw_ok = (c >> 8) & 1;
#endif
}

#define LT_USER_BITS RSAN_LT_USER_BITS
#define LT_REGION_SHIFT RSAN_LT_REGION_SHIFT
#define LT_NREGIONS RSAN_LT_NREGIONS
#define LT_GRANULE_SHIFT RSAN_LT_GRANULE_SHIFT
#define LT_PAGE_SHIFT RSAN_LT_PAGE_SHIFT
#define LT_REGION_SLOTS RSAN_LT_REGION_SLOTS
#define LT_REGION_PAGES RSAN_LT_REGION_PAGES
#define LT_STRIPES 256
#define LT_WALK_MAX 64 /* a longer lock-free walk goes the locked way */
typedef rsan_lt_region lt_region;

lt_region **rsan_lt_directory; /* LT_NREGIONS entries, MAP_NORESERVE */
#define directory rsan_lt_directory
static rsan_spin dir_lock;
static uint32_t *mapped; /* regions mapped so far, under dir_lock */
static uint32_t nmapped, capmapped;
static rsan_loc *far_head; /* locations above the user address space */
static struct {
  rsan_spin lock;
  char pad[60];
} stripes[LT_STRIPES];

static uint64_t next_id = 1; /* id 0 is the SC-fence location F */
static uint64_t nlive;       /* live locations */
static uint64_t promotions; /* records replaced by a bigger class (census) */
static uint64_t shrinks;    /* COLD records replaced by compact ones (census) */
/* The small classes a location skips (docs/design/clocks.md §29). A record a promotion or an
 * expansion leaves behind stays free in its class's slab (records are type-stable), and its
 * page goes back only once every record on it is free. So once `skip_min` NOW records were
 * made by writes, a write that needs NOW gets a full record (W = ⊥ in it: the same state);
 * and once at least half of `skip_min` or more compact records made were expanded again, a
 * load no longer makes one. Only which class holds a location's state changes. */
static uint64_t now_made, compact_made, compact_up;
static uint64_t skip_min = 4096;
/* the class a location made or promoted for an operation that needs cls gets */
static inline unsigned class_for(unsigned cls) {
  if (cls == RSAN_LOC_NOW &&
      __atomic_load_n(&now_made, __ATOMIC_RELAXED) >= __atomic_load_n(&skip_min, __ATOMIC_RELAXED))
    return RSAN_LOC_FULL;
  return cls;
}
static rsan_loc fence_loc; /* F: id 0, address 0, never retired (class RSAN_LOC_FULL: 0) */

static inline rsan_spin *stripe_of(uintptr_t addr) {
  if (RSAN_UNLIKELY((addr >> LT_REGION_SHIFT) >= LT_NREGIONS)) addr = 0; /* one far chain, one stripe */
  uint64_t h = (uint64_t)(addr >> LT_PAGE_SHIFT) * 0x9E3779B97F4A7C15ull;
  return &stripes[h >> 56].lock;
}

static void table_die(void) {
  static const char msg[] = "pyrsan: cannot map the location table\n";
  (void)!write(2, msg, sizeof msg - 1);
  rsan_exit_raw(RSAN_EXIT_FATAL);
}

static void *map_zero(size_t n) {
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) table_die();
  return p;
}

/* the region of addr, mapped when create (NULL: not mapped, or addr beyond the user space) */
static RSAN_NOINLINE lt_region *region_slow(uint64_t r) {
  rsan_spin_lock(&dir_lock);
  if (!directory)
    __atomic_store_n(&directory, (lt_region **)map_zero(LT_NREGIONS * sizeof(lt_region *)), __ATOMIC_RELEASE);
  lt_region *g = directory[r];
  if (!g) {
    g = map_zero(sizeof(lt_region));
    if (nmapped == capmapped) {
      capmapped = capmapped ? 2 * capmapped : 64;
      mapped = rsan_realloc(mapped, capmapped * sizeof(uint32_t));
    }
    mapped[nmapped++] = (uint32_t)r;
    __atomic_store_n(&directory[r], g, __ATOMIC_RELEASE);
  }
  rsan_spin_unlock(&dir_lock);
  return g;
}

static inline lt_region *region_of(uint64_t r, int create) {
  lt_region **d = __atomic_load_n(&directory, __ATOMIC_ACQUIRE);
  lt_region *g = d ? __atomic_load_n(&d[r], __ATOMIC_ACQUIRE) : NULL;
  if (RSAN_UNLIKELY(!g) && create) g = region_slow(r);
  return g;
}

/* the chain head of addr's granule (NULL: its region is not mapped and !create) */
static inline rsan_loc **head_of(uintptr_t addr, int create) {
  uint64_t r = addr >> LT_REGION_SHIFT;
  if (RSAN_UNLIKELY(r >= LT_NREGIONS)) return &far_head;
  lt_region *g = region_of(r, create);
  if (!g) return NULL;
  return &g->slot[(addr & ((1u << LT_REGION_SHIFT) - 1)) >> LT_GRANULE_SHIFT];
}

/* l's link in its granule's chain: a compact record has it elsewhere (rsan_location.h); a
 * record's class never changes, so a lock-free walk may read it on any record */
static inline rsan_loc **loc_gnext(rsan_loc *l) {
  return RSAN_UNLIKELY(l->cls == RSAN_LOC_COMPACT) ? &((rsan_loc_compact *)l)->gnext : &l->gnext;
}

/* live-location counts of addr's region and page (under addr's stripe lock) */
static inline void count_add(uintptr_t addr, int d) {
  __atomic_fetch_add(&nlive, (uint64_t)(int64_t)d, __ATOMIC_RELAXED);
  uint64_t r = addr >> LT_REGION_SHIFT;
  if (r >= LT_NREGIONS) return;
  lt_region *g = region_of(r, 0);
  __atomic_fetch_add(&g->total, (uint32_t)d, __ATOMIC_RELAXED);
  __atomic_fetch_add(&g->page[(addr & ((1u << LT_REGION_SHIFT) - 1)) >> LT_PAGE_SHIFT], (uint32_t)d,
                     __ATOMIC_RELAXED);
}

/* Lock-free walk: a candidate record for addr, or NULL (not found, or the walk was too long:
 * the caller confirms under the stripe lock). */
static inline rsan_loc *chain_find(rsan_loc **head, uintptr_t addr) {
  rsan_loc *l = __atomic_load_n(head, __ATOMIC_ACQUIRE);
  for (int k = 0; l && k < LT_WALK_MAX; k++) {
    if (__atomic_load_n(&l->addr, __ATOMIC_RELAXED) == addr) return l;
    l = __atomic_load_n(loc_gnext(l), __ATOMIC_ACQUIRE);
  }
  return NULL;
}

/* A retired record keeps its clock memory for its next location (type-stable records):
 * clearing is O(1) for the clocks and the facts, O(slots) for the evicted table. */
static void loc_clear_state(rsan_loc *l) {
  if (l->cls == RSAN_LOC_COMPACT) {
    rsan_loc_compact_clear((rsan_loc_compact *)l);
    return;
  }
  rsan_clk *lc[] = {&l->Msc, &l->Wsc, &l->W}; /* the first 3 - cls are the record's */
  for (int i = 0; i < 3 - l->cls; i++) {
    rsan_clk_clear(lc[i]);
    /* a location clock: its array, once it has one, starts narrow (rsan_internal.h) */
    if (lc[i]->cap <= RSAN_CLK_INLINE) lc[i]->cap = RSAN_CLK_INLINE_LOC;
  }
  l->msc_in = 0;
  l->msc_wsc = 0;
  l->nfacts = l->fold = 0;
  l->grow = 0;
  if (l->fcap > RSAN_FACTS) rsan_free(l->facts_ext); /* a grown window goes with x */
  l->fcap = RSAN_FACTS;
  if (l->ev && rsan_loc_evdirect(l)) rsan_loc_ev_free(l); /* a hot location's table goes with x */
  rsan_loc_ev_clear(l); /* a sparse one stays, emptied */
  memset(l->evslot, 0, sizeof l->evslot);
  l->stamp = l->stampU = 0;
  l->nocheck = 0;
  rsan_hist_free(l); /* its length follows hist_next (rsan_hist_len) */
  l->hist_next = 0;
  l->init_known = 0;
  l->init_value = 0;
  rsan_vc_free(&l->S);
}

/* Records come from slabs of one size class (location_slab.c; rsan_loc_size: 128, 256, 320
 * or 384 bytes), 64-byte aligned (rsan_loc's layout keeps what an access touches in its first
 * cache lines); a record stays in its class (type-stable per class: a stale reader only ever
 * reads a record's line 0 and gnext, which every class has), and a slab of free records only
 * leaves its class as zero pages (docs/design/clocks.md §25). */

/* a cleared record of class cls, locked, not in the table (under a stripe lock) */
static rsan_loc *loc_alloc(unsigned cls) {
  rsan_loc *l = rsan_lslab_take(cls);
  rsan_spin_lock(&l->lock);
  loc_clear_state(l); /* (init_value := 0 ends free_next) */
  return l;
}
/* a retired, cleared record back to its class (its lock not held; under a stripe lock) */
static void loc_free_push(rsan_loc *l) { rsan_lslab_put(l); }

/* A fresh location for addr: W = Wsc = Msc = ⊥ (the init write has timestamp 0), in class cls
 * (the one the operation that makes it needs: a load the smallest). */
static rsan_loc *loc_new(uintptr_t addr, unsigned cls) {
  cls = class_for(cls);
  if (cls == RSAN_LOC_NOW) __atomic_fetch_add(&now_made, 1, __ATOMIC_RELAXED);
  rsan_loc *l = loc_alloc(cls); /* promoted when a later write needs more */
  __atomic_store_n(&l->addr, addr, __ATOMIC_RELAXED);
  l->id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
  l->retired = 0;
  rsan_spin_unlock(&l->lock);
  return l;
}

/* the live location of addr (made when missing and create), under the stripe lock */
static RSAN_NOINLINE rsan_loc *find_locked(uintptr_t addr, int create, unsigned cls) {
  rsan_loc **head = head_of(addr, create);
  if (!head) return NULL;
  rsan_spin *s = stripe_of(addr);
  rsan_spin_lock(s);
  rsan_loc *h = *head, *l = h;
  while (l && l->addr != addr) l = *loc_gnext(l);
  if (!l && create) {
    l = loc_new(addr, cls);
    __atomic_store_n(&l->gnext, h, __ATOMIC_RELAXED); /* (l is made in a class up to COLD) */
    __atomic_store_n(head, l, __ATOMIC_RELEASE);
    count_add(addr, 1);
  }
  rsan_spin_unlock(s);
  return l;
}

rsan_loc *rsan_loc_acquire(uintptr_t addr) {
  return rsan_loc_fit(rsan_loc_acquire_c(addr, RSAN_LOC_FULL), RSAN_LOC_FULL);
}

/* rsan_loc_acquire_i's other cases: no region yet, another location at the chain's head, a
 * longer chain, a record retired meanwhile, or none yet (made here) */
rsan_loc *rsan_loc_acquire_slow(uintptr_t addr, unsigned cls) {
  rsan_loc **head = head_of(addr, 1);
  for (;;) {
    rsan_loc *l = chain_find(head, addr);
    if (RSAN_UNLIKELY(!l)) l = find_locked(addr, 1, cls);
    rsan_loc_prefetch_early(l, addr, cls != RSAN_LOC_COLD);
    rsan_spin_lock(&l->lock);
    if (RSAN_LIKELY(!l->retired && l->addr == addr)) {
      rsan_loc_prefetch_lines(l, cls != RSAN_LOC_COLD);
      return l;
    }
    if (l->retired == RSAN_LOC_LIVE_COMPACT && l->addr == addr) /* x, compact: expanded first */
      return rsan_loc_promote(l, cls);
    rsan_spin_unlock(&l->lock); /* retired (and maybe recycled) meanwhile: look again */
    head = head_of(addr, 1);
  }
}

rsan_loc *rsan_loc_fence(void) { return &fence_loc; }

uint64_t rsan_loc_count(void) { return __atomic_load_n(&nlive, __ATOMIC_RELAXED); }

uint64_t rsan_loc_retire_gen;

/* the live record of addr of any class (a compact one too), locked, or NULL */
static rsan_loc *loc_peek_any(uintptr_t addr) {
  for (;;) {
    rsan_loc *l = find_locked(addr, 0, 0);
    if (!l) return NULL;
    rsan_spin_lock(&l->lock);
    if ((!l->retired || l->retired == RSAN_LOC_LIVE_COMPACT) && l->addr == addr) return l;
    rsan_spin_unlock(&l->lock);
  }
}

/* the live location at addr, locked, or NULL (never creates one; a compact record is expanded
 * into a COLD one, which holds the same state) */
rsan_loc *rsan_loc_peek(uintptr_t addr) {
  rsan_loc *l = loc_peek_any(addr);
  return l && l->cls == RSAN_LOC_COMPACT ? rsan_loc_promote(l, RSAN_LOC_COLD) : l;
}

uint64_t rsan_loc_peek_id(uintptr_t addr) {
  rsan_loc *l = loc_peek_any(addr);
  if (!l) return 0;
  uint64_t id = l->cls == RSAN_LOC_COMPACT ? ((rsan_loc_compact *)l)->id : l->id;
  rsan_spin_unlock(&l->lock);
  return id;
}

/* Unlinks and retires the locations of *head with addresses in [lo, hi) (stripe locked). A
 * reader standing on an unlinked record still finds the rest of the chain (its gnext is kept
 * until the record is reused). */
static void chain_retire(rsan_loc **head, uintptr_t lo, uintptr_t hi) {
  rsan_loc **pp = head;
  rsan_loc *l;
  while ((l = *pp)) {
    if (l->addr < lo || l->addr >= hi) {
      pp = loc_gnext(l);
      continue;
    }
    __atomic_store_n(pp, *loc_gnext(l), __ATOMIC_RELEASE);
    count_add(l->addr, -1);
    __atomic_fetch_add(&rsan_loc_retire_gen, 1, __ATOMIC_SEQ_CST); /* before x changes */
    rsan_spin_lock(&l->lock);
    l->retired = 1;
    loc_clear_state(l);
    rsan_spin_unlock(&l->lock);
    loc_free_push(l);
  }
}

/* Retires the locations in [lo, hi) of region r (if mapped), page by page. */
static void retire_in_region(uint64_t r, uintptr_t lo, uintptr_t hi) {
  uintptr_t rlo = (uintptr_t)r << LT_REGION_SHIFT, rhi = (uintptr_t)(r + 1) << LT_REGION_SHIFT;
  if (lo < rlo) lo = rlo;
  if (hi > rhi) hi = rhi;
  lt_region *g = region_of(r, 0);
  if (!g || lo >= hi || !__atomic_load_n(&g->total, __ATOMIC_RELAXED)) return;
  for (uintptr_t pg = lo >> LT_PAGE_SHIFT; pg <= (hi - 1) >> LT_PAGE_SHIFT; pg++) {
    uintptr_t plo = pg << LT_PAGE_SHIFT, phi = plo + (1u << LT_PAGE_SHIFT);
    if (!__atomic_load_n(&g->page[(plo - rlo) >> LT_PAGE_SHIFT], __ATOMIC_RELAXED)) continue;
    if (plo < lo) plo = lo;
    if (phi > hi) phi = hi;
    rsan_spin *s = stripe_of(plo);
    rsan_spin_lock(s);
    for (uintptr_t a = plo & ~(uintptr_t)7; a < phi; a += 8) {
      rsan_loc **head = &g->slot[(a - rlo) >> LT_GRANULE_SHIFT];
      if (*head) chain_retire(head, lo, hi);
    }
    rsan_spin_unlock(s);
  }
}

void rsan_memory_retire(const void *p, size_t n) {
  uintptr_t lo = (uintptr_t)p, hi = lo + n, top = (uintptr_t)LT_NREGIONS << LT_REGION_SHIFT;
  if (n == 0 || hi < lo) return;
  rsan_shadow_reset(lo, n); /* reuse is not a race (algorithm.md §5, architecture.md) */
  if (hi > top) { /* above the user space: the far chain */
    if (__atomic_load_n(&far_head, __ATOMIC_RELAXED)) {
      rsan_spin *s = stripe_of(lo > top ? lo : top);
      rsan_spin_lock(s);
      chain_retire(&far_head, lo, hi);
      rsan_spin_unlock(s);
    }
    hi = top;
    if (lo >= hi) return;
  }
  if (!__atomic_load_n(&directory, __ATOMIC_ACQUIRE)) return;
  uint64_t rfirst = lo >> LT_REGION_SHIFT, rlast = (hi - 1) >> LT_REGION_SHIFT;
  if (rlast - rfirst < 64) { /* directory entries are only ever set (but by the test reset) */
    for (uint64_t r = rfirst; r <= rlast; r++) retire_in_region(r, lo, hi);
    return;
  }
  /* a huge range: the mapped regions only (a copy of the list: no lock held while retiring) */
  rsan_spin_lock(&dir_lock);
  uint32_t n_ = nmapped;
  uint32_t *rs = rsan_alloc((n_ ? n_ : 1) * sizeof(uint32_t));
  memcpy(rs, mapped, n_ * sizeof(uint32_t));
  rsan_spin_unlock(&dir_lock);
  for (uint32_t i = 0; i < n_; i++)
    if (rs[i] >= rfirst && rs[i] <= rlast) retire_in_region(rs[i], lo, hi);
  rsan_free(rs);
}

static void loc_free_record(rsan_loc *l) {
  loc_clear_state(l);
  if (l->cls == RSAN_LOC_COMPACT) return; /* (it owns nothing once cleared) */
  rsan_clk_release(&l->Msc);
  if (l->cls <= RSAN_LOC_NOW) rsan_clk_release(&l->Wsc);
  if (l->cls == RSAN_LOC_FULL) rsan_clk_release(&l->W);
  rsan_loc_ev_free(l);
  rsan_hist_free(l);
}

void rsan_loc_reset_all(void) {
  rsan_lslab_walk(loc_free_record);
  rsan_lslab_reset_all();
  far_head = NULL;
  for (uint32_t i = 0; i < nmapped; i++) {
    lt_region *g = directory[mapped[i]];
    directory[mapped[i]] = NULL;
    munmap(g, sizeof(lt_region));
  }
  nmapped = 0;
  loc_free_record(&fence_loc);
  nlive = 0;
  next_id = 1;
  now_made = compact_made = compact_up = 0; /* the class skip starts again */
  __atomic_fetch_add(&rsan_loc_retire_gen, 1, __ATOMIC_SEQ_CST);
}

/* fork (rsan_fork.h): every lock of the table in the table's order — the directory, the
 * stripes, then every location record (live, free or being recycled), then the free list,
 * then F — so that the child never inherits a lock held by a thread that does not exist
 * there. */
void rsan_loc_fork_lock(void) {
  rsan_spin_lock(&dir_lock);
  for (uint32_t k = 0; k < LT_STRIPES; k++) rsan_spin_lock(&stripes[k].lock);
  rsan_lslab_fork_lock(); /* every record's lock, then the free lists' */
  rsan_spin_lock(&fence_loc.lock);
}
void rsan_loc_fork_unlock(void) {
  rsan_spin_unlock(&fence_loc.lock);
  rsan_lslab_fork_unlock();
  for (uint32_t k = 0; k < LT_STRIPES; k++) rsan_spin_unlock(&stripes[k].lock);
  rsan_spin_unlock(&dir_lock);
}

/* verbosity >= 1, at exit: how the live records are used, by size class (docs/design/clocks.md
 * §15, §19). Each record is read under its lock. */
/* Every record made so far, live or free (slabs given back to the system excepted), passed
 * to fn under its lock (location_slab.c) */
void rsan_loc_for_each_made(void (*fn)(rsan_loc *l, void *arg), void *arg) {
  rsan_lslab_for_each_made(fn, arg);
}
uint64_t rsan_loc_promotions(void) { return __atomic_load_n(&promotions, __ATOMIC_RELAXED); }
uint64_t rsan_loc_shrinks(void) { return __atomic_load_n(&shrinks, __ATOMIC_RELAXED); }

/* tests: the size class of addr's live record (-1: none), and the promotions so far */
RSAN_EXPORT int __rsan_test_location_class(const void *addr) {
  rsan_loc *l = loc_peek_any((uintptr_t)addr); /* (a compact record stays compact) */
  if (!l) return -1;
  int c = l->cls;
  rsan_loc_release(l);
  return c;
}
RSAN_EXPORT uint64_t __rsan_test_location_promotions(void) { return rsan_loc_promotions(); }
/* tests: skip_min := n (the records of a class made before the skip may start; §29); the old one */
RSAN_EXPORT uint64_t __rsan_test_class_skip_min(uint64_t n) {
  return __atomic_exchange_n(&skip_min, n, __ATOMIC_RELAXED);
}
/* tests: the facts in addr's live record's window (any class; 0: none) */
RSAN_EXPORT uint64_t __rsan_test_location_facts(const void *addr) {
  rsan_loc *l = loc_peek_any((uintptr_t)addr);
  if (!l) return 0;
  uint64_t n = l->cls == RSAN_LOC_COMPACT ? ((rsan_loc_compact *)l)->nfacts : l->nfacts - l->fold;
  rsan_loc_release(l);
  return n;
}
RSAN_EXPORT uint64_t __rsan_test_location_shrinks(void) { return rsan_loc_shrinks(); }
/* tests (test_record_lines.py): addr's live record (any class, a compact one not expanded)
 * copied into buf (rsan_loc_size of its class: at most 384 bytes); returns its address | its
 * class (records are 64-byte aligned), 0 when there is none */
RSAN_EXPORT uint64_t __rsan_test_location_copy(const void *addr, void *buf) {
  rsan_loc *l = loc_peek_any((uintptr_t)addr);
  if (!l) return 0;
  memcpy(buf, l, rsan_loc_size(l->cls));
  uint64_t r = (uint64_t)(uintptr_t)l | l->cls;
  rsan_loc_release(l);
  return r;
}
/* tests: the record lines an operation (wr: a write) asks for before the lock, and (<< 8) those
 * it asks for after it in a record of class cls (rsan_location.h) */
RSAN_EXPORT unsigned __rsan_test_location_lines(int cls, int wr) {
  return RSAN_LINES_EARLY(wr) | rsan_loc_lines_late((unsigned)cls, wr) << 8;
}
/* tests: the stamp of addr's live record (0: none), and the records of class cls made so far
 * (from slabs: a record reused from the free list is not counted again) */
RSAN_EXPORT uint64_t __rsan_test_location_stamp(const void *addr) {
  rsan_loc *l = loc_peek_any((uintptr_t)addr);
  if (!l) return 0;
  uint64_t st = l->cls == RSAN_LOC_COMPACT ? 0 : l->stamp; /* (a compact one was never written) */
  rsan_loc_release(l);
  return st;
}
RSAN_EXPORT uint64_t __rsan_test_location_records(int cls) { return rsan_lslab_made((unsigned)cls); }

/* Promotion (docs/design/clocks.md §19). l (locked, class above cls) is the live record of
 * addr; its lock is dropped to take the stripe's first (lock order), and the live record of
 * addr is found again under it: the same l, unless l was retired meanwhile (then whatever is
 * live now, maybe a new location). A record of class cls, locked, gets that record's state:
 * line 0 but its lock, the facts, Msc, line 3, and Wsc when it has one; the lines it adds
 * hold ⊥ (cleared records), which is what the smaller class stood for. It takes the old
 * record's place in the chain, and the old one is retired: emptied of what it owned (the
 * new record owns it now) and cleared, then put on its class's free list. A thread waiting
 * for the old record's lock finds it retired and looks again (rsan_loc_acquire_slow): the
 * location is the same, with the same id and state, in another record. */
static void loc_move(rsan_loc *n, rsan_loc *o) {
  if (o->cls == RSAN_LOC_COMPACT) { /* expanded (location_compact.c) */
    rsan_loc_unpack(n, (rsan_loc_compact *)o);
    return;
  }
  /* what n owned as a cleared record and o's state replaces */
  rsan_clk_release(&n->Msc);
  if (o->cls <= RSAN_LOC_NOW) rsan_clk_release(&n->Wsc);
  rsan_loc_ev_free(n);
  /* line 0, field by field: the lock is n's own, the class n's, addr written atomically
   * (lock-free chain walks read it) */
  n->fcap = o->fcap;
  n->retired = 0;
  n->nocheck = o->nocheck;
  n->init_known = o->init_known;
  n->msc_wsc = o->msc_wsc;
  n->grow = o->grow;
  n->evlog = o->evlog;
  n->hist_next = o->hist_next;
  __atomic_store_n(&n->addr, o->addr, __ATOMIC_RELAXED);
  n->stamp = o->stamp;
  n->stampU = o->stampU;
  n->nfacts = o->nfacts;
  n->fold = o->fold;
  n->hist = o->hist;
  memcpy(n->facts_inline, o->facts_inline, sizeof n->facts_inline); /* (or facts_ext) */
  memcpy(&n->Msc, &o->Msc, sizeof n->Msc);
  n->id = o->id;
  n->msc_in = o->msc_in;
  n->ev = o->ev;
  /* S_x: ⊥ in a record that was never written (only the write rules change it, and a write
   * promotes a COLD record first), but not always below FULL (docs/design/clocks.md §20): moved */
  RSAN_ASSERT(o->cls != RSAN_LOC_COLD || (o->S.n == 0 && o->S.e == NULL));
  n->S = o->S;
  memcpy(n->evslot, o->evslot, sizeof n->evslot); /* (or ev_hint) */
  n->init_value = o->init_value;
  if (o->cls <= RSAN_LOC_NOW) memcpy(&n->Wsc, &o->Wsc, sizeof n->Wsc);
  /* o owns nothing now: its clocks inline ⊥, no window, table, history or S_x */
  rsan_clk_init(&o->Msc);
  if (o->cls <= RSAN_LOC_NOW) rsan_clk_init(&o->Wsc);
  o->fcap = RSAN_FACTS;
  o->ev = NULL;
  o->evlog = 0;
  o->hist = NULL;
  memset(&o->S, 0, sizeof o->S);
}

/* n (locked, holding o's state) takes the place of o (locked) at *pp in its granule's chain;
 * o is retired, cleared, unlocked and put back on its class's free list (under the stripe
 * lock: a promotion's and a shrink's last step) */
static void loc_replace(rsan_loc **pp, rsan_loc *o, rsan_loc *n) {
  __atomic_store_n(loc_gnext(n), *loc_gnext(o), __ATOMIC_RELAXED);
  __atomic_store_n(pp, n, __ATOMIC_RELEASE);
  o->retired = 1; /* o keeps its gnext: a walk standing on it still finds the rest */
  loc_clear_state(o);
  rsan_spin_unlock(&o->lock);
  loc_free_push(o);
}

/* tests: called with the old record and the stripe locked, before the new record is made (a
 * promotion's or a shrink's) */
static void (*promote_hook)(const void *addr);
RSAN_EXPORT void __rsan_test_set_promote_hook(void (*h)(const void *addr)) { promote_hook = h; }

rsan_loc *rsan_loc_promote(rsan_loc *l, unsigned cls) {
  uintptr_t addr = l->addr;
  rsan_loc_release(l);
  for (;;) {
    rsan_loc **head = head_of(addr, 1);
    rsan_spin *s = stripe_of(addr);
    rsan_spin_lock(s);
    rsan_loc **pp = head, *o;
    while ((o = *pp) && o->addr != addr) pp = loc_gnext(o);
    if (!o) { /* retired meanwhile (freed): the location made again, then promoted */
      rsan_spin_unlock(s);
      l = rsan_loc_acquire_slow(addr, cls);
      if (l->cls <= cls) return l;
      rsan_loc_release(l);
      continue;
    }
    rsan_spin_lock(&o->lock);
    if (o->cls <= cls) { /* promoted meanwhile */
      rsan_spin_unlock(s);
      return o;
    }
    if (RSAN_UNLIKELY(promote_hook != NULL)) promote_hook((const void *)addr); /* tests */
    unsigned to = class_for(cls);
    if (to == RSAN_LOC_NOW) __atomic_fetch_add(&now_made, 1, __ATOMIC_RELAXED);
    if (o->cls == RSAN_LOC_COMPACT) __atomic_fetch_add(&compact_up, 1, __ATOMIC_RELAXED);
    rsan_loc *n = loc_alloc(to);
    loc_move(n, o);
    loc_replace(pp, o, n);
    rsan_spin_unlock(s);
    __atomic_fetch_add(&promotions, 1, __ATOMIC_RELAXED);
    return n;
  }
}

/* Shrinking (docs/design/clocks.md §21): addr's live record, when it is a COLD record whose
 * state fits a compact one, is replaced by a compact record, in the table's lock order as a
 * promotion (stripe, old record, new record, free list); the old record is retired and goes
 * back to its class. Called by a load that added a fact, after it released the record: the
 * record is looked up again and checked again under its lock. A thread waiting for the old
 * record's lock finds it retired and looks again; finding the compact one, it expands it
 * (rsan_loc_acquire_slow). The location itself is not retired: rsan_loc_retire_gen stays. */
void rsan_loc_shrink(uintptr_t addr) {
  uint64_t made = __atomic_load_n(&compact_made, __ATOMIC_RELAXED);
  if (made >= __atomic_load_n(&skip_min, __ATOMIC_RELAXED) &&
      2 * __atomic_load_n(&compact_up, __ATOMIC_RELAXED) >= made)
    return; /* most compact records were expanded again: the COLD record stays (§29) */
  rsan_loc **head = head_of(addr, 0);
  if (!head) return;
  rsan_spin *s = stripe_of(addr);
  rsan_spin_lock(s);
  rsan_loc **pp = head, *o;
  while ((o = *pp) && o->addr != addr) pp = loc_gnext(o);
  if (o) rsan_spin_lock(&o->lock);
  if (!o || !rsan_loc_fits_compact(o)) { /* (freed, grown, or compact already meanwhile) */
    if (o) rsan_spin_unlock(&o->lock);
    rsan_spin_unlock(s);
    return;
  }
  if (RSAN_UNLIKELY(promote_hook != NULL)) promote_hook((const void *)addr); /* tests */
  rsan_loc_compact *n = (rsan_loc_compact *)loc_alloc(RSAN_LOC_COMPACT);
  rsan_loc_pack(n, o);
  n->retired = RSAN_LOC_LIVE_COMPACT;
  loc_replace(pp, o, (rsan_loc *)n);
  rsan_spin_unlock(&n->lock);
  rsan_spin_unlock(s);
  __atomic_fetch_add(&shrinks, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&compact_made, 1, __ATOMIC_RELAXED);
}
