/* The detection benchmarks' accesses: release stores and acquire loads. Without -DROBUST
 * they are not robust; with -DROBUST, fence() is a seq_cst fence. With 3 or more threads,
 * peterson.c and lamport_fast.c place one between every two accesses of a thread to
 * different locations (fence_n(); the relaxed in_cs counter is fenced on both sides), which
 * makes every RC20 execution SC: SC fences are RMWs on one location F, so the F order is in
 * hb, and two fenced accesses of different threads are ordered by hb through F one way or
 * the other; the remaining unfenced pairs are to one location, ordered by coherence.
 * Checked against the reference model (testsuite/reference/test_fence_rule.py: random
 * programs with the rule are robust; leaving out the fence between a load and a later store
 * is not enough). A fence only after each store, enough for 2 threads (--explore proves those
 * versions, where fence_n() is empty), is not enough for 3: the waiting loops' reads of two
 * locations form IRIW- and W+RWC-shaped cycles (the witness of `pyrsan run --explore
 * -DNTHREADS=3` before these fences). */
#include <stdatomic.h>
#define store(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define load(p) atomic_load_explicit((p), memory_order_acquire)
#ifdef ROBUST
#define fence() atomic_thread_fence(memory_order_seq_cst)
#else
#define fence() ((void)0)
#endif
/* the fences 3 or more threads need beyond those of 2 threads (see above) */
#if defined(NTHREADS) && NTHREADS > 2
#define fence_n() fence()
#else
#define fence_n() ((void)0)
#endif
