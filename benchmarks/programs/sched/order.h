/* The detection benchmarks' accesses: release stores and acquire loads. Without -DROBUST
 * they are not robust; with -DROBUST, fence() is a seq_cst fence. Where a program places one
 * between every two accesses of a thread to different locations except a load followed by
 * a store (peterson.c, lamport_fast.c), every RC20 execution is SC, for any thread count:
 * SC fences are RMWs on one location F, so the F order is in hb, and two accesses separated
 * by fences in their threads are ordered by hb through F one way or the other; the one pair
 * left unfenced, an acquire load then a release store, is ordered after the write the load
 * read from by hb already (sw), and a relaxed RMW (the in_cs counter) is fenced on both
 * sides because reading from another RMW does not synchronise. A fence only after each store
 * (enough for 2 threads) is not: with 3 threads the waiting loop's reads of two locations
 * form IRIW- and W+RWC-shaped cycles (the witness of `pyrsan run --explore -DNTHREADS=3`).
 * With 2 threads the fences marked fence_n() are left out: --explore proves those robust. */
#include <stdatomic.h>
#define store(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define load(p) atomic_load_explicit((p), memory_order_acquire)
#ifdef ROBUST
#define fence() atomic_thread_fence(memory_order_seq_cst)
#else
#define fence() ((void)0)
#endif
/* the fences that 3 or more threads need beyond 2 threads' (2 threads: proved robust without
 * them by --explore, which they would slow down; see above) */
#if defined(NTHREADS) && NTHREADS > 2
#define fence_n() fence()
#else
#define fence_n() ((void)0)
#endif
