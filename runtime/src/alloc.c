/* The runtime's own memory (never the interposed malloc/free: architecture.md "Linking and
 * interception") and its fatal-error exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_internal.h"

void rsan_lslab_print_census(void); /* location_slab.c (rsan_loc_slab.h) */

extern void *__libc_calloc(size_t, size_t);
extern void *__libc_malloc(size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static void rsan_oom(void) {
  static const char msg[] = "pyrsan: out of memory in the runtime\n";
  (void)!write(2, msg, sizeof msg - 1);
  rsan_exit_raw(RSAN_EXIT_FATAL);
}

void *rsan_alloc(size_t n) {
  void *p = __libc_calloc(1, n ? n : 1);
  if (!p) rsan_oom();
  return p;
}

void *rsan_alloc_line(size_t n) {
  void *p = __libc_memalign(64, n ? n : 1);
  if (!p) rsan_oom();
  memset(p, 0, n);
  return p;
}

void *rsan_alloc_raw(size_t n) {
  void *p = __libc_malloc(n ? n : 1);
  if (!p) rsan_oom();
  return p;
}

void *rsan_realloc(void *p, size_t n) {
  void *q = __libc_realloc(p, n ? n : 1);
  if (!q) rsan_oom();
  return q;
}

void rsan_free(void *p) { __libc_free(p); }

/* ---- size classes (rsan_internal.h) ----
 * Per-location objects that a young location allocates in its first operations (its write
 * history ring as it doubles, its evicted-fact table, the race detector's S_x array) come
 * from slabs: no malloc, no free, no search on an operation. docs/design/clocks.md §20, §22.
 *
 * Size classes: 16, 32 and 48 bytes (16-byte aligned), then every multiple of 64 up to
 * RSAN_SLAB_MAX (64-byte aligned), and 160 bytes (32-byte aligned: a narrow evicted-fact
 * table, whose entries are 32 bytes, rsan_location.h; docs/design/clocks.md §31), each a free
 * list (linked through the blocks' first word) and the unused tail of its newest 64 KB chunk
 * (mapped: outside malloc's heap); their memory stays in its class (type-stable, as the
 * location records, location.c).
 *
 * History rings (64, 128, 256 and 512 bytes: 1, 2, 4 and 8 entries; rsan_ring_alloc) come from
 * a buddy system instead: a block of 64 << k bytes (order k) is half of a block of order k + 1,
 * its buddy the other half; a free block whose buddy is free of the same order is merged with
 * it (once buddy_keep blocks of its order are free), and a bigger block is split when no block
 * of the order asked is free. So the memory a location's ring leaves behind as it doubles
 * becomes another location's ring of any length (nothing reads a free ring). Blocks come from
 * regions of BUDDY_REGION bytes aligned to their size (the buddy of the block at offset o is at
 * o ^ (64 << k)), handed out 512 bytes at a time; a region's first BUDDY_META bytes hold one
 * bitmap per order (bit: a free block of that order starts there).
 *
 * Each class, and the buddy system, has a spin lock of its own (a leaf: nothing is taken under
 * it, and the kernel or glibc only to get memory). */
#define SLAB_CHUNK (64 * 1024)
enum { SLAB_SMALL = 3, SLAB_160 = SLAB_SMALL + RSAN_SLAB_MAX / 64, SLAB_NCLS };
_Static_assert(SLAB_CHUNK % 32 == 0 && 160 % 32 == 0, "the 160-byte class's blocks are 32-byte aligned");

typedef struct slab_class {
  rsan_spin lock;
  void *free;       /* released objects, linked through their first word */
  char *next, *end; /* the newest chunk's part not handed out yet */
  uint64_t chunks;  /* chunks taken (the census) */
} __attribute__((aligned(64))) slab_class;
static slab_class slab[SLAB_NCLS];

static inline unsigned slab_cls(size_t n) {
  if (n > 128 && n <= 160) return SLAB_160;
  return n <= 48 ? (unsigned)((n + 15) / 16) - 1 : SLAB_SMALL - 1 + (unsigned)((n + 63) / 64);
}
static inline size_t slab_size(unsigned c) {
  if (c == SLAB_160) return 160;
  return c < SLAB_SMALL ? 16 * (size_t)(c + 1) : 64 * (size_t)(c - SLAB_SMALL + 1);
}

/* the buddy system: orders 0 .. BUDDY_TOP (64 .. 512 bytes) */
#define BUDDY_TOP 3
#define BUDDY_REGION ((uintptr_t)2 << 20)
#define BUDDY_UNITS (BUDDY_REGION / 64)
/* the bitmaps of orders 0 .. 3, BUDDY_UNITS >> k bits each (7.5 KB): the region's first 8 KB
 * (16 blocks of 512 bytes that are never handed out) */
#define BUDDY_META ((uintptr_t)8 << 10)
_Static_assert((BUDDY_UNITS / 8) * 2 <= BUDDY_META && RSAN_SLAB_MAX == 64 << BUDDY_TOP,
               "the bitmaps fit the region's head; the largest class is the top order");
typedef struct buddy_free {
  struct buddy_free *next, *prev;
} buddy_free;
static struct {
  rsan_spin lock;
  buddy_free *free[BUDDY_TOP + 1]; /* free blocks of each order, doubly linked */
  uint32_t nfree[BUDDY_TOP + 1];   /* their numbers */
  char *next, *end;                /* the newest region's part not handed out yet */
  uint64_t bytes;                  /* regions' bytes handed out (the census) */
} __attribute__((aligned(64))) buddy;

/* the order of a class, or -1 when it is not a power-of-2 line size */
static inline int buddy_order(unsigned c) {
  size_t lines = slab_size(c) / 64;
  return c >= SLAB_SMALL && c != SLAB_160 && (lines & (lines - 1)) == 0 ? __builtin_ctzll(lines) : -1;
}
/* order k's bitmap: after those of the orders below, in the region's head */
static const uint32_t buddy_map_at[BUDDY_TOP + 1] = {0, BUDDY_UNITS / 64, BUDDY_UNITS / 64 * 3 / 2,
                                                     BUDDY_UNITS / 64 * 7 / 4};
static inline uint64_t *buddy_bits(char *p, int k, uintptr_t *bit) {
  uintptr_t base = (uintptr_t)p & ~(BUDDY_REGION - 1);
  *bit = ((uintptr_t)p - base) >> (6 + k);
  return (uint64_t *)base + buddy_map_at[k];
}
static inline int buddy_is_free(char *p, int k) {
  uintptr_t b;
  uint64_t *m = buddy_bits(p, k, &b);
  return (int)(m[b / 64] >> (b % 64) & 1);
}
static void buddy_push(char *p, int k) {
  uintptr_t b;
  uint64_t *m = buddy_bits(p, k, &b);
  m[b / 64] |= 1ull << (b % 64);
  buddy_free *f = (buddy_free *)p;
  f->prev = NULL;
  f->next = buddy.free[k];
  if (f->next) f->next->prev = f;
  buddy.free[k] = f;
  buddy.nfree[k]++;
}
static void buddy_unlink(char *p, int k) {
  uintptr_t b;
  uint64_t *m = buddy_bits(p, k, &b);
  m[b / 64] &= ~(1ull << (b % 64));
  buddy_free *f = (buddy_free *)p;
  if (f->prev) f->prev->next = f->next;
  else buddy.free[k] = f->next;
  if (f->next) f->next->prev = f->prev;
  buddy.nfree[k]--;
}
static char *buddy_region(void) {
  /* twice the size, trimmed to an aligned region (untouched pages cost no memory) */
  char *m = mmap(NULL, 2 * BUDDY_REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) rsan_oom();
  char *r = (char *)(((uintptr_t)m + BUDDY_REGION - 1) & ~(BUDDY_REGION - 1));
  if (r > m) munmap(m, (size_t)(r - m));
  if (r + BUDDY_REGION < m + 2 * BUDDY_REGION)
    munmap(r + BUDDY_REGION, (size_t)(m + 2 * BUDDY_REGION - (r + BUDDY_REGION)));
  return r; /* zeroed: every bitmap empty */
}
static RSAN_NOINLINE char *buddy_alloc(int k) {
  rsan_spin_lock(&buddy.lock);
  int j = k;
  while (j <= BUDDY_TOP && !buddy.free[j]) j++;
  char *p;
  if (j <= BUDDY_TOP) {
    p = (char *)buddy.free[j];
    buddy_unlink(p, j);
  } else { /* a new top block */
    if (RSAN_UNLIKELY(buddy.next == buddy.end)) {
      char *r = buddy_region();
      buddy.next = r + BUDDY_META;
      buddy.end = r + BUDDY_REGION;
    }
    p = buddy.next;
    buddy.next += (size_t)64 << BUDDY_TOP;
    buddy.bytes += (size_t)64 << BUDDY_TOP;
    j = BUDDY_TOP;
  }
  while (j > k) { /* split: the upper halves are free */
    j--;
    buddy_push(p + ((size_t)64 << j), j);
  }
  rsan_spin_unlock(&buddy.lock);
  return p;
}
/* A released block is merged with its buddy while that is free (of its order), unless its
 * order has fewer than buddy_keep free blocks. So a ring freed and asked for again at once (a
 * location retired and the next one made) is a pop, not three merges and three splits; and
 * the rings of a few thousand locations that grow together are carved in the order they grow
 * (a block merged from halves freed in any order would scatter them: a program that walks
 * its locations in order, as a queue does its slots, walks their rings in order too). Two
 * free buddies stay unmerged only if the second was released while fewer than buddy_keep
 * blocks of its order were free; both stay on the list until one is taken, so at most
 * buddy_keep / 2 such pairs exist per order at any time (a few MB at most). */
static uint32_t buddy_keep = 4096;
static RSAN_NOINLINE void buddy_release(char *p, int k) {
  rsan_spin_lock(&buddy.lock);
  for (; k < BUDDY_TOP && buddy.nfree[k] >= buddy_keep; k++) {
    char *q = (char *)((uintptr_t)p ^ ((uintptr_t)64 << k));
    if (!buddy_is_free(q, k)) break;
    buddy_unlink(q, k);
    if (q < p) p = q;
  }
  buddy_push(p, k);
  rsan_spin_unlock(&buddy.lock);
}

void *rsan_slab_alloc(size_t n) {
  if (RSAN_UNLIKELY(n > RSAN_SLAB_MAX)) return rsan_alloc_line(n);
  unsigned c = slab_cls(n ? n : 1);
  size_t sz = slab_size(c);
  slab_class *s = &slab[c];
  rsan_spin_lock(&s->lock);
  void *p = s->free;
  if (p) {
    s->free = *(void **)p;
  } else {
    if (RSAN_UNLIKELY(s->next + sz > s->end)) {
      /* mapped, not malloc's: chunks live for the run, and among the blocks malloc hands out and
       * takes back (snapshots, coded S_x) they would keep the holes those leave from merging
       * (docs/design/clocks.md §29) */
      void *m = mmap(NULL, SLAB_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) rsan_oom();
      s->next = m;
      s->end = s->next + SLAB_CHUNK / sz * sz;
      s->chunks++;
    }
    p = s->next;
    s->next += sz;
  }
  rsan_spin_unlock(&s->lock);
  memset(p, 0, sz);
  return p;
}

void rsan_slab_free(void *p, size_t n) {
  if (!p) return;
  if (RSAN_UNLIKELY(n > RSAN_SLAB_MAX)) {
    rsan_free(p);
    return;
  }
  unsigned c = slab_cls(n ? n : 1);
  slab_class *s = &slab[c];
  rsan_spin_lock(&s->lock);
  *(void **)p = s->free;
  s->free = p;
  rsan_spin_unlock(&s->lock);
}

/* history rings (history.c): n a power-of-2 multiple of 64 bytes, up to RSAN_SLAB_MAX */
void *rsan_ring_alloc(size_t n) {
  int k = buddy_order(slab_cls(n));
  RSAN_ASSERT(k >= 0 && (size_t)64 << k == n);
  void *b = buddy_alloc(k);
  memset(b, 0, n);
  return b;
}
void rsan_ring_free(void *p, size_t n) {
  if (p) buddy_release(p, buddy_order(slab_cls(n)));
}

uint64_t rsan_slab_bytes(void) {
  uint64_t b = __atomic_load_n(&buddy.bytes, __ATOMIC_RELAXED);
  for (unsigned c = 0; c < SLAB_NCLS; c++)
    b += __atomic_load_n(&slab[c].chunks, __ATOMIC_RELAXED) * SLAB_CHUNK;
  return b;
}

/* verbosity >= 1, at exit (location_census.c): the bytes taken, and the buddy system's free ones */
void rsan_slab_print_census(void) {
  uint64_t fb[BUDDY_TOP + 1];
  rsan_spin_lock(&buddy.lock);
  for (int k = 0; k <= BUDDY_TOP; k++) fb[k] = (uint64_t)buddy.nfree[k] << (6 + k);
  rsan_spin_unlock(&buddy.lock);
  char buf[240];
  int n = snprintf(buf, sizeof buf,
                   "pyrsan: location size classes: %llu bytes taken, %llu of them by the buddy system "
                   "(64..512 bytes), free there: %llu %llu %llu %llu\n",
                   (unsigned long long)rsan_slab_bytes(),
                   (unsigned long long)__atomic_load_n(&buddy.bytes, __ATOMIC_RELAXED),
                   (unsigned long long)fb[0], (unsigned long long)fb[1], (unsigned long long)fb[2],
                   (unsigned long long)fb[3]);
  if (n > 0) (void)!write(2, buf, (size_t)n);
  rsan_lslab_print_census(); /* location_slab.c: the record slabs given back */
}

/* tests (testsuite/runtime/test_alloc_classes.py) */
RSAN_EXPORT void *__rsan_test_slab_alloc(size_t n) { return rsan_slab_alloc(n); }
RSAN_EXPORT void __rsan_test_slab_free(void *p, size_t n) { rsan_slab_free(p, n); }
RSAN_EXPORT void *__rsan_test_ring_alloc(size_t n) { return rsan_ring_alloc(n); }
/* buddy_keep set to n (tests: a small mark, to see merges of a few blocks); the old one */
RSAN_EXPORT uint32_t __rsan_test_buddy_keep(uint32_t n) {
  rsan_spin_lock(&buddy.lock);
  uint32_t o = buddy_keep;
  buddy_keep = n;
  rsan_spin_unlock(&buddy.lock);
  return o;
}
RSAN_EXPORT void __rsan_test_ring_free(void *p, size_t n) { rsan_ring_free(p, n); }
RSAN_EXPORT uint64_t __rsan_test_slab_bytes(void) { return rsan_slab_bytes(); }
/* the bytes of the buddy system's free blocks of n's order (-1: n is not one of its sizes) */
RSAN_EXPORT int64_t __rsan_test_buddy_free_bytes(size_t n) {
  int k = n && n <= RSAN_SLAB_MAX ? buddy_order(slab_cls(n)) : -1;
  if (k < 0) return -1;
  int64_t b = 0;
  rsan_spin_lock(&buddy.lock);
  for (buddy_free *f = buddy.free[k]; f; f = f->next) b += (int64_t)64 << k;
  rsan_spin_unlock(&buddy.lock);
  return b;
}
/* the lock of n's class held for ms milliseconds (a raw nanosleep: no interceptor), as an
 * allocation outside any location lock holds it (a thread's clock growing); for a history
 * ring's size (64, 128, 256, 512) the buddy system's lock too, taken after it (the fork
 * handler's order) */
RSAN_EXPORT void __rsan_test_slab_hold(size_t n, unsigned ms) {
  unsigned c = slab_cls(n ? n : 1);
  int ring = buddy_order(c) >= 0;
  rsan_spin_lock(&slab[c].lock);
  if (ring) rsan_spin_lock(&buddy.lock);
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (syscall(SYS_nanosleep, &ts, &ts) != 0) {
  }
  if (ring) rsan_spin_unlock(&buddy.lock);
  rsan_spin_unlock(&slab[c].lock);
}

/* fork: every class's lock and the buddy system's, after every other runtime lock (they are
 * leaves) */
void rsan_slab_fork_lock(void) {
  for (unsigned c = 0; c < SLAB_NCLS; c++) rsan_spin_lock(&slab[c].lock);
  rsan_spin_lock(&buddy.lock);
}
void rsan_slab_fork_unlock(void) {
  rsan_spin_unlock(&buddy.lock);
  for (unsigned c = SLAB_NCLS; c-- > 0;) rsan_spin_unlock(&slab[c].lock);
}

void rsan_die_assert(const char *cond, const char *file, int line) {
  char buf[512];
  int n = 0;
  const char *parts[] = {"pyrsan: internal assertion failed: ", cond, " at ", file, ":"};
  for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++)
    for (const char *s = parts[i]; *s && n < 480; s++) buf[n++] = *s;
  char num[16];
  int k = 0;
  do num[k++] = (char)('0' + line % 10);
  while ((line /= 10) && k < 15);
  while (k) buf[n++] = num[--k];
  buf[n++] = '\n';
  (void)!write(2, buf, (size_t)n);
  abort();
}
