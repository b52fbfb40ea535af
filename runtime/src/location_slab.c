/* The location records' memory (location.c): slabs of records of one size class, and the
 * release of a slab whose records are all free (docs/design/clocks.md §25).
 *
 * Records are type-stable per class (location.c): a retired record is recycled only as a
 * record of its class, since a reader may still hold a pointer to it and read its line 0
 * (lock, cls, retired, addr) and gnext. A class whose locations all moved on (every COLD
 * record of a program whose locations are all written ends promoted, compact records expand
 * again) would keep its records' memory for the run. So a slab whose records are all free is
 * given back to the system (madvise MADV_DONTNEED) while the memory stays mapped: its pages
 * read as zero from then on, and a zero record is what a stale reader rejects — retired 0
 * and addr 0 (no location has address 0: F is not in the table), gnext NULL (a record of
 * class 0's gnext offset is inside every class's record but the compact one, whose slabs are
 * therefore never released). Before the pages go, the releaser takes every record's lock
 * (no stale reader is between its lock and its check then); after, the lock words read 0,
 * which is the lock free, and every futex waiter parked on one is woken (it retries on 0).
 * The releaser never unlocks those locks: they are gone with the pages. A released slab is
 * reused before any new slab is made: its records get their class, window size and retired
 * flag again (not their locks, which a stale reader may hold; the allocation takes the lock
 * as usual).
 *
 * Memory: regions of REGION bytes (mmap, aligned to their size), each starting with one page
 * that maps every page of the region to its slab; slabs of whole pages (slab_recs records).
 * Each slab has its own free list; a class keeps the slabs with free records on lists by
 * their number of free records, and allocates from a slab with the fewest (the slabs with
 * many drain, and a slab all free can be given back). A slab is released only when its class keeps at least `keep`
 * free records besides it (a program that frees and makes locations in turns does not pay a
 * release and the page faults of a reuse each time). Releases happen in loc_free_push's
 * callers, under a stripe lock (location.c), so never while fork holds every lock. */
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_internal.h"
#include "rsan_loc_slab.h"

#define REGION ((uintptr_t)2 << 20)
#define PAGE ((uintptr_t)4096)

typedef struct lslab {
  struct lslab *next;          /* every slab of the class, the newest first */
  struct lslab *pnext, *pprev; /* the class's slabs with free records (or the released list) */
  char *recs;
  rsan_loc *free; /* its freed records, through free_next */
  uint32_t nrec, nfree;
  uint32_t carved; /* records handed out so far (the class's newest slab hands out the next) */
  uint64_t freemask; /* record i handed out and free since (on the free list or dropped) */
  uint64_t dropmask; /* record i free and on a dropped page (not on the free list) */
  uint32_t ndropped; /* records in dropmask */
  uint8_t pdrop;     /* page j of the slab dropped (given back while others are in use) */
  uint8_t cls, partial;
  uint8_t released; /* 1 released, 2 being released (on no list) */
} lslab;

static rsan_spin lock;
#define NBK 64 /* a slab's free records: 1 .. 64 (slab_recs), one list each */
static struct {
  lslab *slabs, *released;
  lslab *bk[NBK];    /* the slabs with k + 1 free records (not released) */
  uint64_t bkmask;   /* bit k: bk[k] not empty */
  lslab *bump;    /* the slab whose records from carved on are handed out next */
  uint64_t nfree; /* freed records on the slabs' lists */
} cl[RSAN_LOC_NCLS];
static char *rnext, *rend; /* the newest region's part not handed out */
static char **regions;     /* every region (the test reset unmaps them) */
static uint32_t nregions, capregions;
static uint64_t released_bytes, nreleases, nreuses, npages;
static uint32_t keep = 4096;

/* records per slab: a whole number of pages (4 KB / 8 KB / 20 KB / 12 KB) */
static inline uint32_t slab_recs(unsigned cls) { return cls == RSAN_LOC_NOW ? 64 : 32; }
static inline size_t slab_bytes(unsigned cls) { return slab_recs(cls) * rsan_loc_size(cls); }
_Static_assert(NBK >= 64 && (32 * 384) % 4096 == 0 && (64 * 320) % 4096 == 0 && (32 * 256) % 4096 == 0 &&
                   (32 * 128) % 4096 == 0,
               "slabs are whole pages");

static inline rsan_loc **free_next(rsan_loc *l) {
  return l->cls == RSAN_LOC_COMPACT ? &((rsan_loc_compact *)l)->free_next : &l->free_next;
}
static inline lslab *slab_of(const void *rec) {
  uintptr_t r = (uintptr_t)rec & ~(REGION - 1);
  return ((lslab **)r)[((uintptr_t)rec - r) / PAGE];
}

/* s on the list of its number of free records (nfree >= 1) */
static void partial_add(lslab *s) {
  unsigned k = s->nfree - 1;
  s->pprev = NULL;
  s->pnext = cl[s->cls].bk[k];
  if (s->pnext) s->pnext->pprev = s;
  cl[s->cls].bk[k] = s;
  cl[s->cls].bkmask |= 1ull << k;
  s->partial = 1;
}
static void partial_remove(lslab *s) {
  unsigned k = s->nfree - 1;
  if (s->pprev) s->pprev->pnext = s->pnext;
  else cl[s->cls].bk[k] = s->pnext;
  if (s->pnext) s->pnext->pprev = s->pprev;
  if (!cl[s->cls].bk[k]) cl[s->cls].bkmask &= ~(1ull << k);
  s->partial = 0;
}

/* the next record of s handed out, as a cleared record of its class has it: class, window
 * size, retired (its lock untouched: a stale reader of a released slab may hold it) */
static rsan_loc *carve(lslab *s) {
  rsan_loc *l = (rsan_loc *)(s->recs + (size_t)s->carved * rsan_loc_size(s->cls));
  l->fcap = RSAN_FACTS;
  l->cls = s->cls;
  l->retired = 1;
  __atomic_store_n(&s->carved, s->carved + 1, __ATOMIC_RELEASE); /* (census walks read it) */
  return l;
}

static void region_die(void) {
  static const char msg[] = "pyrsan: cannot map memory for location records\n";
  (void)!write(2, msg, sizeof msg - 1);
  rsan_exit_raw(RSAN_EXIT_FATAL);
}
static void new_region(void) {
  char *m = mmap(NULL, 2 * REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) region_die();
  char *r = (char *)(((uintptr_t)m + REGION - 1) & ~(REGION - 1));
  if (r > m) munmap(m, (size_t)(r - m));
  if (r + REGION < m + 2 * REGION) munmap(r + REGION, (size_t)(m + 2 * REGION - (r + REGION)));
  if (nregions == capregions) {
    capregions = capregions ? 2 * capregions : 16;
    regions = rsan_realloc(regions, capregions * sizeof *regions);
  }
  regions[nregions++] = r;
  rnext = r + PAGE; /* the first page: the slab of each page */
  rend = r + REGION;
}

/* a new slab of class cls, carved (under lock) */
static lslab *new_slab(unsigned cls) {
  size_t bytes = slab_bytes(cls);
  if (!rnext || (size_t)(rend - rnext) < bytes) new_region();
  lslab *s = rsan_alloc(sizeof *s);
  s->recs = rnext;
  rnext += bytes;
  s->cls = (uint8_t)cls;
  s->nrec = slab_recs(cls);
  uintptr_t r = (uintptr_t)s->recs & ~(REGION - 1);
  for (uintptr_t p = (uintptr_t)s->recs; p < (uintptr_t)s->recs + bytes; p += PAGE)
    ((lslab **)r)[(p - r) / PAGE] = s;
  s->next = cl[cls].slabs;
  __atomic_store_n(&cl[cls].slabs, s, __ATOMIC_RELEASE);
  return s;
}

/* a freed record of the slab with the fewest free records (so that the slabs with many
 * drain, and a slab all free is given back), else the next of the newest slab, else of a
 * released slab (its pages come back zero), else of a new one */
rsan_loc *rsan_lslab_take(unsigned cls) {
  rsan_spin_lock(&lock);
  lslab *s = cl[cls].bkmask ? cl[cls].bk[__builtin_ctzll(cl[cls].bkmask)] : NULL;
  rsan_loc *l;
  if (s) {
    l = s->free;
    s->free = *free_next(l);
    s->freemask &= ~(1ull << ((size_t)((char *)l - s->recs) / rsan_loc_size(cls)));
    cl[cls].nfree--;
    partial_remove(s);
    if (--s->nfree) partial_add(s);
  } else {
    s = cl[cls].bump;
    if (!s || s->carved == s->nrec) {
      s = cl[cls].released;
      if (s) {
        cl[cls].released = s->pnext;
        __atomic_store_n(&s->carved, 0, __ATOMIC_RELAXED);
        s->freemask = s->dropmask = 0;
        s->ndropped = 0;
        s->pdrop = 0;
        __atomic_store_n(&s->released, 0, __ATOMIC_RELEASE);
        released_bytes -= slab_bytes(cls);
        nreuses++;
      } else {
        s = new_slab(cls);
      }
      cl[cls].bump = s;
    }
    l = carve(s);
  }
  rsan_spin_unlock(&lock);
  return l;
}

static long futex_wake_all(uint32_t *w) {
  return syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* s's pages given back: every record's lock held, the pages dropped (the locks read 0, free),
 * the parked waiters woken. The caller owns s (released == 2 or a fork holds every lock). */
static void drop_pages(lslab *s, int locked) {
  size_t sz = rsan_loc_size(s->cls);
  if (!locked)
    for (uint32_t i = 0; i < s->nrec; i++) rsan_spin_lock(&((rsan_loc *)(s->recs + i * sz))->lock);
  (void)madvise(s->recs, slab_bytes(s->cls), MADV_DONTNEED);
  for (uint32_t i = 0; i < s->nrec; i++) {
    rsan_rt_leave(); /* (the lock's rsan_rt_enter: the lock is gone, not unlocked) */
    (void)futex_wake_all(&((rsan_loc *)(s->recs + i * sz))->lock.v);
  }
}

/* Page j of s given back while other records of s are in use (under lock): every record it
 * overlaps is free. Those records leave the free list (their free_next may be on the page) and
 * are marked dropped; the locks of the records that start on the page are taken, the page
 * dropped, the waiters woken, as drop_pages does for a whole slab. A record that starts on
 * another page keeps its line 0 (retired, its class), and its gnext reads 0 or what it was. */
static void drop_page(lslab *s, uint32_t j) {
  size_t sz = rsan_loc_size(s->cls);
  uintptr_t p = (uintptr_t)s->recs + j * PAGE;
  uint32_t i0 = (uint32_t)((p - (uintptr_t)s->recs) / sz),
           i1 = (uint32_t)((p + PAGE - 1 - (uintptr_t)s->recs) / sz);
  uint64_t m = (i1 == 63 ? ~0ull : (1ull << (i1 + 1)) - 1) & ~((1ull << i0) - 1);
  uint64_t newly = m & ~s->dropmask;
  if ((s->freemask & m) != m) return;
  if (newly) { /* off the free list */
    rsan_loc **pp = &s->free;
    while (*pp) {
      size_t i = (size_t)((char *)*pp - s->recs) / sz;
      if (newly >> i & 1) *pp = *free_next(*pp);
      else pp = free_next(*pp);
    }
    uint32_t k = (uint32_t)__builtin_popcountll(newly);
    partial_remove(s);
    s->nfree -= k;
    if (s->nfree) partial_add(s);
    cl[s->cls].nfree -= k;
    s->dropmask |= newly;
    s->ndropped += k;
  }
  uint32_t h0 = (uint32_t)((p - (uintptr_t)s->recs + sz - 1) / sz); /* the first record starting on p */
  for (uint32_t i = h0; i <= i1 && (uintptr_t)s->recs + i * sz < p + PAGE; i++)
    rsan_spin_lock(&((rsan_loc *)(s->recs + i * sz))->lock);
  (void)madvise((void *)p, PAGE, MADV_DONTNEED);
  for (uint32_t i = h0; i <= i1 && (uintptr_t)s->recs + i * sz < p + PAGE; i++) {
    rsan_rt_leave();
    (void)futex_wake_all(&((rsan_loc *)(s->recs + i * sz))->lock.v);
  }
  s->pdrop |= (uint8_t)(1u << j);
  released_bytes += PAGE;
  npages++;
}

void rsan_lslab_put(rsan_loc *l) {
  rsan_spin_lock(&lock);
  lslab *s = slab_of(l);
  unsigned c = s->cls;
  size_t sz = rsan_loc_size(c), off = (size_t)((char *)l - s->recs);
  *free_next(l) = s->free;
  s->free = l;
  s->freemask |= 1ull << (off / sz);
  cl[c].nfree++;
  if (s->nfree) partial_remove(s);
  s->nfree++;
  partial_add(s);
  int release = s->nfree + s->ndropped == s->nrec && s != cl[c].bump && c != RSAN_LOC_COMPACT &&
                cl[c].nfree - s->nfree >= keep;
  if (release) {
    partial_remove(s);
    cl[c].nfree -= s->nfree;
    __atomic_store_n(&s->released, 2, __ATOMIC_RELAXED);
  } else if (c != RSAN_LOC_COMPACT && s != cl[c].bump && cl[c].nfree >= keep + 64) {
    /* the pages l is on, when every record on them is free */
    for (uint32_t j = (uint32_t)(off / PAGE); j <= (uint32_t)((off + sz - 1) / PAGE); j++)
      if (!(s->pdrop >> j & 1)) drop_page(s, j);
  }
  rsan_spin_unlock(&lock);
  if (!release) return;
  drop_pages(s, 0);
  rsan_spin_lock(&lock);
  __atomic_store_n(&s->released, 1, __ATOMIC_RELAXED);
  s->free = NULL;
  s->nfree = 0;
  s->pnext = cl[c].released;
  cl[c].released = s;
  released_bytes += slab_bytes(c) - (uint64_t)__builtin_popcount(s->pdrop) * PAGE;
  nreleases++;
  rsan_spin_unlock(&lock);
}

void rsan_lslab_for_each_made(void (*fn)(rsan_loc *l, void *arg), void *arg) {
  lslab *first[RSAN_LOC_NCLS];
  rsan_spin_lock(&lock); /* no location lock under it */
  for (unsigned c = 0; c < RSAN_LOC_NCLS; c++) first[c] = cl[c].slabs;
  rsan_spin_unlock(&lock);
  for (unsigned c = 0; c < RSAN_LOC_NCLS; c++)
    for (lslab *s = first[c]; s; s = s->next) {
      if (__atomic_load_n(&s->released, __ATOMIC_ACQUIRE)) continue;
      uint32_t n = __atomic_load_n(&s->carved, __ATOMIC_ACQUIRE);
      for (uint32_t i = 0; i < n; i++) {
        rsan_loc *l = (rsan_loc *)(s->recs + i * rsan_loc_size(c));
        if (__atomic_load_n(&s->dropmask, __ATOMIC_RELAXED) >> i & 1) continue; /* (no fault) */
        rsan_spin_lock(&l->lock);
        /* (released or dropped meanwhile: its lock was taken before the pages went, or is a
         * zero page's) */
        if (!__atomic_load_n(&s->released, __ATOMIC_RELAXED) &&
            !(__atomic_load_n(&s->dropmask, __ATOMIC_RELAXED) >> i & 1))
          fn(l, arg);
        rsan_spin_unlock(&l->lock);
      }
    }
}

void rsan_lslab_walk(void (*fn)(rsan_loc *l)) {
  for (unsigned c = 0; c < RSAN_LOC_NCLS; c++)
    for (lslab *s = cl[c].slabs; s; s = s->next)
      if (!s->released)
        for (uint32_t i = 0; i < s->carved; i++)
          if (!(s->dropmask >> i & 1)) fn((rsan_loc *)(s->recs + i * rsan_loc_size(c)));
}

void rsan_lslab_reset_all(void) {
  for (unsigned c = 0; c < RSAN_LOC_NCLS; c++) {
    while (cl[c].slabs) {
      lslab *s = cl[c].slabs;
      cl[c].slabs = s->next;
      rsan_free(s);
    }
    cl[c].released = cl[c].bump = NULL;
    memset(cl[c].bk, 0, sizeof cl[c].bk);
    cl[c].bkmask = 0;
    cl[c].nfree = 0;
  }
  for (uint32_t i = 0; i < nregions; i++) munmap(regions[i], REGION);
  nregions = 0;
  rnext = rend = NULL;
  released_bytes = 0;
}

/* fork: every record's lock (a released slab's or a dropped page's too: its pages come back,
 * zero), then the list's; released or dropped again after (both in the parent and the child: a stale reader of the
 * parent may have held a released record's lock, which the child must not inherit) */
void rsan_lslab_fork_lock(void) {
  for (unsigned c = 0; c < RSAN_LOC_NCLS; c++)
    for (lslab *s = cl[c].slabs; s; s = s->next)
      for (uint32_t i = 0; i < s->nrec; i++)
        rsan_spin_lock(&((rsan_loc *)(s->recs + i * rsan_loc_size(c)))->lock);
  rsan_spin_lock(&lock);
}
void rsan_lslab_fork_unlock(void) {
  rsan_spin_unlock(&lock);
  for (unsigned c = 0; c < RSAN_LOC_NCLS; c++)
    for (lslab *s = cl[c].slabs; s; s = s->next) {
      if (s->released) {
        drop_pages(s, 1);
        continue;
      }
      size_t sz = rsan_loc_size(c);
      for (uint32_t i = 0; i < s->nrec; i++) /* a record that starts on a dropped page: below */
        if (!(s->pdrop >> (i * sz / PAGE) & 1)) rsan_spin_unlock(&((rsan_loc *)(s->recs + i * sz))->lock);
      if (!s->pdrop) continue;
      for (uint32_t j = 0; j * PAGE < slab_bytes(c); j++) /* dropped again, as drop_page does */
        if (s->pdrop >> j & 1) (void)madvise(s->recs + j * PAGE, PAGE, MADV_DONTNEED);
      for (uint32_t i = 0; i < s->nrec; i++)
        if (s->pdrop >> (i * sz / PAGE) & 1) {
          rsan_rt_leave();
          (void)futex_wake_all(&((rsan_loc *)(s->recs + i * sz))->lock.v);
        }
    }
}

/* records of class cls handed out from their slabs so far (a freed one taken again is not
 * counted again; slabs released not counted) */
uint64_t rsan_lslab_made(unsigned cls) {
  uint64_t k = 0;
  rsan_spin_lock(&lock);
  for (lslab *s = cl[cls].slabs; s; s = s->next) k += s->released ? 0 : s->carved;
  rsan_spin_unlock(&lock);
  return k;
}

/* verbosity >= 1, at exit (alloc.c rsan_slab_print_census): the bytes given back, and by class
 * (full, without W, without W and Wsc, compact) the bytes of records handed out in slabs not
 * given back, and of those free */
void rsan_lslab_print_census(void) {
  uint64_t made[RSAN_LOC_NCLS], freeb[RSAN_LOC_NCLS];
  char buf[400];
  rsan_spin_lock(&lock);
  for (unsigned c = 0; c < RSAN_LOC_NCLS; c++) {
    made[c] = 0;
    for (lslab *s = cl[c].slabs; s; s = s->next) made[c] += s->released ? 0 : s->carved;
    made[c] *= rsan_loc_size(c);
    freeb[c] = cl[c].nfree * rsan_loc_size(c);
  }
  int n = snprintf(
      buf, sizeof buf,
      "pyrsan: location records released: %llu bytes now (slabs released %llu times, "
      "reused %llu times, pages dropped alone %llu times); by class made / free: %llu / %llu, %llu / %llu, %llu / %llu, "
      "%llu / %llu\n",
      (unsigned long long)released_bytes, (unsigned long long)nreleases, (unsigned long long)nreuses,
      (unsigned long long)npages, (unsigned long long)made[0], (unsigned long long)freeb[0],
      (unsigned long long)made[1], (unsigned long long)freeb[1], (unsigned long long)made[2],
      (unsigned long long)freeb[2], (unsigned long long)made[3], (unsigned long long)freeb[3]);
  rsan_spin_unlock(&lock);
  if (n > 0) (void)!write(2, buf, (size_t)n);
}

/* tests (testsuite/runtime/test_location_release.py) */
RSAN_EXPORT uint32_t __rsan_test_lslab_keep(uint32_t n) {
  rsan_spin_lock(&lock);
  uint32_t o = keep;
  keep = n;
  rsan_spin_unlock(&lock);
  return o;
}
RSAN_EXPORT uint64_t __rsan_test_lslab_released(void) {
  rsan_spin_lock(&lock);
  uint64_t b = released_bytes;
  rsan_spin_unlock(&lock);
  return b;
}
