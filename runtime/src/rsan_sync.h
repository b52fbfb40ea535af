/* What the clock engine offers the interceptors (intercept_*.c).
 *
 * The engine (clocks, location table, thread state, reports) implements these; the
 * interceptors (pthread / C11 threads / sync primitives / free) call them and never touch
 * engine internals. Every function here is safe to call before main and from any thread.
 */
#ifndef RSAN_SYNC_H
#define RSAN_SYNC_H

#include <stddef.h>
#include <stdint.h>

typedef struct rsan_thread rsan_thread;

/* The calling thread's state; registers the thread lazily (the first caller is "main",
 * thread id 0). Never returns NULL. */
rsan_thread *rsan_thread_current(void);
int rsan_thread_tid(const rsan_thread *t);

/* Thread lifecycle (architecture.md, "Decisions and pitfalls", thread create / join).
 * create: called by the parent before the real pthread_create/thrd_create; allocates the
 *   child's state with Tc := Ta := parent Tc, Tsc := parent Tsc (U likewise), Tr := bottom.
 * start: called first thing in the child thread; binds the state to the thread (TLS).
 * finish: called when the child's start routine returns or the thread exits; retires the
 *   locations in [stack_lo, stack_hi) (pass 0, 0 when unknown). The state stays alive
 *   until joined (or forever when detached: it is small).
 * join: called by the joiner after the real join returned successfully:
 *   joiner Tc ⊔= joinee Tc, Ta ⊔= joinee Tc, Tsc ⊔= joinee Tsc (U likewise). */
rsan_thread *rsan_thread_create(rsan_thread *parent);
void rsan_thread_start(rsan_thread *child);
void rsan_thread_finish(rsan_thread *t, const void *stack_lo, const void *stack_hi);
void rsan_thread_join(rsan_thread *joiner, rsan_thread *joinee);

/* Synchronisation primitives modelled in the robustness clocks, with checks off on
 * their addresses (architecture.md: lock / trylock success / rwlock acquire / cond-wait
 * return / barrier exit / once completion = acquire RMW on the primitive's address;
 * unlock / barrier entry / once initialisation = release store). */
void rsan_sync_acquire(rsan_thread *t, const void *addr);
void rsan_sync_release(rsan_thread *t, const void *addr);
/* Where the program only reads the primitive (pthread_once callers, a cond wait's return on
 * the cond's own address, barrier exit): an acquire load, not an RMW, since an RMW would pass
 * one reader's SC knowledge to the next and raise false alarms. Checks off, as above. */
void rsan_sync_acquire_load(rsan_thread *t, const void *addr);

/* free() and thread exit: every location in [p, p + n) is retired; the next access at
 * such an address starts a new location (new id, fresh clocks). No robustness check. */
void rsan_memory_retire(const void *p, size_t n);

/* Heap blocks, to name the object of a race report (heap.c): a block of n bytes at p was
 * allocated by the calling thread (call before returning it to the program), or is freed
 * (call before the memory goes back to the allocator). Safe before initialisation (ignored). */
void rsan_heap_alloc(const void *p, size_t n);
void rsan_heap_free(const void *p);

/* free() of the n bytes at p, before rsan_memory_retire: for race detection a write of the
 * whole block, checked against the accesses the shadow holds (an access that does not happen
 * before the free is a race: a use after free in another thread). Nothing is recorded. */
void rsan_race_free(const void *p, size_t n);

#endif /* RSAN_SYNC_H */
