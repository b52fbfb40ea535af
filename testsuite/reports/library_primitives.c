/* Store buffering through an atomic-operations library in a system header (docs/reports.md §2).
 * The header's functions prim_* are atomic primitives (passes/primitives.py): the program's SB
 * through them is the program's own (consequence "value"). With -DOBJECT the SB is inside the
 * header's flag-pair object (flags_sb touches two locations): the library's own ("library").
 * With -DCALLS t2 loads through two wrappers that are called, not inlined. */
#include <pthread.h>
#include <stdio.h>
#line 1 "/usr/include/pyrsan-test/prims.h"
static inline long prim_load_acquire(const long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void prim_store_release(long *p, long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline long prim_fetch_max(long *p, long v) { /* a CAS loop is a primitive too */
  long old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
  }
  return old;
}
__attribute__((noinline)) long prim_load_called(const long *p) { return prim_load_acquire(p); }
__attribute__((noinline)) long prim_load_called2(const long *p) { return prim_load_called(p); }
struct flags { long a, b; };
static inline long flags_sb(struct flags *f, int side) {
  if (side) {
    prim_store_release(&f->a, 1);
    return prim_load_acquire(&f->b);
  }
  prim_store_release(&f->b, 1);
  return prim_load_acquire(&f->a);
}
#line 29 "library_primitives.c"
static long x, y, r1, r2;
static struct flags fl;

static void *t1(void *arg) {
  (void)arg;
#ifdef OBJECT
  r1 = flags_sb(&fl, 1);
#else
  prim_fetch_max(&x, 1);
  r1 = prim_load_acquire(&y);
#endif
  return 0;
}

static void *t2(void *arg) {
  (void)arg;
#ifdef OBJECT
  r2 = flags_sb(&fl, 0);
#else
  prim_store_release(&y, 1);
#ifdef CALLS
  r2 = prim_load_called2(&x);
#else
  r2 = prim_load_acquire(&x);
#endif
#endif
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  printf("%ld %ld\n", r1, r2);
  return 0;
}
