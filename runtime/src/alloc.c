/* The runtime's own memory (never the interposed malloc/free: architecture.md "Linking and
 * interception") and its fatal-error exits. */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "rsan_internal.h"

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
 * from slabs of one size each: 16, 32 and 48 bytes (16-byte aligned), then 64 to 512 bytes
 * by cache line (64-byte aligned). A class is a free list and the rest of its newest chunk,
 * under a lock of its own (a leaf: nothing is taken under it, and glibc's malloc only to get
 * a chunk); an allocation pops or bumps, a release pushes: no malloc, no free, no search.
 * Memory stays in its class (type-stable, as the location records, location.c): the next
 * object of that size reuses it. docs/design/clocks.md §20. */
#define SLAB_CHUNK (64 * 1024)
enum { SLAB_SMALL = 3, SLAB_NCLS = SLAB_SMALL + RSAN_SLAB_MAX / 64 };

typedef struct slab_class {
  rsan_spin lock;
  void *free;      /* released objects, linked through their first word */
  char *next, *end; /* the newest chunk's part not handed out yet */
  uint64_t chunks;  /* chunks taken (the census) */
} __attribute__((aligned(64))) slab_class;
static slab_class slab[SLAB_NCLS];

static inline unsigned slab_cls(size_t n) {
  return n <= 48 ? (unsigned)((n + 15) / 16) - 1 : SLAB_SMALL - 1 + (unsigned)((n + 63) / 64);
}
static inline size_t slab_size(unsigned c) {
  return c < SLAB_SMALL ? 16 * (size_t)(c + 1) : 64 * (size_t)(c - SLAB_SMALL + 1);
}

void *rsan_slab_alloc(size_t n) {
  if (RSAN_UNLIKELY(n > RSAN_SLAB_MAX)) return rsan_alloc_line(n);
  unsigned c = slab_cls(n ? n : 1);
  size_t sz = slab_size(c);
  slab_class *k = &slab[c];
  rsan_spin_lock(&k->lock);
  void *p = k->free;
  if (p) {
    k->free = *(void **)p;
  } else {
    if (RSAN_UNLIKELY(k->next + sz > k->end)) {
      k->next = __libc_memalign(64, SLAB_CHUNK);
      if (!k->next) rsan_oom();
      k->end = k->next + SLAB_CHUNK / sz * sz;
      k->chunks++;
    }
    p = k->next;
    k->next += sz;
  }
  rsan_spin_unlock(&k->lock);
  memset(p, 0, sz);
  return p;
}

void rsan_slab_free(void *p, size_t n) {
  if (!p) return;
  if (RSAN_UNLIKELY(n > RSAN_SLAB_MAX)) {
    rsan_free(p);
    return;
  }
  slab_class *k = &slab[slab_cls(n ? n : 1)];
  rsan_spin_lock(&k->lock);
  *(void **)p = k->free;
  k->free = p;
  rsan_spin_unlock(&k->lock);
}

uint64_t rsan_slab_bytes(void) {
  uint64_t b = 0;
  for (unsigned c = 0; c < SLAB_NCLS; c++)
    b += __atomic_load_n(&slab[c].chunks, __ATOMIC_RELAXED) * SLAB_CHUNK;
  return b;
}

/* tests (testsuite/runtime/test_alloc_classes.py) */
RSAN_EXPORT void *__rsan_test_slab_alloc(size_t n) { return rsan_slab_alloc(n); }
RSAN_EXPORT void __rsan_test_slab_free(void *p, size_t n) { rsan_slab_free(p, n); }
RSAN_EXPORT uint64_t __rsan_test_slab_bytes(void) { return rsan_slab_bytes(); }
/* the lock of n's class held for ms milliseconds (a raw nanosleep: no interceptor), as an
 * allocation outside any location lock holds it (a thread's clock growing) */
RSAN_EXPORT void __rsan_test_slab_hold(size_t n, unsigned ms) {
  slab_class *k = &slab[slab_cls(n ? n : 1)];
  rsan_spin_lock(&k->lock);
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (syscall(SYS_nanosleep, &ts, &ts) != 0) {
  }
  rsan_spin_unlock(&k->lock);
}

/* fork: every class's lock, after every other runtime lock (they are leaves) */
void rsan_slab_fork_lock(void) {
  for (unsigned c = 0; c < SLAB_NCLS; c++) rsan_spin_lock(&slab[c].lock);
}
void rsan_slab_fork_unlock(void) {
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
