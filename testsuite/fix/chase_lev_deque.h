// A Chase-Lev style work-stealing deque (fixed capacity) with release/acquire accesses and no
// fences (test program of pyrsan fix, see chase_lev.c): the owner pushes and takes at the
// bottom, thieves steal at the top. take() stores bottom and then reads top, steal() reads top
// and then bottom: the store-buffering shape that the published algorithm closes with two
// seq_cst fences (Le et al., PPoPP 2013).
#ifndef CHASE_LEV_DEQUE_H
#define CHASE_LEV_DEQUE_H
#include <stdatomic.h>
#include <time.h>

#define CAPACITY 16
#define EMPTY (-1)

typedef struct deque {
  atomic_long top, bottom;
  atomic_int items[CAPACITY];
} deque;

static void push(deque *d, int item) {
  long b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
  atomic_store_explicit(&d->items[b % CAPACITY], item, memory_order_relaxed);
  atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
}

static int take(deque *d) {
  long b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
  atomic_store_explicit(&d->bottom, b, memory_order_release);
  long t = atomic_load_explicit(&d->top, memory_order_acquire);
  if (t > b) {
    atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    return EMPTY;
  }
  int item = atomic_load_explicit(&d->items[b % CAPACITY], memory_order_relaxed);
  if (t == b) {
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_acq_rel,
                                                 memory_order_relaxed))
      item = EMPTY;
    atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
  }
  return item;
}

static int steal(deque *d, int pause) {
  long t = atomic_load_explicit(&d->top, memory_order_acquire);
  long b = atomic_load_explicit(&d->bottom, memory_order_acquire);
  if (t >= b)
    return EMPTY;
  int item = atomic_load_explicit(&d->items[t % CAPACITY], memory_order_relaxed);
  if (pause)
    nanosleep(&(struct timespec){0, 40 * 1000000L}, NULL);
  if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1, memory_order_acq_rel,
                                               memory_order_relaxed))
    return EMPTY;
  return item;
}

#endif
