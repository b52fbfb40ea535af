/* free / cfree / realloc: memory reuse retires the locations of the block
 * (architecture.md "Decisions and pitfalls", memory reuse), so that an atomic that later
 * lives at the same address starts a new location with its own history.
 *
 * The real functions are glibc's exported __libc_free / __libc_realloc / __libc_malloc
 * (dlsym itself allocates, so it cannot be used here). malloc is not interposed.
 * A block is always retired BEFORE its memory goes back to the allocator: once freed it may
 * be handed to another thread at once, and retiring then would erase that thread's new
 * locations. Frees made inside the runtime (guard set) are the runtime's own memory: they
 * are passed straight through.
 */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "intercept_internal.h"

static void retire_block(void *p) {
  size_t n = malloc_usable_size(p);
  rsan_icpt_enter();
  rsan_memory_retire(p, n);
  rsan_icpt_leave();
}

void free(void *p) {
  if (p == NULL) return;
  if (!rsan_icpt_inside()) retire_block(p);
  __libc_free(p);
}

/* Only a compatibility symbol in glibc 2.36 (old binaries and libraries may still call it). */
void cfree(void *p);
void cfree(void *p) { free(p); }

void *realloc(void *p, size_t n) {
  if (p == NULL || rsan_icpt_inside()) return __libc_realloc(p, n);
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
    void *q = __libc_realloc(p, n);
    if (q != NULL && q != p) {
      rsan_icpt_enter();
      rsan_memory_retire(p, n);
      rsan_icpt_leave();
    }
    return q;
  }
  /* Growing: move by hand so the old block is retired before the allocator sees it again. */
  void *q = __libc_malloc(n);
  if (q == NULL) return NULL; /* p stays valid, as realloc leaves it */
  memcpy(q, p, old);
  retire_block(p);
  __libc_free(p);
  return q;
}
