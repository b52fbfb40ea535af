/* The scheduler's models of the blocking primitives (rsan_sched.h): lock owners and readers,
 * condition-variable waiters, barrier rounds and once states, so that a managed thread never
 * blocks in a real primitive while it holds the baton; semaphores are read with sem_getvalue.
 * The models are small arrays: a program has few sync objects. */
#include <semaphore.h>
#include <string.h>

#include "rsan_sched_internal.h"

typedef struct lock_model {
  uintptr_t addr;
  int owner; /* writer / mutex owner tid, -1 none */
  int count; /* recursion depth of the owner */
  int readers;
  int last_writer; /* the tid of the latest write acquisition, -1 none */
  uint64_t handoffs; /* write acquisitions by a thread other than last_writer */
} lock_model;

typedef struct barrier_model {
  uintptr_t addr;
  unsigned count, arrived;
  uint64_t round;
} barrier_model;

typedef struct once_model {
  uintptr_t addr;
  int state; /* 0 not started, 1 running, 2 done */
  int owner;
} once_model;

static lock_model *locks;
static size_t nlocks, caplocks;
static barrier_model *barriers;
static size_t nbarriers, capbarriers;
static once_model *onces;
static size_t nonces, caponces;
static uint64_t cond_seq; /* the order of cond waits: a signal wakes the oldest waiter */

#define MODEL_FIND(type, arr, n, cap, addr_, init) \
  for (size_t i_ = 0; i_ < n; i_++) \
    if (arr[i_].addr == (addr_)) return &arr[i_]; \
  if (!create) return NULL; \
  if (n == cap) { \
    cap = cap ? 2 * cap : 16; \
    arr = rsan_realloc(arr, cap * sizeof(type)); \
  } \
  type *m_ = &arr[n++]; \
  memset(m_, 0, sizeof *m_); \
  m_->addr = (addr_); \
  init; \
  return m_;

static lock_model *lock_find(uintptr_t addr, int create) {
  MODEL_FIND(lock_model, locks, nlocks, caplocks, addr, m_->owner = m_->last_writer = -1)
}
static barrier_model *barrier_find(uintptr_t addr, int create) {
  MODEL_FIND(barrier_model, barriers, nbarriers, capbarriers, addr, (void)0)
}
static once_model *once_find(uintptr_t addr, int create) {
  MODEL_FIND(once_model, onces, nonces, caponces, addr, m_->owner = -1)
}

/* enabledness of a pending operation blocked on a modelled primitive */
int rsan_sched_model_enabled(const sched_thread *s) {
  switch (s->block) {
  case RSAN_SB_MUTEX: {
    const lock_model *l = lock_find(s->addr, 0);
    return !l || l->owner < 0 || l->owner == s->tid;
  }
  case RSAN_SB_RDLOCK: {
    const lock_model *l = lock_find(s->addr, 0);
    return !l || l->owner < 0;
  }
  case RSAN_SB_WRLOCK: {
    const lock_model *l = lock_find(s->addr, 0);
    return !l || (l->owner < 0 && l->readers == 0);
  }
  case RSAN_SB_SEM: {
    int v = 0;
    return sem_getvalue((sem_t *)s->addr, &v) != 0 || v > 0;
  }
  case RSAN_SB_ONCE: {
    const once_model *o = once_find(s->addr, 0);
    return !o || o->state != 1 || o->owner == s->tid;
  }
  case SB_BARRIER: {
    const barrier_model *b = barrier_find(s->addr, 0);
    return !b || b->round > s->barrier_round;
  }
  }
  return 1;
}

/* ---- locks ---- */
void rsan_sched_lock_acquired(const void *addr, int write) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : slot_of(rsan_thread_current());
  uint64_t handoffs = 0;
  if (s) {
    lock_model *l = lock_find((uintptr_t)addr, 1);
    if (write) {
      l->owner = s->tid;
      l->count++;
      if (l->last_writer != s->tid) l->last_writer = s->tid, l->handoffs++;
    } else {
      l->readers++;
    }
    handoffs = l->handoffs;
  }
  rsan_spin_unlock(&rsan_sched.lock);
  /* An acquisition reads what the lock protects as the last writer left it: while no other
   * thread has taken the lock for writing since, a thread that takes it again reads the same
   * state (in a race-free program every access to that state is under the lock), so it is
   * noted as a read of the lock's word whose result is the count of hand-offs. Three such
   * re-reads make a polling loop (`lock; r = ready; unlock; if (r) break;`, with or without
   * sched_yield) yield until another thread writes the word (its lock or unlock) instead of
   * spinning to max_steps; its plain read alone is invisible to the yield rule
   * (docs/scheduling.md "Enabledness beyond the protocol text"). A yielding thread is still run when no
   * other can run and is a choice of an exploration's reversals, so this orders a schedule's
   * turns and drops no class. */
  if (s) rsan_sched_note_access(addr, handoffs, 0);
}

void rsan_sched_lock_released(const void *addr) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : slot_of(rsan_thread_current());
  lock_model *l = s ? lock_find((uintptr_t)addr, 0) : NULL;
  if (l) {
    if (l->owner == s->tid) {
      if (--l->count <= 0) l->owner = -1, l->count = 0;
    } else if (l->readers > 0) {
      l->readers--;
    }
  }
  rsan_spin_unlock(&rsan_sched.lock);
}

/* ---- condition variables ---- */
int rsan_sched_cond_wait(const void *c, int timed) {
  if (!rsan_sched_on) return 1;
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : rsan_sched_self_locked();
  if (!s) {
    rsan_spin_unlock(&rsan_sched.lock);
    return 1;
  }
  s->cond = (uintptr_t)c;
  s->cond_seq = ++cond_seq;
  s->signalled = 0;
  s->joinee = NULL;
  rsan_sched_set_pending(s, RSAN_SK_WAIT, c, 0, SB_COND, timed);
  int ok = rsan_sched_arrive_or_decide(s);
  s->cond = 0;
  return ok;
}

void rsan_sched_cond_signal(const void *c, int all) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&rsan_sched.lock);
  if (!rsan_sched.finished) {
    sched_thread *oldest = NULL;
    for (int i = 0; i < rsan_sched.nthreads_max; i++) {
      sched_thread *s = rsan_sched.threads[i];
      if (!s || s->state != ST_LIVE || s->cond != (uintptr_t)c || s->signalled) continue;
      if (all) s->signalled = 1;
      else if (!oldest || s->cond_seq < oldest->cond_seq) oldest = s;
    }
    if (oldest) oldest->signalled = 1;
  }
  rsan_spin_unlock(&rsan_sched.lock);
}

/* pthread_cancel of t (intercept_thread.c): a thread the scheduler keeps in a condition wait
 * (never in the real one, a cancellation point) is woken as by a spurious wakeup, so that it
 * re-takes the mutex and acts on the cancellation (intercept_sync.c controlled_cond_wait). */
void rsan_sched_cancel(rsan_thread *t) {
  if (!rsan_sched_on || !t) return;
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = t->sched;
  if (!rsan_sched.finished && s && s->state == ST_LIVE && s->cond) s->signalled = 1;
  rsan_spin_unlock(&rsan_sched.lock);
}

/* ---- barriers ---- */
void rsan_sched_barrier_init(const void *b, unsigned count) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&rsan_sched.lock);
  barrier_model *m = barrier_find((uintptr_t)b, 1);
  m->count = count;
  m->arrived = 0;
  rsan_spin_unlock(&rsan_sched.lock);
}

int rsan_sched_barrier_wait(const void *b, unsigned fallback_count) {
  rsan_spin_lock(&rsan_sched.lock);
  if (rsan_sched.handed_over) { /* after the hand-over every arrival goes to the real barrier */
    rsan_spin_unlock(&rsan_sched.lock);
    return -1;
  }
  sched_thread *s = rsan_sched.finished ? NULL : rsan_sched_self_locked();
  barrier_model *m = barrier_find((uintptr_t)b, 1);
  if (!m->count) m->count = fallback_count ? fallback_count : 1;
  if (++m->arrived >= m->count) {
    m->arrived = 0;
    m->round++;
    rsan_spin_unlock(&rsan_sched.lock);
    return 1;
  }
  if (!s) {
    rsan_spin_unlock(&rsan_sched.lock);
    return 0;
  }
  s->barrier_round = m->round;
  s->joinee = NULL;
  rsan_sched_set_pending(s, RSAN_SK_WAIT, b, 0, SB_BARRIER, 0);
  rsan_sched_arrive_or_decide(s);
  if (rsan_sched.handed_over && m->round <= s->barrier_round) return -1; /* the real barrier, from now on */
  return 0;
}

/* ---- once ---- */
void rsan_sched_once_enter(const void *o) {
  if (!rsan_sched_on) return;
  rsan_sched_point_blocking(RSAN_SK_SYNC_ACQUIRE, o, 1, RSAN_SB_ONCE, 0);
  rsan_spin_lock(&rsan_sched.lock);
  sched_thread *s = rsan_sched.finished ? NULL : slot_of(rsan_thread_current());
  once_model *m = once_find((uintptr_t)o, 1);
  if (s && m->state == 0) {
    m->state = 1;
    m->owner = s->tid;
  }
  rsan_spin_unlock(&rsan_sched.lock);
}

void rsan_sched_once_done(const void *o) {
  if (!rsan_sched_on) return;
  rsan_spin_lock(&rsan_sched.lock);
  once_model *m = once_find((uintptr_t)o, 1);
  m->state = 2;
  rsan_spin_unlock(&rsan_sched.lock);
}
