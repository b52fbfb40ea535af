/* The pending-signal side of signal deferral (rsan_signal.h): intercept_signal.c records a
 * signal that arrived inside the runtime here; the thread runs its handler when it leaves. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "rsan_internal.h"
#include "rsan_signal.h"
#include "rsan_sigtable.h"

__thread int rsan_rt_depth __attribute__((tls_model("initial-exec")));
__thread int rsan_sig_npending __attribute__((tls_model("initial-exec")));
/* A thread's pending signals live in a block mapped at its first deferral (mmap is
 * async-signal-safe, malloc is not) and unmapped when it exits: 8 KiB of TLS per thread would
 * not fit the static TLS of a dlopen'ed engine (the cffi tests). */
typedef struct pending_block {
  siginfo_t info[RSAN_NSIG];
  unsigned char pending[RSAN_NSIG];
} pending_block;
static __thread pending_block *blk __attribute__((tls_model("initial-exec")));

rsan_sig_user rsan_sig_users[RSAN_NSIG];
/* signals deferred and not run yet, over all threads (rsan_sig_may_wake) */
static int deferred_total;

/* A signal for the process, deferred in a thread inside the runtime, is run by the first
 * thread that leaves it (the kernel could have given it to any thread): under a controlled
 * scheduler the thread it arrived in may be parked until the handler itself lets it go on
 * (main in a join of threads that poll the flag the handler sets), while the running thread
 * leaves the runtime at its next operation. Static: no thread owns it. */
int rsan_sig_proc_npending;
static pending_block proc;
static unsigned char proc_claim[RSAN_NSIG];

void rsan_sig_defer_process(int sig, const siginfo_t *info) {
  if (sig <= 0 || sig >= RSAN_NSIG) return;
  if (__atomic_exchange_n(&proc_claim[sig], 1, __ATOMIC_ACQUIRE)) return; /* pending already */
  if (info) proc.info[sig] = *info;
  else {
    memset(&proc.info[sig], 0, sizeof proc.info[sig]);
    proc.info[sig].si_signo = sig;
  }
  __atomic_fetch_add(&deferred_total, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&proc.pending[sig], 1, __ATOMIC_RELEASE);
  __atomic_fetch_add(&rsan_sig_proc_npending, 1, __ATOMIC_RELEASE);
}

static void run_handler(int sig, siginfo_t *info) {
  rsan_sig_user *u = &rsan_sig_users[sig];
  sigset_t mask, old;
  memcpy(&mask, &u->mask, sizeof mask);
  if (!(u->flags & SA_NODEFER)) sigaddset(&mask, sig);
  pthread_sigmask(SIG_BLOCK, &mask, &old);
  rsan_sig_call_user(sig, info, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The process's pending handlers, each claimed by one thread. */
static void deliver_process(void) {
  for (int sig = 1; sig < RSAN_NSIG && __atomic_load_n(&rsan_sig_proc_npending, __ATOMIC_ACQUIRE); sig++) {
    if (!__atomic_load_n(&proc.pending[sig], __ATOMIC_ACQUIRE)) continue;
    siginfo_t info = proc.info[sig];
    if (!__atomic_exchange_n(&proc.pending[sig], 0, __ATOMIC_ACQ_REL)) continue;
    __atomic_fetch_sub(&rsan_sig_proc_npending, 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&deferred_total, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&proc_claim[sig], 0, __ATOMIC_RELEASE); /* a new arrival is pending again */
    run_handler(sig, &info);
  }
}

void rsan_sig_defer(int sig, const siginfo_t *info) {
  if (sig <= 0 || sig >= RSAN_NSIG) return;
  if (blk == NULL) {
    void *p = mmap(NULL, sizeof(pending_block), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return; /* out of memory: the signal is lost, as an overflow would be */
    blk = p;
  }
  if (blk->pending[sig]) return; /* a standard signal pending twice is delivered once */
  if (info) blk->info[sig] = *info;
  else {
    memset(&blk->info[sig], 0, sizeof blk->info[sig]);
    blk->info[sig].si_signo = sig;
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  blk->pending[sig] = 1;
  __atomic_fetch_add(&rsan_sig_npending, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&deferred_total, 1, __ATOMIC_RELEASE);
}

/* Runs the user's handler of sig as the kernel would: its sa_mask (and sig itself unless
 * SA_NODEFER) blocked while it runs. */
void rsan_sig_call_user(int sig, siginfo_t *info, void *uctx) {
  rsan_sig_user *u = &rsan_sig_users[sig];
  void *h = __atomic_load_n(&u->handler, __ATOMIC_ACQUIRE);
  if (h == NULL) return;
  if (u->flags & SA_SIGINFO) ((void (*)(int, siginfo_t *, void *))h)(sig, info, uctx);
  else ((void (*)(int))h)(sig);
}

void rsan_sig_deliver_pending(void) {
  if (rsan_rt_depth != 0) return;
  int saved_errno = errno;
  /* A handler may run in the middle of this (a signal arriving now, at depth 0, is not
   * deferred) and deliver pending ones itself: each one is claimed with an exchange. */
  for (int again = blk != NULL; again;) {
    again = 0; /* one more pass only after a delivery (a count may lag behind its flag) */
    for (int sig = 1; sig < RSAN_NSIG; sig++) {
      if (!blk->pending[sig]) continue;
      siginfo_t info = blk->info[sig];
      __atomic_signal_fence(__ATOMIC_SEQ_CST);
      if (!__atomic_exchange_n(&blk->pending[sig], 0, __ATOMIC_RELAXED)) continue;
      __atomic_fetch_sub(&rsan_sig_npending, 1, __ATOMIC_RELAXED);
      __atomic_fetch_sub(&deferred_total, 1, __ATOMIC_RELAXED);
      again = 1;
      run_handler(sig, &info);
    }
  }
  if (__atomic_load_n(&rsan_sig_proc_npending, __ATOMIC_ACQUIRE)) deliver_process();
  errno = saved_errno;
}

void rsan_sig_thread_exit(void) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  /* a signal still pending here is never run: it wakes no one */
  if (rsan_sig_npending) __atomic_fetch_sub(&deferred_total, rsan_sig_npending, __ATOMIC_RELAXED);
  if (blk && !rsan_sig_npending) {
    munmap(blk, sizeof(pending_block));
    blk = NULL;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* A handler deferred in a thread parked by the scheduler runs only once that thread runs
 * again, and it may wake a thread (sem_post, an atomic store): with every thread parked the
 * run is not a deadlock while such a signal is pending. A signal sent just before (e.g.
 * pthread_kill, then a blocking wait) reaches its thread asynchronously, so with a handler
 * installed the check waits up to ns for one to arrive. */
int rsan_sig_may_wake(uint64_t ns) {
  int any = 0;
  for (int sig = 1; sig < RSAN_NSIG && !any; sig++)
    any = __atomic_load_n(&rsan_sig_users[sig].handler, __ATOMIC_ACQUIRE) != NULL;
  if (!any) return 0;
  for (uint64_t waited = 0;; waited += 1000000) {
    if (__atomic_load_n(&deferred_total, __ATOMIC_ACQUIRE) > 0) return 1;
    if (waited >= ns) return 0;
    struct timespec d = {0, 1000000};
    nanosleep(&d, NULL);
  }
}
