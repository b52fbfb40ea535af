/* Store buffering on 16-byte atomics (and, with -DGENERIC, on 24-byte ones through libatomic's
 * generic calls): relaxed, so not robust; with -DSEQ_CST, robust. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#ifdef GENERIC
typedef struct { long a, b, c; } val;
#else
typedef struct { long a, b; } val;
#endif
#ifdef SEQ_CST
#define MO memory_order_seq_cst
#else
#define MO memory_order_relaxed
#endif
static _Atomic val x, y;
static long r1, r2;

static void *t1(void *p) {
  val one = {1};
  atomic_store_explicit(&x, one, MO);
  r1 = atomic_load_explicit(&y, MO).a;
  return p;
}
static void *t2(void *p) {
  val one = {1};
  atomic_store_explicit(&y, one, MO);
  r2 = atomic_load_explicit(&x, MO).a;
  return p;
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
