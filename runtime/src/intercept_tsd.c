/* Thread-exit destructors before the thread finishes: C++ thread_local destructors
 * (__cxa_thread_atexit_impl) and the destructors of pthread keys and C11 tss_t.
 *
 * glibc runs both in start_thread after the start routine returns: __call_tls_dtors, then
 * __nptl_deallocate_tsd. The trampolines (intercept_thread.c) finish the thread when the start
 * routine returns, so without this file those destructors ran after rsan_thread_finish: outside
 * the scheduler's control (a thread waiting for their atomic writes was declared deadlocked,
 * e.g. a latch counted down by a tss_t destructor) and after the thread's clocks were handed
 * to its joiner. Here the trampolines run them first, in glibc's order and with its rules:
 *  - TLS: glibc's own __call_tls_dtors (GLIBC_PRIVATE), which pops each entry before calling it,
 *    so the later call in start_thread finds the list empty;
 *  - keys: up to PTHREAD_DESTRUCTOR_ITERATIONS rounds over the keys created with a destructor
 *    (recorded by the interceptors below), each value with a destructor set to NULL before the
 *    destructor is called with it (POSIX), a round only when the previous one called one; the
 *    keys' values are then NULL, so glibc's own pass calls nothing.
 * pthread_exit / thrd_exit / cancellation keep the old order (the thread finishes first): there
 * glibc unwinds the stack before the destructors run, and running them earlier would destroy
 * thread_local objects before the stack objects that may still use them. */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <threads.h>

#include "intercept_internal.h"

RSAN_REAL_DECL(int, pthread_key_create, NULL, pthread_key_t *, void (*)(void *))
RSAN_REAL_DECL(int, pthread_key_delete, NULL, pthread_key_t)
RSAN_REAL_DECL(int, tss_create, NULL, tss_t *, tss_dtor_t)
RSAN_REAL_DECL(void, tss_delete, NULL, tss_t)

#ifndef PTHREAD_DESTRUCTOR_ITERATIONS
#define PTHREAD_DESTRUCTOR_ITERATIONS 4
#endif
#define RSAN_KEYS 1024 /* glibc's PTHREAD_KEYS_MAX: keys are indices below it */

typedef void (*rsan_key_dtor)(void *);
static rsan_key_dtor _Atomic key_dtor[RSAN_KEYS];

static void note_key(unsigned key, rsan_key_dtor dtor) {
  if (key < RSAN_KEYS) atomic_store_explicit(&key_dtor[key], dtor, memory_order_release);
}

int pthread_key_create(pthread_key_t *key, void (*dtor)(void *)) {
  int rc = REAL(pthread_key_create)(key, dtor);
  if (rc == 0) note_key(*key, dtor);
  return rc;
}

int pthread_key_delete(pthread_key_t key) {
  note_key(key, NULL);
  return REAL(pthread_key_delete)(key);
}

/* glibc's tss_create calls its pthread_key_create internally, not through the PLT */
int tss_create(tss_t *key, tss_dtor_t dtor) {
  int rc = REAL(tss_create)(key, dtor);
  if (rc == thrd_success) note_key(*key, dtor);
  return rc;
}

void tss_delete(tss_t key) {
  note_key(key, NULL);
  REAL(tss_delete)(key);
}

/* glibc's __call_tls_dtors, or NULL (another libc: its own order stays) */
typedef void (*rsan_tls_dtors_fn)(void);
static rsan_tls_dtors_fn tls_dtors(void) {
  static void *_Atomic slot;
  static _Atomic int resolved;
  if (!atomic_load_explicit(&resolved, memory_order_acquire)) {
    rsan_icpt_enter(); /* dlvsym may allocate */
    void *p = dlvsym(RTLD_NEXT, "__call_tls_dtors", "GLIBC_PRIVATE");
    rsan_icpt_leave();
    atomic_store_explicit(&slot, p, memory_order_relaxed);
    atomic_store_explicit(&resolved, 1, memory_order_release);
  }
  return (rsan_tls_dtors_fn)atomic_load_explicit(&slot, memory_order_relaxed);
}

void rsan_icpt_exit_destructors(void) {
  rsan_tls_dtors_fn tls = tls_dtors();
  if (tls) tls();
  for (int round = 0; round < PTHREAD_DESTRUCTOR_ITERATIONS; round++) {
    int called = 0;
    for (unsigned k = 0; k < RSAN_KEYS; k++) {
      rsan_key_dtor d = atomic_load_explicit(&key_dtor[k], memory_order_acquire);
      if (!d) continue;
      void *v = pthread_getspecific((pthread_key_t)k);
      if (!v) continue;
      pthread_setspecific((pthread_key_t)k, NULL);
      d(v);
      called = 1;
    }
    if (!called) break;
  }
}
