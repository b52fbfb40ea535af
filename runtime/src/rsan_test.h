/* Test-only API of the engine, for the cffi unit tests (testsuite/runtime/).
 *
 * Compiled into every build of the runtime (test.c is small and nothing calls it in
 * production). A test drives the real __rsan_* ABI as any thread in any interleaving
 * without real threads: create thread states, make one of them "current" for the calling OS
 * thread, call __rsan_load_4 & co., read the reports from the json_path file.
 * __rsan_test_reset also switches the runtime to test mode: no exit-status change at exit
 * and no _exit on halt_on_error, option errors are returned instead of exiting. */
#ifndef RSAN_TEST_H
#define RSAN_TEST_H

#include <stdint.h>

#include "rsan_sync.h"

/* Drop all state (locations, threads, reports, registered modules), options back to their
 * defaults, and enter test mode. No other thread may be inside the runtime. */
void __rsan_test_reset(void);
/* parent NULL: a fresh thread with empty clocks; else rsan_thread_create(parent). */
rsan_thread *__rsan_test_new_thread(rsan_thread *parent);
/* The calling OS thread acts as t from now on (until the next call or reset). */
void __rsan_test_set_current(rsan_thread *t);
/* Parses options (PYRSAN_OPTIONS syntax) on top of the defaults. 0, or -1 with a one-line
 * message in __rsan_test_last_error(). */
int __rsan_test_set_options(const char *opts);
const char *__rsan_test_last_error(void);
uint64_t __rsan_test_report_count(void);
/* The id of the live location at addr, 0 when there is none. */
uint64_t __rsan_test_location_id(const void *addr);
uint64_t __rsan_test_location_count(void);
/* A thread clock entry: which = 0 Tc, 1 Tr, 2 Ta, 3 Tsc, 4 TcU, 5 TrU, 6 TaU, 7 TscU. */
uint64_t __rsan_test_thread_clock(const rsan_thread *t, int which, const void *addr);
/* Checks the bounded window of facts could not decide (counted, not reported), and the
 * number of thread slots handed out since the reset (docs/design/clocks.md). */
uint64_t __rsan_test_undecided_count(void);
uint64_t __rsan_test_inexact_count(void); /* queries answered with bounds */
uint32_t __rsan_test_slot_count(void);
/* t's fact epoch jumps by n (no clock learns of facts it did not contain): epochs past
 * 2^32 without 2^32 operations (docs/design/clocks.md §13) */
void __rsan_test_skip_epochs(rsan_thread *t, uint64_t n);
/* 1 when t's next SC fence is clean (sched_fence.c, docs/scheduling.md "SC fences") */
int __rsan_test_fence_sc_clean(const rsan_thread *t);

/* Every scheduling point of the engine (rsan_sched.h: kind, address, may-write) calls hook
 * instead of a scheduler, in the calling OS thread, before the step it precedes; a test can
 * block there to interleave the steps of one ABI call (a fenced seq_cst access is three
 * steps) with other threads'. NULL turns it off (so does __rsan_test_reset). */
void __rsan_test_set_sched_hook(void (*hook)(int kind, const void *addr, int w));

#endif /* RSAN_TEST_H */
