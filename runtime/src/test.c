/* Test hooks (rsan_test.h): always compiled in, used only by the cffi unit tests. */
#include <string.h>

#include "rsan_internal.h"
#include "rsan_sched.h"
#include "rsan_test.h"

static char last_error[300];

RSAN_EXPORT void __rsan_test_reset(void) {
  rsan_ensure_init();
  rsan_test_mode = 1;
  rsan_sched_test_hook = NULL;
  rsan_sched_on = 0;
  rsan_loc_reset_all();
  rsan_undecided_checks = 0;
  rsan_inexact_queries = 0;
  rsan_thread_reset_all();
  rsan_report_reset();
  rsan_sites_reset();
  rsan_shadow_reset_all();
  rsan_heap_reset_all();
  rsan_flags_defaults();
}

RSAN_EXPORT rsan_thread *__rsan_test_new_thread(rsan_thread *parent) {
  return parent ? rsan_thread_create(parent) : rsan_thread_new_root();
}

RSAN_EXPORT void __rsan_test_set_current(rsan_thread *t) { rsan_thread_set_current(t); }

RSAN_EXPORT int __rsan_test_set_options(const char *opts) {
  rsan_ensure_init();
  rsan_flags_defaults();
  last_error[0] = 0;
  if (rsan_flags_parse(opts ? opts : "", last_error, sizeof last_error) != 0) {
    rsan_flags_defaults();
    return -1;
  }
  rsan_report_reset();
  return 0;
}

RSAN_EXPORT const char *__rsan_test_last_error(void) { return last_error; }

RSAN_EXPORT uint64_t __rsan_test_report_count(void) { return rsan_report_count(); }

RSAN_EXPORT uint64_t __rsan_test_location_id(const void *addr) { return rsan_loc_peek_id((uintptr_t)addr); }

RSAN_EXPORT uint64_t __rsan_test_location_count(void) { return rsan_loc_count(); }

RSAN_EXPORT uint64_t __rsan_test_thread_clock(const rsan_thread *t, int which, const void *addr) {
  /* F (addr NULL) keeps no facts: its entries are not observable */
  rsan_loc *l = addr ? rsan_loc_peek((uintptr_t)addr) : NULL;
  if (!l) return 0;
  uint64_t v = rsan_thread_clock_get(t, which, l);
  rsan_loc_release(l);
  return v;
}

/* checks the bounded fact window could not decide (docs/design/clocks.md) and thread slots
 * handed out */
RSAN_EXPORT uint64_t __rsan_test_undecided_count(void) {
  return __atomic_load_n(&rsan_undecided_checks, __ATOMIC_RELAXED);
}
RSAN_EXPORT uint64_t __rsan_test_inexact_count(void) {
  return __atomic_load_n(&rsan_inexact_queries, __ATOMIC_RELAXED);
}
RSAN_EXPORT uint32_t __rsan_test_slot_count(void) { return rsan_thread_slot_count(); }

RSAN_EXPORT void __rsan_test_skip_epochs(rsan_thread *t, uint64_t n) { rsan_thread_skip_epochs(t, n); }

RSAN_EXPORT void __rsan_test_set_sched_hook(void (*hook)(int kind, const void *addr, int w)) {
  rsan_sched_test_hook = hook;
  rsan_sched_on = hook != NULL;
}
