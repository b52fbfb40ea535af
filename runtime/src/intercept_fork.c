/* fork: one pthread_atfork handler takes every runtime lock in the fixed order of
 * rsan_fork.h before the fork and releases them after it, in the parent and in the child, so
 * that a child forked while another thread is inside the runtime never waits for a lock
 * that thread held (it does not exist in the child). The child then starts its own report
 * state (rsan_report_fork_unlock(1)): its count, so `exit(0)` in a child exits 0 unless the
 * child itself reported; no parent report is printed again; json_path / log_path files are
 * reopened for the child's pid (%p).
 *
 * Registered from a constructor, first thing: handlers registered later (the program's)
 * run their prepare before ours and their child handler after ours, so they may use
 * instrumented atomics. */
#include <pthread.h>

#include "intercept_internal.h"
#include "rsan_fork.h"
#include "rsan_internal.h"

static void fork_prepare(void) {
  rsan_icpt_enter();
  rsan_init_fork_lock();
  rsan_icpt_fork_lock();
  rsan_loc_fork_lock();
  rsan_report_fork_lock();
  rsan_thread_fork_lock();
  rsan_sites_fork_lock();
  rsan_heap_fork_lock();
  rsan_shadow_fork_lock();
  rsan_hist_fork_lock();
}

static void fork_release(int child) {
  rsan_hist_fork_unlock();
  rsan_shadow_fork_unlock();
  rsan_heap_fork_unlock();
  rsan_sites_fork_unlock();
  rsan_thread_fork_unlock();
  rsan_report_fork_unlock(child);
  rsan_loc_fork_unlock();
  rsan_icpt_fork_unlock();
  rsan_init_fork_unlock();
  rsan_icpt_leave();
}

/* In the child only the forking thread goes on: the others are gone, and whatever they did
 * before the fork is in the child's copy of memory, which nothing of theirs can touch again.
 * So the child joins each of them (as pthread_join would after their end): their accesses
 * happen before everything the child does. Without it, a child writing what another thread
 * of the parent had written before the fork got a race report against a thread that does not
 * exist in it (session 16, corpus qa/fork_while_threads_run.c); ThreadSanitizer reports none.
 * A thread already joined (its clocks released) is skipped. */
static void join_the_others(void) {
  rsan_thread *me = rsan_thread_peek_current();
  if (!me) return;
  int n = rsan_thread_next_tid();
  rsan_icpt_enter();
  for (int tid = 0; tid < n; tid++) {
    rsan_thread *t = rsan_thread_by_tid(tid);
    if (t && t != me && !t->finished_slot) rsan_thread_join(me, t);
  }
  rsan_icpt_leave();
}

static void fork_parent(void) { fork_release(0); }
static void fork_child(void) {
  fork_release(1);
  join_the_others();
}

__attribute__((constructor(101))) static void rsan_fork_register(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}
