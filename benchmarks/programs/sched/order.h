/* The detection benchmarks' accesses: release stores and acquire loads. Without -DROBUST
 * they are not robust; with -DROBUST, fence() is a seq_cst fence between a store and a later
 * load of another location (the repair the fix loop suggests), which makes them robust. */
#include <stdatomic.h>
#define store(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define load(p) atomic_load_explicit((p), memory_order_acquire)
#ifdef ROBUST
#define fence() atomic_thread_fence(memory_order_seq_cst)
#else
#define fence() ((void)0)
#endif
