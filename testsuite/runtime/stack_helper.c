/* Compiled into the engine-only test library (not part of the runtime): stands in for
 * instrumented code so the shadow call stack can be tested with real frames. */
#include <stdint.h>

#include "rsan_interface.h"

/* disable_tail_calls: a tail call would put the hook's frame at the caller's level */
__attribute__((noinline, disable_tail_calls)) uint64_t helper_inner_load(uint32_t *p, uint64_t load_site) {
  return __rsan_load_4(p, RSAN_RELAXED, load_site);
}

/* func_entry(call_site); inner load; func_exit() */
__attribute__((noinline, disable_tail_calls)) uint64_t helper_outer_load(uint32_t *p, uint64_t call_site,
                                                                         uint64_t load_site) {
  __rsan_func_entry(call_site);
  uint64_t v = helper_inner_load(p, load_site);
  __rsan_func_exit();
  return v;
}

/* n nested calls that never call func_exit (as if unwound by longjmp), then a load. */
__attribute__((noinline, disable_tail_calls)) uint64_t helper_deep_load(int n, uint32_t *p,
                                                                        uint64_t call_site,
                                                                        uint64_t load_site) {
  if (n == 0) return helper_inner_load(p, load_site);
  __rsan_func_entry(call_site);
  volatile uint64_t v = helper_deep_load(n - 1, p, call_site, load_site);
  return v; /* no func_exit: the next entry/exit resynchronises by frame address */
}

/* Race detection (issue 4): a plain write, a thread creation and a heap allocation made
 * from inside a call, as instrumented code and the interceptors make them. */
typedef struct rsan_thread rsan_thread;
rsan_thread *rsan_thread_create(rsan_thread *parent);
void rsan_heap_alloc(const void *p, unsigned long n);

__attribute__((noinline, disable_tail_calls)) static void helper_inner_write(void *p, uint64_t site) {
  __rsan_write_4(p, site);
}
__attribute__((noinline, disable_tail_calls)) void helper_outer_write(void *p, uint64_t call_site,
                                                                      uint64_t site) {
  __rsan_func_entry(call_site);
  helper_inner_write(p, site);
  __rsan_func_exit();
}

__attribute__((noinline, disable_tail_calls)) static rsan_thread *helper_inner_create(rsan_thread *parent) {
  return rsan_thread_create(parent);
}
__attribute__((noinline, disable_tail_calls)) rsan_thread *helper_create(rsan_thread *parent,
                                                                         uint64_t call_site) {
  __rsan_func_entry(call_site);
  rsan_thread *t = helper_inner_create(parent);
  __rsan_func_exit();
  return t;
}

__attribute__((noinline, disable_tail_calls)) static void helper_inner_alloc(void *p, unsigned long n) {
  rsan_heap_alloc(p, n);
}
__attribute__((noinline, disable_tail_calls)) void helper_alloc(void *p, unsigned long n,
                                                                uint64_t call_site) {
  __rsan_func_entry(call_site);
  helper_inner_alloc(p, n);
  __rsan_func_exit();
}

/* History entries (docs/design/clocks.md §18): n nested calls, calls[0] outermost, each with
 * its own call site, then a store of v at site (the innermost frame). */
__attribute__((noinline, disable_tail_calls)) void
helper_chain_store(int n, const uint64_t *calls, uint32_t *p, uint64_t v, uint64_t site) {
  if (n == 0) {
    __rsan_store_4(p, v, RSAN_RELAXED, site);
    return;
  }
  __rsan_func_entry(calls[0]);
  helper_chain_store(n - 1, calls + 1, p, v, site);
  __rsan_func_exit();
}

/* k nested calls that enter and never leave (unwound, as by longjmp): k stale frames on top of
 * the shadow stack, below the caller's frame. */
__attribute__((noinline, disable_tail_calls)) static void helper_leave_stale(int k, uint64_t call_site) {
  if (k == 0) return;
  __rsan_func_entry(call_site);
  helper_leave_stale(k - 1, call_site);
}
/* As helper_chain_store, but the innermost frame first leaves k stale frames on the shadow stack
 * (stale_site each) and then stores with no entry of its own in between: the store's call stack
 * must skip them (rsan_thread_stack, rsan_engine.h rsan_hist_record_at). */
__attribute__((noinline, disable_tail_calls)) void helper_chain_stale_store(int n, const uint64_t *calls, int k,
                                                                           uint64_t stale_site, uint32_t *p,
                                                                           uint64_t v, uint64_t site) {
  if (n == 0) {
    helper_leave_stale(k, stale_site);
    __rsan_store_4(p, v, RSAN_RELAXED, site);
    return;
  }
  __rsan_func_entry(calls[0]);
  helper_chain_stale_store(n - 1, calls + 1, k, stale_site, p, v, site);
  __rsan_func_exit();
}
