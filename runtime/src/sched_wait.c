/* Waits enabled by memory (docs/design/exploration.md §23, docs/scheduling.md "Waits enabled by
 * memory"). Under sched=dfs a wait attempt (pyrsan_wait's retries, a recognised spin load
 * `while (load(&y) != 0);`) is its thread's pending operation only while memory holds a value
 * that lets it through: a failed attempt writes nothing and makes no event, so it is no step of
 * the exploration, and the wait is one step, the successful read. A store of a value that keeps
 * it waiting disables it, as a lock acquisition is disabled while the lock is held.
 *
 * Memory is read by the waiting thread itself when it arrives at the point, and again only after
 * another thread's step that may have written the word (wake_waiters marks the waiter stale; the
 * next look, at a later decision, reads it): a thread never reads a word nothing wrote since it
 * last read it, as in the attempts it replaces. */
#include "rsan_engine.h"
#include "rsan_sched_internal.h"

static int condition_holds(const sched_thread *s) {
  uint64_t got = mem_load((const void *)s->addr, s->wv_size);
  return ((got & s->wv_m) == s->wv_v) != s->wv_ne;
}

int rsan_sched_wait_holds(sched_thread *s) {
  if (s->wv_stale) {
    s->wv_holds = condition_holds(s);
    s->wv_stale = 0;
  }
  return s->wv_holds;
}

void rsan_sched_wait_point(const void *addr, uint64_t v, uint64_t m, int size, int ne) {
  sched_thread *s = NULL;
  if (rsan_sched_flag.sched_wait_value && rsan_sched_dfs() && !rsan_sched_test_hook) {
    rsan_spin_lock(&rsan_sched.lock);
    s = rsan_sched.finished ? NULL : slot_of(rsan_thread_current());
    if (s && s->state != ST_EXITED) { /* a new thread's first point too */
      s->addr = (uintptr_t)addr; /* the word condition_holds reads (rsan_sched_set_pending sets it too) */
      s->wv_v = v;
      s->wv_m = m;
      s->wv_size = size;
      s->wv_ne = ne;
      s->wv_stale = 1; /* read now, by the thread that waits */
      s->retry = 0;    /* a failed attempt's retry flag: the condition says more */
      rsan_sched_wait_holds(s);
    } else {
      s = NULL;
    }
    rsan_spin_unlock(&rsan_sched.lock);
  }
  /* not exploring, or a thread that is not (yet) managed: every attempt is a step */
  if (!s) rsan_sched_point(RSAN_SK_WAIT, addr, 0);
  else rsan_sched_point_blocking(RSAN_SK_WAIT, addr, 0, SB_VALUE, 0);
}
