/* The runtime locks' slow paths (rsan_internal.h "runtime locks"): a contended lock spins on
 * the word for a bounded time, then parks the thread on it with FUTEX_WAIT; the unlock that
 * finds a possible waiter wakes one with FUTEX_WAKE.
 *
 * The word (Drepper, "Futexes are tricky", the third mutex): 0 free, 1 locked, 2 locked and a
 * waiter may be parked. A waiter parks only after it has stored 2 (its exchange), and it parks
 * only while the word is still 2 (FUTEX_WAIT compares in the kernel, atomically with queueing
 * the thread): an unlock between the two sees 2 and wakes, or changed the word and the wait
 * returns at once. So a wake is never lost. A waiter that acquires by its exchange leaves the
 * word at 2 (other waiters may still be parked): the worst case is one needless wake.
 *
 * The futex calls keep errno: the runtime runs inside the program's atomic operations, which
 * must not change the program's errno. */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rsan_internal.h"

/* Spinning: how many times to look at the word (one pause apart) before parking. A pause is
 * ~40-140 cycles here, so this is a few microseconds, the order of a whole atomic operation of
 * the engine: a holder that is running is waited for, one that was preempted is not. */
#define RSAN_LOCK_SPINS 100

static uint64_t parks, wakes; /* verbosity=1 prints them at exit */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

void rsan_futex_wait(uint32_t *w, uint32_t val, const struct timespec *timeout) {
  int saved = errno;
  syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, timeout, NULL, 0);
  errno = saved;
}

void rsan_futex_wake(uint32_t *w) {
  int saved = errno;
  syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  errno = saved;
}

void rsan_spin_lock_slow(rsan_spin *l) {
  for (unsigned i = 0; i < RSAN_LOCK_SPINS; i++) {
    cpu_relax();
    uint32_t c = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
    if (c == 0 && __atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
  }
  /* park: announce a waiter (2); the exchange also takes the lock when it was free */
  while (__atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE) != 0) {
    __atomic_fetch_add(&parks, 1, __ATOMIC_RELAXED);
    rsan_futex_wait(&l->v, 2, NULL);
  }
}

void rsan_spin_wake(rsan_spin *l) {
  __atomic_fetch_add(&wakes, 1, __ATOMIC_RELAXED);
  rsan_futex_wake(&l->v);
}

/* verbosity >= 1, at exit */
void rsan_lock_print_stats(void) {
  char buf[120];
  int n = snprintf(buf, sizeof buf, "pyrsan: locks: %llu parked waits, %llu wakes\n",
                   (unsigned long long)__atomic_load_n(&parks, __ATOMIC_RELAXED),
                   (unsigned long long)__atomic_load_n(&wakes, __ATOMIC_RELAXED));
  if (n > 0) (void)!write(2, buf, (size_t)n);
}

/* ---- tests (testsuite/runtime/test_locks.py) ---- */
static rsan_spin test_lock;
static uint64_t test_counter;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* iters increments of a plain counter, each a load and a store apart, under one runtime lock;
 * every hold_every-th holder keeps the lock hold_us microseconds (longer than the spinning), so
 * that waiters park. Returns 0, or -1 if the signal-deferral depth did not come back. */
RSAN_EXPORT int __rsan_test_lock_hammer(uint64_t iters, uint32_t hold_every, uint32_t hold_us) {
  int depth = rsan_rt_depth;
  for (uint64_t i = 0; i < iters; i++) {
    rsan_spin_lock(&test_lock);
    if (rsan_rt_depth != depth + 1) return -1;
    uint64_t c = __atomic_load_n(&test_counter, __ATOMIC_RELAXED);
    if (hold_every && i % hold_every == 0) {
      uint64_t end = now_ns() + (uint64_t)hold_us * 1000u;
      while (now_ns() < end) cpu_relax();
    } else {
      cpu_relax();
    }
    __atomic_store_n(&test_counter, c + 1, __ATOMIC_RELAXED);
    rsan_spin_unlock(&test_lock);
  }
  return rsan_rt_depth == depth ? 0 : -1;
}
RSAN_EXPORT uint64_t __rsan_test_lock_counter(void) {
  return __atomic_load_n(&test_counter, __ATOMIC_RELAXED);
}
RSAN_EXPORT uint64_t __rsan_test_lock_parks(void) { return __atomic_load_n(&parks, __ATOMIC_RELAXED); }
RSAN_EXPORT void __rsan_test_lock_reset(void) {
  test_lock.v = 0;
  __atomic_store_n(&test_counter, 0, __ATOMIC_RELAXED);
}
