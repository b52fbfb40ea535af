/* The program's own signal handlers, as it installed them through sigaction / signal
 * (intercept_signal.c); the runtime's wrapper is what the kernel sees. */
#ifndef RSAN_SIGTABLE_H
#define RSAN_SIGTABLE_H

#include <pthread.h>
#include <signal.h>

#define RSAN_NSIG 65

typedef struct rsan_sig_user {
  void *handler; /* the program's handler; NULL: none of ours installed */
  int flags;     /* its sa_flags */
  sigset_t mask; /* its sa_mask */
} rsan_sig_user;

extern rsan_sig_user rsan_sig_users[RSAN_NSIG];

void rsan_sig_defer(int sig, const siginfo_t *info);
/* a signal for the process: run by the first thread that leaves the runtime */
void rsan_sig_defer_process(int sig, const siginfo_t *info);
void rsan_sig_call_user(int sig, siginfo_t *info, void *uctx);

#endif /* RSAN_SIGTABLE_H */
