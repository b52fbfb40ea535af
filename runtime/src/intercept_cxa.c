/* C++ guarded initialisation (function-local statics, Itanium C++ ABI §3.3.3): the
 * __cxa_guard_* functions of libstdc++ / libc++abi run uninstrumented, so without this file
 * the runtime never sees the release that ends an initialisation, and every later use of the
 * static by another thread is reported as a race with its constructor.
 *
 * The compiler inlines the fast path: an acquire load of the guard's first byte (instrumented
 * like any atomic load, __rsan_load_1), and calls __cxa_guard_acquire only when it reads 0.
 * The model therefore lives on the guard's own address, so that this inlined load and the
 * calls below agree on one location:
 *  - release (the initialisation is complete) = release store on the guard, modelled before the
 *    real release stores the byte: a load that reads the real 1 then finds the modelled write
 *    with the initialiser's clock as its sync clock (race clocks S_x, robustness W / Wsc);
 *  - abort (the constructor threw) = release store as well: the next thread to initialise
 *    acquires the guard after it (libstdc++ really synchronises the two through its lock);
 *  - acquire, after the real call returned (0: another thread initialised; 1: this thread
 *    now initialises, after any aborted attempt) = acquire load: the caller only reads the
 *    guard, and an RMW would pass one caller's SC knowledge to the next (intercept_internal.h).
 * Checks are off on the guard once modelled (rsan_sync.h), so no robustness report names it.
 *
 * Under a controlled scheduler an initialisation is a once routine (rsan_sched_once_*): a
 * second thread must not enter the real __cxa_guard_acquire, which blocks in a futex while
 * the initialiser, descheduled, holds the baton's queue.
 */
#include <stdint.h>

#include "intercept_internal.h"
#include "rsan_sched.h"

/* The Itanium ABI's guard object is 64 bits wide on every target pyrsan supports. */
typedef int64_t rsan_cxa_guard;

RSAN_REAL_DECL(int, __cxa_guard_acquire, NULL, rsan_cxa_guard *)
RSAN_REAL_DECL(void, __cxa_guard_release, NULL, rsan_cxa_guard *)
RSAN_REAL_DECL(void, __cxa_guard_abort, NULL, rsan_cxa_guard *)

static int controlled(void) {
  return !rsan_icpt_inside() && rsan_sched_active() && rsan_sched_manages_current();
}

int __cxa_guard_acquire(rsan_cxa_guard *g) {
  int sched = controlled();
  if (sched) rsan_sched_once_enter(g); /* waits while another thread initialises */
  int must_initialise = REAL(__cxa_guard_acquire)(g);
  if (sched && !must_initialise) rsan_sched_once_done(g);
  if (!rsan_icpt_inside()) rsan_icpt_acquire_load(g);
  return must_initialise;
}

void __cxa_guard_release(rsan_cxa_guard *g) {
  if (!rsan_icpt_inside()) rsan_icpt_release(g);
  REAL(__cxa_guard_release)(g);
  if (controlled()) rsan_sched_once_done(g);
}

void __cxa_guard_abort(rsan_cxa_guard *g) {
  if (!rsan_icpt_inside()) rsan_icpt_release(g);
  REAL(__cxa_guard_abort)(g);
  if (controlled()) rsan_sched_once_done(g);
}
