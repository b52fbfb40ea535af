/* Signal deferral (as ThreadSanitizer does): a signal that arrives while its thread is
 * inside the runtime (holding a runtime lock, in an interceptor, in an atomic entry point)
 * is not run there — its handler could take a lock the interrupted code holds (a spin lock is
 * not reentrant) or see the thread's clocks half updated. The wrapper installed by the
 * sigaction / signal interceptors (intercept_signal.c) records it as pending; the thread
 * runs it at the next boundary of an entry point or interceptor (RSAN_RT_GUARD,
 * rsan_icpt_enter / leave) where it is no longer inside the runtime, with the handler's mask
 * and errno kept, exactly once per arrival (one pending slot per signal number, as the
 * kernel itself keeps standard signals).
 *
 * Synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS) are never deferred:
 * returning would re-run the faulting instruction. */
#ifndef RSAN_SIGNAL_H
#define RSAN_SIGNAL_H

extern __thread int rsan_rt_depth __attribute__((tls_model("initial-exec")));
extern __thread int rsan_sig_npending __attribute__((tls_model("initial-exec")));

/* Signals for the process (not one thread) deferred and not run yet: any thread runs them
 * when it leaves the runtime (signal_defer.c rsan_sig_defer_process). */
extern int rsan_sig_proc_npending __attribute__((visibility("hidden"))); /* read by every entry point */
static inline int rsan_sig_any_pending(void) {
  return (rsan_sig_npending | __atomic_load_n(&rsan_sig_proc_npending, __ATOMIC_RELAXED)) != 0;
}

/* Runs the calling thread's pending handlers, and the process's (signal_defer.c). */
void rsan_sig_deliver_pending(void);
/* The calling thread ends: frees its pending-signal block. */
void rsan_sig_thread_exit(void);
/* Whether a deferred handler may still wake a parked thread (signal_defer.c; waits up to ns
 * for a signal in flight while a handler is installed). */
int rsan_sig_may_wake(uint64_t ns);

/* Inside the runtime (a lock held, the scheduler's wait for a turn): signals are deferred.
 * Leaving runs nothing: the code after an inner unlock may still depend on the state it
 * works on (the scheduler hands the baton over after unlocking its lock). */
static inline void rsan_rt_enter(void) {
  rsan_rt_depth++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
static inline void rsan_rt_leave(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  rsan_rt_depth--;
}

/* The boundaries of an entry point or interceptor, the safe points where pending handlers
 * run: on the way in (before the operation starts) and on the way out (after it ended). */
static inline void rsan_rt_guard_enter(void) {
  if (__builtin_expect(rsan_sig_any_pending(), 0) && rsan_rt_depth == 0) rsan_sig_deliver_pending();
  rsan_rt_enter();
}
static inline void rsan_rt_guard_leave(void) {
  rsan_rt_leave();
  if (__builtin_expect(rsan_sig_any_pending(), 0) && rsan_rt_depth == 0) rsan_sig_deliver_pending();
}

/* One line at the top of an entry point: inside the runtime until it returns. */
static inline void rsan_rt_guard_end(int *unused) {
  (void)unused;
  rsan_rt_guard_leave();
}
#define RSAN_RT_GUARD \
  int rsan_rt_guard_ __attribute__((cleanup(rsan_rt_guard_end), unused)) = (rsan_rt_guard_enter(), 0)

#endif /* RSAN_SIGNAL_H */
