/* A reclaiming thread adopts an abandoned page: it sets the page's heap and then the flag
 * "heap is set" (release). A freeing thread marks the page with a compare-exchange that is
 * release on success and relaxed on failure, then reads the page's heap: with the relaxed
 * read it may still see NULL (the block would leak). FREE_ACQUIRE makes the CAS acq_rel /
 * acquire, the repair. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "page_internal.h"

#ifdef FREE_ACQUIRE
#define FREE_SUCC memory_order_acq_rel
#define FREE_FAIL memory_order_acquire
#else
#define FREE_SUCC memory_order_release
#define FREE_FAIL memory_order_relaxed
#endif

static page_t *page;
static struct heap *the_heap = (struct heap *)0x1000;
static int leaked;

static void *reclaim(void *arg) {
  (void)arg;
  atomic_store_explicit(&page->heap, the_heap, memory_order_relaxed);
  atomic_store_explicit(&page->flags, PAGE_HEAP_SET, memory_order_release);
  return NULL;
}

static void free_block(page_t *pg) {
  uintptr_t expected = PAGE_HEAP_SET;
  if (!atomic_compare_exchange_strong_explicit(&pg->flags, &expected, PAGE_HEAP_SET | PAGE_FREEING,
                                               FREE_SUCC, FREE_FAIL))
    return; /* not adopted yet: the reclaimer frees it */
  struct heap *h = page_heap(pg);
  if (!h) leaked = 1;
}

static void *release_block(void *arg) {
  (void)arg;
  free_block(page);
  return NULL;
}

int main(void) {
  page = calloc(1, sizeof *page);
  pthread_t a, b;
  pthread_create(&a, NULL, reclaim, NULL);
  pthread_create(&b, NULL, release_block, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("leaked %d\n", leaked);
  free(page);
  return 0;
}
