#include <stdatomic.h>
extern atomic_int x, y;
#define PUBLISH(v, val) atomic_store_explicit(&(v), (val), memory_order_release)
#define PEEK(v) atomic_load_explicit(&(v), memory_order_acquire)
static inline int peek_inline(atomic_int *p) {
  return atomic_load_explicit(p, memory_order_acquire);
}
void *t1(void *);
void *t2(void *);
