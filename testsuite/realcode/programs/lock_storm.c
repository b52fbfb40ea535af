/* Eight threads contend one atomic (and so the runtime's lock of its location) with fetch_add
 * and a CAS loop, and hand a turn back and forth in pairs through spin loops, while an interval
 * timer and a storm thread send signals whose handler adds to the same atomic. The runtime's
 * locks park waiters on a futex; a signal that arrives inside the runtime is deferred. Every
 * count must come out exact, errno must survive every operation, and the run must end.
 * Prints "ok <handled signals>". */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#define NT 8
#define ITERS 20000
#define HANDOFF_EVERY 8

static atomic_long hot;
static atomic_long handled;
static atomic_long turn[NT / 2];
static atomic_int done; /* workers past their loop: the storm stops at NT */
static atomic_long errno_lost;
static pthread_t workers[NT];

static void on_signal(int sig) {
  (void)sig;
  int saved = errno;
  atomic_fetch_add_explicit(&hot, 1, memory_order_acq_rel);
  atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
  errno = saved;
}

static void wait_turn(atomic_long *t, long want) {
  unsigned spins = 0;
  while (atomic_load_explicit(t, memory_order_acquire) != want)
    if (++spins % 32 == 0) sched_yield();
}

static void *worker(void *arg) {
  long id = (long)arg, round = 0;
  errno = 1000 + (int)id;
  for (long k = 0; k < ITERS; k++) {
    atomic_fetch_add_explicit(&hot, 1, (k & 1) ? memory_order_relaxed : memory_order_acq_rel);
    long old = atomic_load_explicit(&hot, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&hot, &old, old + 1, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
    }
    if (k % HANDOFF_EVERY == 0) { /* the pair's turns alternate: 0, 1, 2, ... */
      atomic_long *t = &turn[id / 2];
      wait_turn(t, 2 * round + (id & 1));
      atomic_fetch_add_explicit(t, 1, memory_order_release);
      round++;
    }
    if (errno != 1000 + (int)id) atomic_fetch_add_explicit(&errno_lost, 1, memory_order_relaxed);
  }
  atomic_fetch_add_explicit(&done, 1, memory_order_release);
  return NULL;
}

/* A worker is signalled only until it is joined (a joined thread's pthread_t is dangling): main
 * joins the workers after the storm, which ends once every worker has left its loop. */
static void *storm(void *arg) {
  (void)arg;
  unsigned i = 0;
  while (atomic_load_explicit(&done, memory_order_acquire) < NT) {
    pthread_kill(workers[i++ % NT], SIGUSR1);
    sched_yield();
  }
  return NULL;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);
  for (long i = 0; i < NT; i++) pthread_create(&workers[i], NULL, worker, (void *)i);
  pthread_t s;
  pthread_create(&s, NULL, storm, NULL);
  struct itimerval it = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &it, NULL);
  pthread_join(s, NULL);
  for (int i = 0; i < NT; i++) pthread_join(workers[i], NULL);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  long h = atomic_load(&handled), rounds = (ITERS + HANDOFF_EVERY - 1) / HANDOFF_EVERY;
  long want = 2L * NT * ITERS + h;
  if (atomic_load(&hot) != want) {
    printf("hot %ld, want %ld\n", (long)atomic_load(&hot), want);
    return 1;
  }
  for (int p = 0; p < NT / 2; p++)
    if (atomic_load(&turn[p]) != 2 * rounds) {
      printf("turn[%d] %ld, want %ld\n", p, (long)atomic_load(&turn[p]), 2 * rounds);
      return 1;
    }
  if (atomic_load(&errno_lost)) {
    printf("errno changed %ld times\n", (long)atomic_load(&errno_lost));
    return 1;
  }
  printf("ok %ld\n", h);
  return 0;
}
