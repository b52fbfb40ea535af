/* Sync-primitive interceptors: mutex, rwlock, cond, barrier, spinlock, once, and the C11
 * mtx_* / cnd_* / call_once (separate glibc symbols that call the pthread code directly,
 * without the PLT, so nothing is modelled twice).
 *
 * Model (architecture.md "Decisions and pitfalls", sync primitives; Rocker models locks the
 * same way): lock / successful trylock / timedlock / rwlock acquire / the mutex after a cond
 * wait = acquire RMW on the primitive's address (taking a lock is an RMW on its word);
 * unlock / once initialisation = release store. Where the program only READS the primitive
 * (the cond's own edge at wait return, barrier exit, every pthread_once / call_once
 * caller), the acquire is an acquire load: the same happens-before, without inventing
 * SC-order edges between readers (a write there would pass one caller's SC knowledge to
 * the next: a false alarm, see intercept_programs/once.c "callers_only"). Where several
 * threads release to one address without an acquire in between (read-unlock, barrier
 * entry, cond signal), the release is an acquire-load + release-store step, atomic per
 * address, so that no earlier releaser's view is overwritten (release-only loses it, and
 * the barrier / rwlock tests then show false alarms).
 */
#include <errno.h>
#include <semaphore.h>
#include <threads.h>
#include <time.h>

#include "intercept_internal.h"

RSAN_REAL_DECL(int, pthread_mutex_lock, NULL, pthread_mutex_t *)
RSAN_REAL_DECL(int, pthread_mutex_trylock, NULL, pthread_mutex_t *)
RSAN_REAL_DECL(int, pthread_mutex_timedlock, NULL, pthread_mutex_t *, const struct timespec *)
RSAN_REAL_DECL(int, pthread_mutex_clocklock, NULL, pthread_mutex_t *, clockid_t,
               const struct timespec *)
RSAN_REAL_DECL(int, pthread_mutex_unlock, NULL, pthread_mutex_t *)

RSAN_REAL_DECL(int, pthread_rwlock_rdlock, NULL, pthread_rwlock_t *)
RSAN_REAL_DECL(int, pthread_rwlock_tryrdlock, NULL, pthread_rwlock_t *)
RSAN_REAL_DECL(int, pthread_rwlock_timedrdlock, NULL, pthread_rwlock_t *,
               const struct timespec *)
RSAN_REAL_DECL(int, pthread_rwlock_clockrdlock, NULL, pthread_rwlock_t *, clockid_t,
               const struct timespec *)
RSAN_REAL_DECL(int, pthread_rwlock_wrlock, NULL, pthread_rwlock_t *)
RSAN_REAL_DECL(int, pthread_rwlock_trywrlock, NULL, pthread_rwlock_t *)
RSAN_REAL_DECL(int, pthread_rwlock_timedwrlock, NULL, pthread_rwlock_t *,
               const struct timespec *)
RSAN_REAL_DECL(int, pthread_rwlock_clockwrlock, NULL, pthread_rwlock_t *, clockid_t,
               const struct timespec *)
RSAN_REAL_DECL(int, pthread_rwlock_unlock, NULL, pthread_rwlock_t *)

/* On x86-64 glibc, plain dlsym finds the GLIBC_2.2.5 compatibility versions of the cond
 * functions (a different pthread_cond_t layout): ask for the current ones. */
#define COND_VERSION "GLIBC_2.3.2"
RSAN_REAL_DECL(int, pthread_cond_wait, COND_VERSION, pthread_cond_t *, pthread_mutex_t *)
RSAN_REAL_DECL(int, pthread_cond_timedwait, COND_VERSION, pthread_cond_t *, pthread_mutex_t *,
               const struct timespec *)
RSAN_REAL_DECL(int, pthread_cond_signal, COND_VERSION, pthread_cond_t *)
RSAN_REAL_DECL(int, pthread_cond_broadcast, COND_VERSION, pthread_cond_t *)
/* Added in glibc 2.30, never had an old version. */
RSAN_REAL_DECL(int, pthread_cond_clockwait, NULL, pthread_cond_t *, pthread_mutex_t *,
               clockid_t, const struct timespec *)

RSAN_REAL_DECL(int, pthread_barrier_wait, NULL, pthread_barrier_t *)
RSAN_REAL_DECL(int, pthread_spin_lock, NULL, pthread_spinlock_t *)
RSAN_REAL_DECL(int, pthread_spin_trylock, NULL, pthread_spinlock_t *)
RSAN_REAL_DECL(int, pthread_spin_unlock, NULL, pthread_spinlock_t *)
RSAN_REAL_DECL(int, pthread_once, NULL, pthread_once_t *, void (*)(void))

RSAN_REAL_DECL(int, mtx_lock, NULL, mtx_t *)
RSAN_REAL_DECL(int, mtx_timedlock, NULL, mtx_t *__restrict, const struct timespec *__restrict)
RSAN_REAL_DECL(int, mtx_trylock, NULL, mtx_t *)
RSAN_REAL_DECL(int, mtx_unlock, NULL, mtx_t *)
RSAN_REAL_DECL(int, cnd_wait, NULL, cnd_t *, mtx_t *)
RSAN_REAL_DECL(int, cnd_timedwait, NULL, cnd_t *__restrict, mtx_t *__restrict,
               const struct timespec *__restrict)
RSAN_REAL_DECL(int, cnd_signal, NULL, cnd_t *)
RSAN_REAL_DECL(int, cnd_broadcast, NULL, cnd_t *)
RSAN_REAL_DECL(void, call_once, NULL, once_flag *, void (*)(void))

RSAN_REAL_DECL(int, sem_post, NULL, sem_t *)
RSAN_REAL_DECL(int, sem_wait, NULL, sem_t *)
RSAN_REAL_DECL(int, sem_trywait, NULL, sem_t *)
RSAN_REAL_DECL(int, sem_timedwait, NULL, sem_t *__restrict, const struct timespec *__restrict)
RSAN_REAL_DECL(int, sem_clockwait, NULL, sem_t *__restrict, clockid_t,
               const struct timespec *__restrict)

/* A lock call returned `rc`; it holds the lock iff acquired(rc). */
static int mutex_acquired(int rc) { return rc == 0 || rc == EOWNERDEAD; }

/* ---- mutex ---- */

int pthread_mutex_lock(pthread_mutex_t *m) {
  int rc = REAL(pthread_mutex_lock)(m);
  if (!rsan_icpt_inside() && mutex_acquired(rc)) rsan_icpt_acquire(m);
  return rc;
}

int pthread_mutex_trylock(pthread_mutex_t *m) {
  int rc = REAL(pthread_mutex_trylock)(m);
  if (!rsan_icpt_inside() && mutex_acquired(rc)) rsan_icpt_acquire(m);
  return rc;
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime) {
  int rc = REAL(pthread_mutex_timedlock)(m, abstime);
  if (!rsan_icpt_inside() && mutex_acquired(rc)) rsan_icpt_acquire(m);
  return rc;
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime) {
  int rc = REAL(pthread_mutex_clocklock)(m, clock, abstime);
  if (!rsan_icpt_inside() && mutex_acquired(rc)) rsan_icpt_acquire(m);
  return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m) {
  /* Release before the real unlock, so the next owner's acquire sees it. */
  if (!rsan_icpt_inside()) rsan_icpt_release(m);
  return REAL(pthread_mutex_unlock)(m);
}

/* ---- rwlock ---- */

#define RWLOCK_ACQUIRE(call)                                     \
  do {                                                           \
    int rc_ = (call);                                            \
    if (!rsan_icpt_inside() && rc_ == 0) rsan_icpt_acquire(rw); \
    return rc_;                                                  \
  } while (0)

int pthread_rwlock_rdlock(pthread_rwlock_t *rw) { RWLOCK_ACQUIRE(REAL(pthread_rwlock_rdlock)(rw)); }
int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw) {
  RWLOCK_ACQUIRE(REAL(pthread_rwlock_tryrdlock)(rw));
}
int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime) {
  RWLOCK_ACQUIRE(REAL(pthread_rwlock_timedrdlock)(rw, abstime));
}
int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clock,
                               const struct timespec *abstime) {
  RWLOCK_ACQUIRE(REAL(pthread_rwlock_clockrdlock)(rw, clock, abstime));
}
int pthread_rwlock_wrlock(pthread_rwlock_t *rw) { RWLOCK_ACQUIRE(REAL(pthread_rwlock_wrlock)(rw)); }
int pthread_rwlock_trywrlock(pthread_rwlock_t *rw) {
  RWLOCK_ACQUIRE(REAL(pthread_rwlock_trywrlock)(rw));
}
int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime) {
  RWLOCK_ACQUIRE(REAL(pthread_rwlock_timedwrlock)(rw, abstime));
}
int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clock,
                               const struct timespec *abstime) {
  RWLOCK_ACQUIRE(REAL(pthread_rwlock_clockwrlock)(rw, clock, abstime));
}

int pthread_rwlock_unlock(pthread_rwlock_t *rw) {
  /* Readers unlock concurrently: join, do not overwrite, the view released so far. */
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(rw);
  return REAL(pthread_rwlock_unlock)(rw);
}

/* ---- condition variables ---- */

/* Around a real wait that returned rc (0 = woken): the mutex is held again whenever the
 * wait got as far as releasing it, i.e. for every result but a refused call. */
static void cond_wait_before(const void *m) { rsan_icpt_release(m); }
static void cond_wait_after(const void *c, const void *m, int woken) {
  rsan_icpt_acquire(m);
  if (woken) rsan_icpt_acquire_load(c);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  if (rsan_icpt_inside()) return REAL(pthread_cond_wait)(c, m);
  cond_wait_before(m);
  int rc = REAL(pthread_cond_wait)(c, m);
  cond_wait_after(c, m, rc == 0);
  return rc;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  if (rsan_icpt_inside()) return REAL(pthread_cond_timedwait)(c, m, abstime);
  cond_wait_before(m);
  int rc = REAL(pthread_cond_timedwait)(c, m, abstime);
  cond_wait_after(c, m, rc == 0);
  return rc;
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                           const struct timespec *abstime) {
  if (rsan_icpt_inside()) return REAL(pthread_cond_clockwait)(c, m, clock, abstime);
  cond_wait_before(m);
  int rc = REAL(pthread_cond_clockwait)(c, m, clock, abstime);
  cond_wait_after(c, m, rc == 0);
  return rc;
}

int pthread_cond_signal(pthread_cond_t *c) {
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(c);
  return REAL(pthread_cond_signal)(c);
}

int pthread_cond_broadcast(pthread_cond_t *c) {
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(c);
  return REAL(pthread_cond_broadcast)(c);
}

/* ---- barrier, spinlock ---- */

int pthread_barrier_wait(pthread_barrier_t *b) {
  if (rsan_icpt_inside()) return REAL(pthread_barrier_wait)(b);
  rsan_icpt_acq_rel(b); /* entry: every arriving thread's view accumulates */
  int rc = REAL(pthread_barrier_wait)(b);
  if (rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD) rsan_icpt_acquire_load(b); /* exit */
  return rc;
}

int pthread_spin_lock(pthread_spinlock_t *s) {
  int rc = REAL(pthread_spin_lock)(s);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire((const void *)s);
  return rc;
}

int pthread_spin_trylock(pthread_spinlock_t *s) {
  int rc = REAL(pthread_spin_trylock)(s);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire((const void *)s);
  return rc;
}

int pthread_spin_unlock(pthread_spinlock_t *s) {
  if (!rsan_icpt_inside()) rsan_icpt_release((const void *)s);
  return REAL(pthread_spin_unlock)(s);
}

/* ---- once ---- */

/* The routine and control of the innermost pthread_once / call_once in progress on this
 * thread; the real call runs once_trampoline, which has no argument. */
static __thread void (*once_routine)(void) __attribute__((tls_model("initial-exec")));
static __thread const void *once_control __attribute__((tls_model("initial-exec")));

static void once_trampoline(void) {
  void (*routine)(void) = once_routine;
  const void *control = once_control;
  routine();
  rsan_icpt_release(control); /* initialisation done */
}

int pthread_once(pthread_once_t *o, void (*routine)(void)) {
  if (rsan_icpt_inside()) return REAL(pthread_once)(o, routine);
  void (*saved_routine)(void) = once_routine;
  const void *saved_control = once_control;
  once_routine = routine;
  once_control = o;
  int rc = REAL(pthread_once)(o, once_trampoline);
  once_routine = saved_routine;
  once_control = saved_control;
  if (rc == 0) rsan_icpt_acquire_load(o); /* every caller, the initialiser included */
  return rc;
}

void call_once(once_flag *o, void (*routine)(void)) {
  if (rsan_icpt_inside()) {
    REAL(call_once)(o, routine);
    return;
  }
  void (*saved_routine)(void) = once_routine;
  const void *saved_control = once_control;
  once_routine = routine;
  once_control = o;
  REAL(call_once)(o, once_trampoline);
  once_routine = saved_routine;
  once_control = saved_control;
  rsan_icpt_acquire_load(o);
}

/* ---- C11 mtx_* / cnd_* ---- */

int mtx_lock(mtx_t *m) {
  int rc = REAL(mtx_lock)(m);
  if (!rsan_icpt_inside() && rc == thrd_success) rsan_icpt_acquire(m);
  return rc;
}

int mtx_timedlock(mtx_t *__restrict m, const struct timespec *__restrict abstime) {
  int rc = REAL(mtx_timedlock)(m, abstime);
  if (!rsan_icpt_inside() && rc == thrd_success) rsan_icpt_acquire(m);
  return rc;
}

int mtx_trylock(mtx_t *m) {
  int rc = REAL(mtx_trylock)(m);
  if (!rsan_icpt_inside() && rc == thrd_success) rsan_icpt_acquire(m);
  return rc;
}

int mtx_unlock(mtx_t *m) {
  if (!rsan_icpt_inside()) rsan_icpt_release(m);
  return REAL(mtx_unlock)(m);
}

int cnd_wait(cnd_t *c, mtx_t *m) {
  if (rsan_icpt_inside()) return REAL(cnd_wait)(c, m);
  cond_wait_before(m);
  int rc = REAL(cnd_wait)(c, m);
  cond_wait_after(c, m, rc == thrd_success);
  return rc;
}

int cnd_timedwait(cnd_t *__restrict c, mtx_t *__restrict m,
                  const struct timespec *__restrict abstime) {
  if (rsan_icpt_inside()) return REAL(cnd_timedwait)(c, m, abstime);
  cond_wait_before(m);
  int rc = REAL(cnd_timedwait)(c, m, abstime);
  cond_wait_after(c, m, rc == thrd_success);
  return rc;
}

int cnd_signal(cnd_t *c) {
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(c);
  return REAL(cnd_signal)(c);
}

int cnd_broadcast(cnd_t *c) {
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(c);
  return REAL(cnd_broadcast)(c);
}

/* ---- POSIX semaphores (not in the list of architecture.md, but a common hand-off: without
 * them, code synchronised by a semaphore would be reported). glibc's sem_post and sem_wait
 * are CAS loops on the semaphore word: post = release that joins (several threads post
 * before one waits), successful wait = acquire RMW. ---- */

int sem_post(sem_t *s) {
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(s);
  return REAL(sem_post)(s);
}

int sem_wait(sem_t *s) {
  int rc = REAL(sem_wait)(s);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire(s);
  return rc;
}

int sem_trywait(sem_t *s) {
  int rc = REAL(sem_trywait)(s);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire(s);
  return rc;
}

int sem_timedwait(sem_t *__restrict s, const struct timespec *__restrict abstime) {
  int rc = REAL(sem_timedwait)(s, abstime);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire(s);
  return rc;
}

int sem_clockwait(sem_t *__restrict s, clockid_t clock, const struct timespec *__restrict abstime) {
  int rc = REAL(sem_clockwait)(s, clock, abstime);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire(s);
  return rc;
}
