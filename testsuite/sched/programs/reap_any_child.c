/* Store buffering whose threads order their accesses with SC fences (robust; with -DNOFENCE
 * the fences are left out: not robust), then main forks CHILDREN processes of its own and
 * reaps "any child" with wait(NULL) until ECHILD; with -DHANDLER a SIGCHLD handler counts the
 * signals too (exactly one per child), one child at a time so that no two signals merge. The exploration's F-order
 * closure keeps a snapshot process from the first SC fence to the run's end: the program
 * must neither see it (wait(NULL) would wait for it forever) nor get a SIGCHLD of the
 * runtime's. A wrong count aborts (a crash of the run); each child ends through exit(), the
 * runtime's exit path in a forked process. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 2

static atomic_int x, y;
/* a counter in a handler: a lock-free atomic (volatile sig_atomic_t would do as well) */
static atomic_int signals;

static void fence(void) {
#ifndef NOFENCE
  atomic_thread_fence(memory_order_seq_cst);
#endif
}

static void *t1(void *arg) {
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  fence();
  (void)atomic_load_explicit(&y, memory_order_relaxed);
  return NULL;
}

static void *t2(void *arg) {
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_relaxed);
  fence();
  (void)atomic_load_explicit(&x, memory_order_relaxed);
  return NULL;
}

#ifdef HANDLER
/* the handler counts through a pipe (write is async-signal-safe): a byte per signal */
static int counted[2];
static void on_child(int sig) {
  (void)sig;
  char c = 1;
  if (write(counted[1], &c, 1) != 1) abort();
}

static void await_signal(void) {
  char c;
  ssize_t k;
  while ((k = read(counted[0], &c, 1)) < 0 && errno == EINTR) {
  }
  if (k != 1) abort();
}
#endif

/* wait(NULL) until ECHILD: how many children it reaped, each with status 7 */
static int reap_all(void) {
  int reaped = 0, status = 0;
  pid_t pid;
  while ((pid = wait(&status)) > 0) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 7) abort();
    reaped++;
  }
  if (errno != ECHILD) abort();
  return reaped;
}

static void child(void) {
  atomic_fetch_add_explicit(&x, 1, memory_order_relaxed);
  exit(7);
}

int main(void) {
#ifdef HANDLER
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_child;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, NULL);
#endif
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  int reaped = 0;
#ifdef HANDLER
  /* made after the first scheduling point: each run of the fork server makes its own (the
   * handler, installed before, must not run in the server) */
  if (pipe(counted) != 0) abort();
  for (int i = 0; i < CHILDREN; i++) {
    if (fork() == 0) child();
    await_signal(); /* its SIGCHLD */
    reaped += reap_all();
  }
  /* no signal beyond one per child */
  if (fcntl(counted[0], F_SETFL, O_NONBLOCK) != 0) abort();
  char extra;
  if (read(counted[0], &extra, 1) != -1 || errno != EAGAIN) abort();
#else
  for (int i = 0; i < CHILDREN; i++)
    if (fork() == 0) child();
  reaped = reap_all();
#endif
  if (reaped != CHILDREN) abort();
  return 0;
}
