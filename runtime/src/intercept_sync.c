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
#include "rsan_sched.h"

RSAN_REAL_DECL(int, pthread_mutex_lock, NULL, pthread_mutex_t *)
RSAN_REAL_DECL(int, pthread_mutex_trylock, NULL, pthread_mutex_t *)
RSAN_REAL_DECL(int, pthread_mutex_timedlock, NULL, pthread_mutex_t *, const struct timespec *)
RSAN_REAL_DECL(int, pthread_mutex_clocklock, NULL, pthread_mutex_t *, clockid_t, const struct timespec *)
RSAN_REAL_DECL(int, pthread_mutex_unlock, NULL, pthread_mutex_t *)

RSAN_REAL_DECL(int, pthread_rwlock_rdlock, NULL, pthread_rwlock_t *)
RSAN_REAL_DECL(int, pthread_rwlock_tryrdlock, NULL, pthread_rwlock_t *)
RSAN_REAL_DECL(int, pthread_rwlock_timedrdlock, NULL, pthread_rwlock_t *, const struct timespec *)
RSAN_REAL_DECL(int, pthread_rwlock_clockrdlock, NULL, pthread_rwlock_t *, clockid_t, const struct timespec *)
RSAN_REAL_DECL(int, pthread_rwlock_wrlock, NULL, pthread_rwlock_t *)
RSAN_REAL_DECL(int, pthread_rwlock_trywrlock, NULL, pthread_rwlock_t *)
RSAN_REAL_DECL(int, pthread_rwlock_timedwrlock, NULL, pthread_rwlock_t *, const struct timespec *)
RSAN_REAL_DECL(int, pthread_rwlock_clockwrlock, NULL, pthread_rwlock_t *, clockid_t, const struct timespec *)
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
RSAN_REAL_DECL(int, pthread_cond_clockwait, NULL, pthread_cond_t *, pthread_mutex_t *, clockid_t,
               const struct timespec *)

RSAN_REAL_DECL(int, pthread_barrier_init, NULL, pthread_barrier_t *, const pthread_barrierattr_t *, unsigned)
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
RSAN_REAL_DECL(int, sem_clockwait, NULL, sem_t *__restrict, clockid_t, const struct timespec *__restrict)

/* A lock call returned `rc`; it holds the lock iff acquired(rc). */
static int mutex_acquired(int rc) { return rc == 0 || rc == EOWNERDEAD; }

/* ---- under the controlled scheduler (rsan_sched.h) ----
 * A managed thread never calls a blocking real primitive: a lock is a scheduling point that
 * is enabled when the scheduler's model says the lock is free (or held by the caller: a
 * recursive mutex), then the real try-variant; should it fail after all (a normal mutex
 * locked again by its owner, a lock taken outside the model), the thread is disabled until
 * another thread's operation on the lock, and tries again. */
typedef int (*try_fn)(void *);
static int try_mutex(void *m) { return REAL(pthread_mutex_trylock)(m); }
static int try_mtx(void *m) { return REAL(mtx_trylock)(m); }
static int try_spin(void *s) { return REAL(pthread_spin_trylock)(s); }
static int try_rdlock(void *rw) { return REAL(pthread_rwlock_tryrdlock)(rw); }
static int try_wrlock(void *rw) { return REAL(pthread_rwlock_trywrlock)(rw); }
static int try_sem(void *s) { return REAL(sem_trywait)(s) == 0 ? 0 : EBUSY; }

/* Takes obj; returns the try-variant's result, or timedout when a timed lock timed out. */
static int controlled_lock(void *obj, int block, try_fn try_lock, int busy, int timed, int timedout) {
  for (;;) {
    int kind = block == RSAN_SB_SEM ? RSAN_SK_SYNC_ACQUIRE : RSAN_SK_LOCK;
    if (!rsan_sched_point_blocking(kind, obj, 1, block, timed)) return timedout;
    int rc = try_lock(obj);
    if (rc != busy) {
      if (mutex_acquired(rc) && block != RSAN_SB_SEM) rsan_sched_lock_acquired(obj, block != RSAN_SB_RDLOCK);
      return rc;
    }
    rsan_sched_retry_after_write(obj);
  }
}

/* A try-variant: a scheduling point, then the real call (it never blocks). A failure reads
 * the lock and leaves it as it was: noted as a read of its word (the same result each time),
 * so that a polling loop (`while (pthread_mutex_trylock(&m) == EBUSY) ;`) yields like any spin
 * on an unchanged word until the holder's unlock writes it (docs/scheduling.md "Enabledness
 * beyond the protocol text"); without it a controlled run could spin there until max_steps
 * (an exploration's schedule that ran the poller while another thread held the lock did). */
static int controlled_trylock(void *obj, int block, try_fn try_lock) {
  rsan_sched_point(block == RSAN_SB_SEM ? RSAN_SK_SYNC_ACQUIRE : RSAN_SK_LOCK, obj, 1);
  int rc = try_lock(obj);
  if (mutex_acquired(rc) && block != RSAN_SB_SEM) rsan_sched_lock_acquired(obj, block != RSAN_SB_RDLOCK);
  /* A success writes the lock: a write of its own, which ends the thread's yielding (a poller
   * that got the lock when a schedule chose it must not stay yielding while it holds it: the
   * other pollers' failures never write, so nothing would wake it and they would spin until
   * max_steps) */
  rsan_sched_note_access(obj, mutex_acquired(rc), mutex_acquired(rc));
  return rc;
}

/* An unlock: a scheduling point, the model's release, the real unlock. */
#define CONTROLLED_UNLOCK(obj, model_release, real_unlock) \
  do { \
    rsan_sched_point(RSAN_SK_UNLOCK, (obj), 1); \
    model_release; \
    int rc_ = (real_unlock); \
    rsan_sched_lock_released(obj); \
    return rc_; \
  } while (0)

static int controlled(void) {
  return !rsan_icpt_inside() && rsan_sched_active() && rsan_sched_manages_current();
}

/* ---- mutex ---- */

int pthread_mutex_lock(pthread_mutex_t *m) {
  int rc = controlled() ? controlled_lock(m, RSAN_SB_MUTEX, try_mutex, EBUSY, 0, 0)
                        : REAL(pthread_mutex_lock)(m);
  if (!rsan_icpt_inside() && mutex_acquired(rc)) rsan_icpt_acquire(m);
  return rc;
}

int pthread_mutex_trylock(pthread_mutex_t *m) {
  int rc = controlled() ? controlled_trylock(m, RSAN_SB_MUTEX, try_mutex) : REAL(pthread_mutex_trylock)(m);
  if (!rsan_icpt_inside() && mutex_acquired(rc)) rsan_icpt_acquire(m);
  return rc;
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime) {
  int rc = controlled() ? controlled_lock(m, RSAN_SB_MUTEX, try_mutex, EBUSY, 1, ETIMEDOUT)
                        : REAL(pthread_mutex_timedlock)(m, abstime);
  if (!rsan_icpt_inside() && mutex_acquired(rc)) rsan_icpt_acquire(m);
  return rc;
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime) {
  int rc = controlled() ? controlled_lock(m, RSAN_SB_MUTEX, try_mutex, EBUSY, 1, ETIMEDOUT)
                        : REAL(pthread_mutex_clocklock)(m, clock, abstime);
  if (!rsan_icpt_inside() && mutex_acquired(rc)) rsan_icpt_acquire(m);
  return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m) {
  if (controlled()) CONTROLLED_UNLOCK(m, rsan_icpt_release(m), REAL(pthread_mutex_unlock)(m));
  /* Release before the real unlock, so the next owner's acquire sees it. */
  if (!rsan_icpt_inside()) rsan_icpt_release(m);
  return REAL(pthread_mutex_unlock)(m);
}

/* ---- rwlock ---- */

#define RWLOCK_ACQUIRE(call) \
  do { \
    int rc_ = (call); \
    if (!rsan_icpt_inside() && rc_ == 0) rsan_icpt_acquire(rw); \
    return rc_; \
  } while (0)

#define RD_LOCK(timed) controlled_lock(rw, RSAN_SB_RDLOCK, try_rdlock, EBUSY, timed, ETIMEDOUT)
#define WR_LOCK(timed) controlled_lock(rw, RSAN_SB_WRLOCK, try_wrlock, EBUSY, timed, ETIMEDOUT)

int pthread_rwlock_rdlock(pthread_rwlock_t *rw) {
  RWLOCK_ACQUIRE(controlled() ? RD_LOCK(0) : REAL(pthread_rwlock_rdlock)(rw));
}
int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw) {
  RWLOCK_ACQUIRE(controlled() ? controlled_trylock(rw, RSAN_SB_RDLOCK, try_rdlock)
                              : REAL(pthread_rwlock_tryrdlock)(rw));
}
int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime) {
  RWLOCK_ACQUIRE(controlled() ? RD_LOCK(1) : REAL(pthread_rwlock_timedrdlock)(rw, abstime));
}
int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime) {
  RWLOCK_ACQUIRE(controlled() ? RD_LOCK(1) : REAL(pthread_rwlock_clockrdlock)(rw, clock, abstime));
}
int pthread_rwlock_wrlock(pthread_rwlock_t *rw) {
  RWLOCK_ACQUIRE(controlled() ? WR_LOCK(0) : REAL(pthread_rwlock_wrlock)(rw));
}
int pthread_rwlock_trywrlock(pthread_rwlock_t *rw) {
  RWLOCK_ACQUIRE(controlled() ? controlled_trylock(rw, RSAN_SB_WRLOCK, try_wrlock)
                              : REAL(pthread_rwlock_trywrlock)(rw));
}
int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime) {
  RWLOCK_ACQUIRE(controlled() ? WR_LOCK(1) : REAL(pthread_rwlock_timedwrlock)(rw, abstime));
}
int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime) {
  RWLOCK_ACQUIRE(controlled() ? WR_LOCK(1) : REAL(pthread_rwlock_clockwrlock)(rw, clock, abstime));
}

int pthread_rwlock_unlock(pthread_rwlock_t *rw) {
  if (controlled()) CONTROLLED_UNLOCK(rw, rsan_icpt_acq_rel(rw), REAL(pthread_rwlock_unlock)(rw));
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

/* Controlled: the mutex is released at a scheduling point, the thread waits in the
 * scheduler for a signal (never in the real cond), then takes the mutex again as a lock.
 * Returns ok_rc, or timeout_rc when a timed wait timed out. */
static int controlled_cond_wait(const void *c, void *m, int timed, int (*unlock)(void *), try_fn try_lock,
                                int busy, int ok_rc, int timeout_rc) {
  rsan_sched_point(RSAN_SK_UNLOCK, m, 1);
  cond_wait_before(m);
  unlock(m);
  rsan_sched_lock_released(m);
  int woken = rsan_sched_cond_wait(c, timed);
  controlled_lock(m, RSAN_SB_MUTEX, try_lock, busy, 0, 0);
  cond_wait_after(c, m, woken);
  /* a cancellation point: the thread waited in the scheduler, where a pthread_cancel only
   * ended the wait (intercept_thread.c); it acts on it here, with the mutex held, as POSIX
   * says (C11's cnd_wait is no cancellation point, but a pending request is acted on at the
   * next one anyway) */
  pthread_testcancel();
  return woken ? ok_rc : timeout_rc;
}
static int unlock_mutex(void *m) { return REAL(pthread_mutex_unlock)(m); }
static int unlock_mtx(void *m) { return REAL(mtx_unlock)(m); }
#define PTHREAD_COND_WAIT(timed) \
  controlled_cond_wait(c, m, timed, unlock_mutex, try_mutex, EBUSY, 0, ETIMEDOUT)

/* Controlled signal / broadcast: a scheduling point, the model, the waiters the scheduler
 * keeps; the real call only matters for threads the scheduler does not manage. */
static void controlled_signal(const void *c, int all) {
  rsan_sched_point(RSAN_SK_SYNC_RELEASE, c, 1);
  rsan_icpt_acq_rel(c);
  rsan_sched_cond_signal(c, all);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  if (rsan_icpt_inside()) return REAL(pthread_cond_wait)(c, m);
  if (controlled()) return PTHREAD_COND_WAIT(0);
  cond_wait_before(m);
  int rc = REAL(pthread_cond_wait)(c, m);
  cond_wait_after(c, m, rc == 0);
  return rc;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  if (rsan_icpt_inside()) return REAL(pthread_cond_timedwait)(c, m, abstime);
  if (controlled()) return PTHREAD_COND_WAIT(1);
  cond_wait_before(m);
  int rc = REAL(pthread_cond_timedwait)(c, m, abstime);
  cond_wait_after(c, m, rc == 0);
  return rc;
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                           const struct timespec *abstime) {
  if (rsan_icpt_inside()) return REAL(pthread_cond_clockwait)(c, m, clock, abstime);
  if (controlled()) return PTHREAD_COND_WAIT(1);
  cond_wait_before(m);
  int rc = REAL(pthread_cond_clockwait)(c, m, clock, abstime);
  cond_wait_after(c, m, rc == 0);
  return rc;
}

int pthread_cond_signal(pthread_cond_t *c) {
  if (controlled()) {
    controlled_signal(c, 0);
    return REAL(pthread_cond_signal)(c);
  }
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(c);
  return REAL(pthread_cond_signal)(c);
}

int pthread_cond_broadcast(pthread_cond_t *c) {
  if (controlled()) {
    controlled_signal(c, 1);
    return REAL(pthread_cond_broadcast)(c);
  }
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(c);
  return REAL(pthread_cond_broadcast)(c);
}

/* ---- barrier, spinlock ---- */

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count) {
  int rc = REAL(pthread_barrier_init)(b, attr, count);
  if (rc == 0 && controlled()) rsan_sched_barrier_init(b, count);
  return rc;
}

/* glibc's struct pthread_barrier {in, current_round, count, ...}: the count of a barrier
 * whose init the scheduler did not see */
static unsigned barrier_count_fallback(const pthread_barrier_t *b) { return ((const unsigned *)b)[2]; }

int pthread_barrier_wait(pthread_barrier_t *b) {
  if (rsan_icpt_inside()) return REAL(pthread_barrier_wait)(b);
  if (controlled()) { /* the scheduler keeps the rounds; the real barrier is never entered */
    rsan_sched_point(RSAN_SK_SYNC_RELEASE, b, 1);
    rsan_icpt_acq_rel(b);
    int serial = rsan_sched_barrier_wait(b, barrier_count_fallback(b));
    if (serial < 0) serial = REAL(pthread_barrier_wait)(b) == PTHREAD_BARRIER_SERIAL_THREAD; /* handed over */
    rsan_icpt_acquire_load(b);
    return serial ? PTHREAD_BARRIER_SERIAL_THREAD : 0;
  }
  rsan_icpt_acq_rel(b); /* entry: every arriving thread's view accumulates */
  int rc = REAL(pthread_barrier_wait)(b);
  if (rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD) rsan_icpt_acquire_load(b); /* exit */
  return rc;
}

int pthread_spin_lock(pthread_spinlock_t *s) {
  int rc = controlled() ? controlled_lock((void *)s, RSAN_SB_MUTEX, try_spin, EBUSY, 0, 0)
                        : REAL(pthread_spin_lock)(s);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire((const void *)s);
  return rc;
}

int pthread_spin_trylock(pthread_spinlock_t *s) {
  int rc = controlled() ? controlled_trylock((void *)s, RSAN_SB_MUTEX, try_spin)
                        : REAL(pthread_spin_trylock)(s);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire((const void *)s);
  return rc;
}

int pthread_spin_unlock(pthread_spinlock_t *s) {
  if (controlled())
    CONTROLLED_UNLOCK((void *)s, rsan_icpt_release((const void *)s), REAL(pthread_spin_unlock)(s));
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
  int sched = controlled();
  if (sched) rsan_sched_once_enter(o); /* waits while another thread runs the routine */
  int rc = REAL(pthread_once)(o, once_trampoline);
  if (sched) rsan_sched_once_done(o);
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
  int sched = controlled();
  if (sched) rsan_sched_once_enter(o);
  REAL(call_once)(o, once_trampoline);
  if (sched) rsan_sched_once_done(o);
  once_routine = saved_routine;
  once_control = saved_control;
  rsan_icpt_acquire_load(o);
}

/* ---- C11 mtx_* / cnd_* ---- */

int mtx_lock(mtx_t *m) {
  int rc = controlled() ? controlled_lock(m, RSAN_SB_MUTEX, try_mtx, thrd_busy, 0, 0) : REAL(mtx_lock)(m);
  if (!rsan_icpt_inside() && rc == thrd_success) rsan_icpt_acquire(m);
  return rc;
}

int mtx_timedlock(mtx_t *__restrict m, const struct timespec *__restrict abstime) {
  int rc = controlled() ? controlled_lock(m, RSAN_SB_MUTEX, try_mtx, thrd_busy, 1, thrd_timedout)
                        : REAL(mtx_timedlock)(m, abstime);
  if (!rsan_icpt_inside() && rc == thrd_success) rsan_icpt_acquire(m);
  return rc;
}

int mtx_trylock(mtx_t *m) {
  int rc = controlled() ? controlled_trylock(m, RSAN_SB_MUTEX, try_mtx) : REAL(mtx_trylock)(m);
  if (!rsan_icpt_inside() && rc == thrd_success) rsan_icpt_acquire(m);
  return rc;
}

int mtx_unlock(mtx_t *m) {
  if (controlled()) CONTROLLED_UNLOCK(m, rsan_icpt_release(m), REAL(mtx_unlock)(m));
  if (!rsan_icpt_inside()) rsan_icpt_release(m);
  return REAL(mtx_unlock)(m);
}

int cnd_wait(cnd_t *c, mtx_t *m) {
  if (rsan_icpt_inside()) return REAL(cnd_wait)(c, m);
  if (controlled())
    return controlled_cond_wait(c, m, 0, unlock_mtx, try_mtx, thrd_busy, thrd_success, thrd_timedout);
  cond_wait_before(m);
  int rc = REAL(cnd_wait)(c, m);
  cond_wait_after(c, m, rc == thrd_success);
  return rc;
}

int cnd_timedwait(cnd_t *__restrict c, mtx_t *__restrict m, const struct timespec *__restrict abstime) {
  if (rsan_icpt_inside()) return REAL(cnd_timedwait)(c, m, abstime);
  if (controlled())
    return controlled_cond_wait(c, m, 1, unlock_mtx, try_mtx, thrd_busy, thrd_success, thrd_timedout);
  cond_wait_before(m);
  int rc = REAL(cnd_timedwait)(c, m, abstime);
  cond_wait_after(c, m, rc == thrd_success);
  return rc;
}

int cnd_signal(cnd_t *c) {
  if (controlled()) {
    controlled_signal(c, 0);
    return REAL(cnd_signal)(c);
  }
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(c);
  return REAL(cnd_signal)(c);
}

int cnd_broadcast(cnd_t *c) {
  if (controlled()) {
    controlled_signal(c, 1);
    return REAL(cnd_broadcast)(c);
  }
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(c);
  return REAL(cnd_broadcast)(c);
}

/* ---- POSIX semaphores (architecture.md "Sync primitives"; a common hand-off: without
 * them, code synchronised by a semaphore would be reported). glibc's sem_post and sem_wait
 * are CAS loops on the semaphore word: post = release that joins (several threads post
 * before one waits), successful wait = acquire RMW. ---- */

int sem_post(sem_t *s) {
  if (controlled()) rsan_sched_point(RSAN_SK_SYNC_RELEASE, s, 1);
  if (!rsan_icpt_inside()) rsan_icpt_acq_rel(s);
  return REAL(sem_post)(s);
}

/* Controlled: enabled while sem_getvalue > 0, then the real trywait; 0 or -1 with errno. */
static int controlled_sem_wait(sem_t *s, int timed) {
  int rc = controlled_lock(s, RSAN_SB_SEM, try_sem, EBUSY, timed, ETIMEDOUT);
  if (rc == 0) return 0;
  errno = rc;
  return -1;
}

int sem_wait(sem_t *s) {
  int rc = controlled() ? controlled_sem_wait(s, 0) : REAL(sem_wait)(s);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire(s);
  return rc;
}

/* A failed try reads the semaphore and leaves it as it was: as controlled_trylock's failures,
 * so that a polling loop (`while (sem_trywait(&s)) ;`) yields until a post (without it an
 * exploration's first schedule spun there until max_steps). */
int sem_trywait(sem_t *s) {
  int managed = controlled();
  if (managed) rsan_sched_point(RSAN_SK_SYNC_ACQUIRE, s, 1);
  int rc = REAL(sem_trywait)(s);
  if (managed) rsan_sched_note_access(s, rc == 0, rc == 0);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire(s);
  return rc;
}

int sem_timedwait(sem_t *__restrict s, const struct timespec *__restrict abstime) {
  int rc = controlled() ? controlled_sem_wait(s, 1) : REAL(sem_timedwait)(s, abstime);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire(s);
  return rc;
}

int sem_clockwait(sem_t *__restrict s, clockid_t clock, const struct timespec *__restrict abstime) {
  int rc = controlled() ? controlled_sem_wait(s, 1) : REAL(sem_clockwait)(s, clock, abstime);
  if (!rsan_icpt_inside() && rc == 0) rsan_icpt_acquire(s);
  return rc;
}
