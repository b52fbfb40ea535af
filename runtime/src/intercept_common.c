/* Shared machinery of the interceptors: the re-entrancy guard, lazy resolution of the
 * real libc functions, and the acquire / release / acq_rel models of sync primitives. */
#include <dlfcn.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "rsan_exit.h"
#include "intercept_internal.h"
#include "rsan_interface.h"

__thread int rsan_icpt_depth __attribute__((tls_model("initial-exec")));

static void rsan_icpt_die(const char *what, const char *name) {
  /* No stdio: it may allocate or lock. */
  static const char prefix[] = "pyrsan: fatal: ";
  ssize_t ignored = write(2, prefix, sizeof prefix - 1);
  ignored = write(2, what, strlen(what));
  ignored = write(2, name, strlen(name));
  ignored = write(2, "\n", 1);
  (void)ignored;
  rsan_exit_raw(RSAN_EXIT_FATAL);
}

void *rsan_icpt_resolve(void *_Atomic *slot, const char *name, const char *version) {
  /* dlsym may allocate and free: free() passes straight through while the guard is set. */
  rsan_icpt_enter();
  void *p = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
  rsan_icpt_leave();
  if (p == NULL) rsan_icpt_die("cannot find the real function ", name);
  atomic_store_explicit(slot, p, memory_order_release);
  return p;
}

void rsan_icpt_acquire(const void *addr) {
  rsan_icpt_enter();
  rsan_sync_acquire(rsan_thread_current(), addr);
  rsan_icpt_leave();
}

void rsan_icpt_acquire_load(const void *addr) {
  rsan_icpt_enter();
  rsan_sync_acquire_load(rsan_thread_current(), addr);
  rsan_icpt_leave();
}

void rsan_icpt_release(const void *addr) {
  rsan_icpt_enter();
  rsan_sync_release(rsan_thread_current(), addr);
  rsan_icpt_leave();
}

/* Striped spinlocks that make acquire+release one step per address. They never call any
 * interposed function, and nothing inside them takes them again. */
#define RSAN_ICPT_STRIPES 64
static atomic_int rsan_icpt_stripe[RSAN_ICPT_STRIPES];

static atomic_int *rsan_icpt_stripe_of(const void *addr) {
  uintptr_t a = (uintptr_t)addr;
  a ^= a >> 17;
  a *= 0x9e3779b97f4a7c15ull;
  return &rsan_icpt_stripe[(a >> 58) % RSAN_ICPT_STRIPES];
}

static void stripe_lock(atomic_int *lock) {
  while (atomic_exchange_explicit(lock, 1, memory_order_acquire) != 0) sched_yield();
}
static void stripe_unlock(atomic_int *lock) { atomic_store_explicit(lock, 0, memory_order_release); }

void rsan_icpt_acq_rel(const void *addr) {
  atomic_int *lock = rsan_icpt_stripe_of(addr);
  rsan_icpt_enter();
  rsan_thread *t = rsan_thread_current();
  stripe_lock(lock);
  rsan_sync_acquire_load(t, addr);
  rsan_sync_release(t, addr);
  stripe_unlock(lock);
  rsan_icpt_leave();
}

/* fork (rsan_fork.h, intercept_fork.c): every interceptor lock, map first. */
void rsan_icpt_fork_lock(void) {
  rsan_icpt_map_lock();
  for (int i = 0; i < RSAN_ICPT_STRIPES; i++) stripe_lock(&rsan_icpt_stripe[i]);
}
void rsan_icpt_fork_unlock(void) {
  for (int i = RSAN_ICPT_STRIPES - 1; i >= 0; i--) stripe_unlock(&rsan_icpt_stripe[i]);
  rsan_icpt_map_unlock();
}
