/* A statistics word that is only ever written (issue 19, consequence write-only): the owner
 * seen last. A thread that saw y == 1 stores to it after the store SC places first, while
 * nothing orders the two in C11: a write-type violation on last_owner. No code reads it, so
 * no read can tell the order of its writes: `write-only`. Variants that make it a `value`
 * report: READ_IT (main prints it), GLOBAL (external linkage: another unit could read it),
 * SC_STORE (a seq_cst store also orders other accesses), ESCAPE (its address is passed on). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#ifdef GLOBAL
atomic_long last_owner;
#else
static atomic_long last_owner;
#endif
#ifdef SC_STORE
#define OWNER_ORDER memory_order_seq_cst
#else
#define OWNER_ORDER memory_order_relaxed
#endif
atomic_int y;
void note(atomic_long *p);
static void *left(void *arg) {
  if (atomic_load_explicit(&y, memory_order_relaxed) == 1)
    atomic_store_explicit(&last_owner, 1, OWNER_ORDER);
  return arg;
}
static void *right(void *arg) {
  atomic_store_explicit(&last_owner, 2, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  return arg;
}
#ifdef ESCAPE
void note(atomic_long *p) { (void)p; }
#endif
int main(void) {
  pthread_t l, r;
  pthread_create(&r, NULL, right, NULL);
  pthread_create(&l, NULL, left, NULL);
  pthread_join(l, NULL);
  pthread_join(r, NULL);
#ifdef READ_IT
  printf("%ld\n", atomic_load_explicit(&last_owner, memory_order_relaxed));
#endif
#ifdef ESCAPE
  note(&last_owner);
#endif
  return 0;
}
