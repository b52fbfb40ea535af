/* free / cfree / realloc: memory reuse retires the locations of the block
 * (architecture.md "Decisions and pitfalls", memory reuse), so that an atomic that later
 * lives at the same address starts a new location with its own history, and empties its
 * race-detector shadow (reuse is not a race).
 * malloc / calloc / realloc / the aligned allocators: the block is registered with where it
 * was allocated (rsan_heap_alloc), so that race reports can name it.
 *
 * The real functions are glibc's exported __libc_free / __libc_realloc / __libc_malloc /
 * __libc_calloc / __libc_memalign (dlsym itself allocates, so it cannot be used here).
 * A block is always retired BEFORE its memory goes back to the allocator: once freed it may
 * be handed to another thread at once, and retiring then would erase that thread's new
 * locations. Frees made inside the runtime (guard set) are the runtime's own memory: they
 * are passed straight through.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "intercept_internal.h"
#include "rsan_explain.h"

void *__libc_calloc(size_t n, size_t k);
void *__libc_memalign(size_t align, size_t n);

/* The real allocator, with signals deferred while inside it (a handler's atomics may make the
 * runtime allocate: rsan_signal.h); pending ones run once it returned. */
#define RAW(expr) \
  ({ \
    rsan_rt_enter(); \
    __typeof__(expr) raw_result_ = (expr); \
    rsan_rt_guard_leave(); \
    raw_result_; \
  })
static void raw_free(void *p) {
  rsan_rt_enter();
  __libc_free(p);
  rsan_rt_guard_leave();
}

static void retire_block(void *p) {
  size_t n = malloc_usable_size(p);
  rsan_icpt_enter();
  RSAN_EXPLAIN(rsan_explain_free(p, n)); /* before its race check's report */
  rsan_race_free(p, n);                  /* named while the block is still registered */
  rsan_heap_free(p);
  rsan_memory_retire(p, n);
  rsan_icpt_leave();
}

/* A block the program asked for: noted unless the runtime allocates for itself. */
static void *note_block(void *p, size_t n) {
  if (p && !rsan_icpt_inside()) {
    rsan_icpt_enter();
    rsan_heap_alloc(p, n);
    rsan_icpt_leave();
  }
  return p;
}

void *malloc(size_t n) { return note_block(RAW(__libc_malloc(n)), n); }

void *calloc(size_t n, size_t k) {
  void *p = RAW(__libc_calloc(n, k));
  return p ? note_block(p, n * k) : NULL; /* __libc_calloc checked the product */
}

void *memalign(size_t align, size_t n) { return note_block(RAW(__libc_memalign(align, n)), n); }

void *aligned_alloc(size_t align, size_t n) {
  if (align == 0 || (align & (align - 1))) { /* as glibc: a power of two or EINVAL */
    errno = EINVAL;
    return NULL;
  }
  return note_block(RAW(__libc_memalign(align, n)), n);
}

int posix_memalign(void **out, size_t align, size_t n) {
  if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
  void *p = RAW(__libc_memalign(align, n));
  if (!p) return ENOMEM;
  *out = note_block(p, n);
  return 0;
}

void free(void *p) {
  if (p == NULL) return;
  if (!rsan_icpt_inside()) retire_block(p);
  raw_free(p);
}

/* Only a compatibility symbol in glibc 2.36 (old binaries and libraries may still call it). */
void cfree(void *p);
void cfree(void *p) { free(p); }

void *realloc(void *p, size_t n) {
  if (rsan_icpt_inside()) return RAW(__libc_realloc(p, n));
  if (p == NULL) return note_block(RAW(__libc_realloc(NULL, n)), n);
  if (n == 0) { /* glibc: realloc(p, 0) frees p and returns NULL */
    free(p);
    return NULL;
  }
  size_t old = malloc_usable_size(p);
  if (n <= old) {
    /* Shrinking keeps the block in place and may give its tail back to the allocator: the
     * bytes past n stop being part of the object, retire them first. An mmapped block may
     * instead be mremapped elsewhere: then retire the rest after the fact (its old pages are
     * unmapped, not handed to another malloc caller, unless a new mmap lands there at once). */
    rsan_icpt_enter();
    if (n < old) rsan_memory_retire((char *)p + n, old - n);
    rsan_icpt_leave();
    rsan_icpt_enter();
    rsan_heap_free(p);
    rsan_icpt_leave();
    void *q = RAW(__libc_realloc(p, n));
    if (q != NULL && q != p) {
      rsan_icpt_enter();
      rsan_memory_retire(p, n);
      rsan_icpt_leave();
    }
    return note_block(q ? q : p, q ? n : old);
  }
  /* Growing: move by hand so the old block is retired before the allocator sees it again. */
  void *q = RAW(__libc_malloc(n));
  if (q == NULL) return NULL; /* p stays valid, as realloc leaves it */
  memcpy(q, p, old);
  retire_block(p);
  raw_free(p);
  return note_block(q, n);
}
