/* What the interceptor files (intercept_*.c) share.
 *
 * The interceptors interpose pthread / C11 threads / sync primitives / free in the
 * instrumented executable (the runtime archive is linked whole and exported with
 * -rdynamic, architecture.md "Linking and interception"), tell the engine about them
 * through rsan_sync.h only, then call the real libc function.
 *
 * Two rules keep them safe before main, from any thread and from inside the runtime:
 *  - the real functions are resolved lazily with dlsym/dlvsym(RTLD_NEXT), thread-safely
 *    (a racing second resolution stores the same pointer);
 *  - a thread-local guard marks "inside the runtime": while it is set, every interceptor
 *    passes straight through to the real function without modelling anything, so the
 *    engine may use pthread functions or free() without recursing into itself.
 */
#ifndef RSAN_INTERCEPT_INTERNAL_H
#define RSAN_INTERCEPT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "rsan_signal.h"
#include "rsan_sync.h"

/* glibc exports these; they never go through the interposed symbols. */
void __libc_free(void *p);
void *__libc_malloc(size_t n);
void *__libc_realloc(void *p, size_t n);

/* ---- "inside the runtime" guard (intercept_common.c) ---- */

extern __thread int rsan_icpt_depth __attribute__((tls_model("initial-exec")));

static inline int rsan_icpt_inside(void) { return rsan_icpt_depth != 0; }
/* The guard also counts as "inside the runtime" for signal deferral (rsan_signal.h). */
static inline void rsan_icpt_enter(void) {
  rsan_rt_guard_enter();
  rsan_icpt_depth++;
}
static inline void rsan_icpt_leave(void) {
  rsan_icpt_depth--;
  rsan_rt_guard_leave();
}

/* glibc's allocator is not async-signal-safe: a signal handler whose atomics make the runtime
 * allocate must not run while its thread is inside it (signals are deferred meanwhile). */
static inline void *rsan_icpt_malloc(size_t n) {
  rsan_rt_enter();
  void *p = __libc_malloc(n);
  rsan_rt_leave();
  return p;
}
static inline void rsan_icpt_free(void *p) {
  rsan_rt_enter();
  __libc_free(p);
  rsan_rt_leave();
}

/* ---- real functions ---- */

/* Resolves `name` (at `version` when non-NULL) in the objects after the executable and
 * caches it in *slot. Aborts with one line on stderr when the symbol does not exist. */
void *rsan_icpt_resolve(void *_Atomic *slot, const char *name, const char *version);

/* Declares `static name##_fn rsan_real_##name(void)` returning the real function. */
#define RSAN_REAL_DECL(ret, name, version, ...) \
  typedef ret (*rsan_##name##_fn)(__VA_ARGS__); \
  static void *_Atomic rsan_real_slot_##name; \
  static inline rsan_##name##_fn rsan_real_##name(void) { \
    void *p = atomic_load_explicit(&rsan_real_slot_##name, memory_order_acquire); \
    if (__builtin_expect(p == NULL, 0)) p = rsan_icpt_resolve(&rsan_real_slot_##name, #name, version); \
    return (rsan_##name##_fn)p; \
  }

#define REAL(name) (rsan_real_##name())

/* ---- modelling helpers (intercept_common.c) ---- */

/* acquire RMW on addr: taking a lock (lock, successful trylock / timedlock, rwlock
 * acquire, the mutex again after a cond wait), which really is an RMW on the lock word. */
void rsan_icpt_acquire(const void *addr);
/* acquire LOAD on addr: the caller only reads the primitive (a once caller, the cond's own
 * edge at wait return, barrier exit). Same happens-before as the acquire RMW, but the caller
 * writes nothing there, so its SC knowledge does not flow to later callers: modelling it as
 * a write would create SC-order edges the program does not have (false alarms, see
 * once.c "callers_only"). Done with the ABI's __rsan_load_4(addr, acquire); checks are
 * off on the address once a release was modelled there, and nothing is ever reported
 * before (no write modelled, nothing to be stale). */
void rsan_icpt_acquire_load(const void *addr);
/* release store on addr (unlock). */
void rsan_icpt_release(const void *addr);
/* acquire load then release store on addr, atomically with respect to the other acq_rel
 * calls on the same address: a release that joins instead of overwriting (read-unlock,
 * barrier entry, cond signal), so that no earlier releaser's view is lost. */
void rsan_icpt_acq_rel(const void *addr);

/* ---- thread map (intercept_thread.c) ---- */

/* Calls rsan_thread_finish for the calling thread if it was created through an
 * interceptor and has not finished yet (pthread_exit, thrd_exit). */
void rsan_icpt_thread_exit_current(void);

/* Runs the calling thread's C++ thread_local destructors and its pthread key / tss_t
 * destructors now, as glibc would after the start routine returns (intercept_tsd.c): the
 * trampolines call it before the thread finishes. */
void rsan_icpt_exit_destructors(void);

/* The map's lock, for fork (intercept_common.c holds every interceptor lock across fork so
 * that the child starts with consistent, unlocked state). */
void rsan_icpt_map_lock(void);
void rsan_icpt_map_unlock(void);

#endif /* RSAN_INTERCEPT_INTERNAL_H */
