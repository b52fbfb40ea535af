/* Synchronisation inside an uninstrumented library (grace_lib.c, linked as a shared library
 * with -L/-l): the reader leaves its section with a release store of `active`, the library's
 * grace_synchronize waits for it, then the writer frees what the reader used. The reader's
 * read comes after everything main can see of it (`registered`), so in every schedule only
 * the library orders it before the free. The edge from
 * the reader's section to the free exists only inside the library, so a sanitizer sees a race
 * unless told: with -DANNOTATE the program says it with TSan's dynamic annotations
 * (AnnotateHappensBefore / AnnotateHappensAfter, weak references: no-ops without a
 * sanitizer), as programs annotated for ThreadSanitizer do.
 * The idiom of ck_epoch and liburcu (benchmarks/realworld/drivers/ck_epoch.c, urcu_memb.c). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

void grace_register(atomic_int *active);
void grace_synchronize(void);
void AnnotateHappensBefore(const char *file, int line, const volatile void *addr) __attribute__((weak));
void AnnotateHappensAfter(const char *file, int line, const volatile void *addr) __attribute__((weak));

static int grace; /* the annotations' address: "a grace period" */
static long *_Atomic shared;
static atomic_int active, registered;

static void *reader(void *arg) {
  grace_register(&active);
  atomic_store(&active, 1);
  atomic_store(&registered, 1);
  long *p = atomic_load(&shared);
  long v = *p; /* read inside the section */
#ifdef ANNOTATE
  if (AnnotateHappensBefore) AnnotateHappensBefore(__FILE__, __LINE__, &grace);
#endif
  atomic_store_explicit(&active, 0, memory_order_release);
  return (void *)v;
}

int main(void) {
  long *old = malloc(sizeof *old);
  *old = 42;
  atomic_store(&shared, old);
  pthread_t t;
  pthread_create(&t, 0, reader, 0);
  while (!atomic_load(&registered)) {
  }
  grace_synchronize(); /* in the library: waits for the reader's section to end */
#ifdef ANNOTATE
  if (AnnotateHappensAfter) AnnotateHappensAfter(__FILE__, __LINE__, &grace);
#endif
  *old = -1; /* reclaim: no reader can still use it */
  free(old);
  void *v;
  pthread_join(t, &v);
  printf("ok %ld\n", (long)v);
  return (long)v == 42 ? 0 : 1;
}
