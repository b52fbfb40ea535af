/* sigaction / signal interceptors (rsan_signal.h, signal deferral). The kernel gets the
 * runtime's wrapper for every handler the program installs; the wrapper runs the program's
 * handler at once when the thread is outside the runtime, and defers it otherwise. A query
 * (old action) returns the program's own handler, never the wrapper. SIG_DFL / SIG_IGN and
 * signals no handler can catch go straight to the real sigaction. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "intercept_internal.h"
#include "rsan_sigtable.h"

RSAN_REAL_DECL(int, sigaction, NULL, int, const struct sigaction *, struct sigaction *)

static int synchronous(int sig) {
  return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP || sig == SIGSYS;
}

/* A signal sent to the process, not to one thread (kill, setitimer, timer_create, a child's
 * SIGCHLD): the kernel may give it to any thread that does not block it. */
static int process_directed(int sig, const siginfo_t *info) {
  if (!info) return 0;
  return info->si_code == SI_USER || info->si_code == SI_KERNEL || info->si_code == SI_TIMER ||
         sig == SIGCHLD;
}

static void wrapper(int sig, siginfo_t *info, void *uctx) {
  if (rsan_rt_depth != 0 && !synchronous(sig)) {
    /* Deferred in a thread the controlled scheduler keeps parked, the handler would wait for
     * that thread to run again, which may be never (main parked in a join of threads that
     * poll a flag the handler sets: a livelock). A signal for the process is run by the first
     * thread that leaves the runtime (signal_defer.c); one for this thread stays with it. */
    if (process_directed(sig, info)) rsan_sig_defer_process(sig, info);
    else rsan_sig_defer(sig, info);
    return;
  }
  int saved_errno = errno;
  rsan_sig_call_user(sig, info, uctx);
  errno = saved_errno;
}

/* The program's view of an action the kernel holds: the wrapper replaced by `u`. */
static void user_view(struct sigaction *old, const rsan_sig_user *u) {
  if (old == NULL || old->sa_sigaction != wrapper) return;
  if (u->flags & SA_SIGINFO) old->sa_sigaction = (void (*)(int, siginfo_t *, void *))u->handler;
  else old->sa_handler = (void (*)(int))u->handler;
  old->sa_flags = u->flags;
  memcpy(&old->sa_mask, &u->mask, sizeof old->sa_mask);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (sig <= 0 || sig >= RSAN_NSIG || sig == SIGKILL || sig == SIGSTOP) return REAL(sigaction)(sig, act, old);
  rsan_sig_user prev = rsan_sig_users[sig];
  if (act == NULL) {
    int rc = REAL(sigaction)(sig, NULL, old);
    if (rc == 0) user_view(old, &prev);
    return rc;
  }
  void *handler = (act->sa_flags & SA_SIGINFO) ? (void *)act->sa_sigaction : (void *)act->sa_handler;
  if (handler == (void *)SIG_DFL || handler == (void *)SIG_IGN) {
    int rc = REAL(sigaction)(sig, act, old);
    if (rc == 0) {
      user_view(old, &prev);
      __atomic_store_n(&rsan_sig_users[sig].handler, NULL, __ATOMIC_RELEASE);
    }
    return rc;
  }
  /* the program's handler first, so that a signal right after the real call finds it */
  rsan_sig_user *u = &rsan_sig_users[sig];
  u->flags = act->sa_flags;
  memcpy(&u->mask, &act->sa_mask, sizeof u->mask);
  __atomic_store_n(&u->handler, handler, __ATOMIC_RELEASE);
  struct sigaction k = *act;
  k.sa_flags |= SA_SIGINFO;
  k.sa_sigaction = wrapper;
  int rc = REAL(sigaction)(sig, &k, old);
  if (rc != 0) {
    *u = prev;
    return rc;
  }
  user_view(old, &prev);
  return 0;
}

/* glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler). */
sighandler_t signal(int sig, sighandler_t handler) {
  struct sigaction act, old;
  memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = SA_RESTART;
  sigemptyset(&act.sa_mask);
  if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
  return old.sa_handler;
}
