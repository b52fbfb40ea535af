/* Page helpers shared by the allocator's files (inlined into every caller). */
#include <stdatomic.h>
#include <stdint.h>

#define PAGE_HEAP_SET 1u
#define PAGE_FREEING 2u

struct heap;
typedef struct page {
  _Atomic(uintptr_t) flags;
  _Atomic(struct heap *) heap;
} page_t;

static inline struct heap *page_heap(page_t *pg) {
  return atomic_load_explicit(&pg->heap, memory_order_relaxed);
}
