/* The replay of one logged step of the F-order closure through the engine's own entry points,
 * acting as its thread (sched_closure.c has the whole design; sched_closure_search.c calls it). */
#include <string.h>

#include "rsan_engine.h"
#include "rsan_interface.h"
#include "rsan_sched_closure_internal.h"
#include "rsan_sched_internal.h"
#include "rsan_sync.h"

static uint64_t do_load(void *p, int size, int order, uint64_t site) {
  switch (size) {
  case 1: return __rsan_load_1(p, order, site);
  case 2: return __rsan_load_2(p, order, site);
  case 4: return __rsan_load_4(p, order, site);
  default: return __rsan_load_8(p, order, site);
  }
}
static void do_store(void *p, uint64_t v, int size, int order, uint64_t site) {
  switch (size) {
  case 1: __rsan_store_1(p, v, order, site); break;
  case 2: __rsan_store_2(p, v, order, site); break;
  case 4: __rsan_store_4(p, v, order, site); break;
  default: __rsan_store_8(p, v, order, site); break;
  }
}
static uint64_t do_xchg(void *p, uint64_t v, int size, int order, uint64_t site) {
  switch (size) {
  case 1: return __rsan_rmw_1(p, v, RSAN_RMW_XCHG, order, site);
  case 2: return __rsan_rmw_2(p, v, RSAN_RMW_XCHG, order, site);
  case 4: return __rsan_rmw_4(p, v, RSAN_RMW_XCHG, order, site);
  default: return __rsan_rmw_8(p, v, RSAN_RMW_XCHG, order, site);
  }
}
static rsan_cas_ret do_cas(void *p, uint64_t e, uint64_t d, int size, int succ, int fail, int weak,
                           uint64_t site) {
  switch (size) {
  case 1: return __rsan_cas_1(p, e, d, succ, fail, weak, site);
  case 2: return __rsan_cas_2(p, e, d, succ, fail, weak, site);
  case 4: return __rsan_cas_4(p, e, d, succ, fail, weak, site);
  default: return __rsan_cas_8(p, e, d, succ, fail, weak, site);
  }
}

/* atomic.c: one attempt of a wait (no declaration in a header: a test entry point) */
int __rsan_test_wait_once(void *p, uint64_t v, int32_t size, int32_t order, uint64_t site);

/* the successful attempt of a wait (block 1), spin load (2) or spin load until another value (3) */
static uint64_t do_wait(void *p, uint64_t v, int size, int order, int block, uint64_t site) {
  if (block == 1) {
    __rsan_test_wait_once(p, v, size, order, site);
    return v;
  }
  int ne = block == 3;
  switch (size) {
  case 1: return ne ? __rsan_spin_load_ne_1(p, v, order, site) : __rsan_spin_load_1(p, v, order, site);
  case 2: return ne ? __rsan_spin_load_ne_2(p, v, order, site) : __rsan_spin_load_2(p, v, order, site);
  case 4: return ne ? __rsan_spin_load_ne_4(p, v, order, site) : __rsan_spin_load_4(p, v, order, site);
  default: return ne ? __rsan_spin_load_ne_8(p, v, order, site) : __rsan_spin_load_8(p, v, order, site);
  }
}

/* One logged step, through the engine's entry points, as its thread. An RMW is replayed as
 * the exchange of the value it wrote (the rules of an RMW do not depend on its operation); a
 * CAS with the value it read as expected (it succeeds) or another (it fails). */
int rsan_closure_replay(const step *s, rsan_thread **rec, int nthreads) {
  rsan_thread *t = rec[s->tid];
  int why = 0;
  if (!t) return 3; /* a thread whose spawn the log does not hold */
  rsan_thread_set_current(t);
  void *p = (void *)s->at;
  uint64_t got = s->read;
  switch (s->ev) {
  case EV_NONE:
    if (s->kind == RSAN_SK_FENCE_SC) rsan_fence_sc_step(t); /* a fence of a seq_cst access */
    break;
  case EV_FENCE: __rsan_fence(s->order, 0, s->site); break;
  case EV_SYNC_ACQ: rsan_sync_acquire(t, p); break;
  case EV_SYNC_ACQ_LOAD: rsan_sync_acquire_load(t, p); break;
  case EV_SYNC_REL: rsan_sync_release(t, p); break;
  case EV_JOIN: rsan_thread_join(t, s->other >= 0 && s->other < nthreads ? rec[s->other] : NULL); break;
  case EV_SPAWN: /* the new thread's clocks from its creator's, as at pthread_create (thread.c) */
    if (s->other >= 0 && s->other < nthreads) rec[s->other] = rsan_thread_create(t);
    break;
  case EV_ACCESS:
    switch (s->op) {
    case RSAN_OP_LOAD: got = do_load(p, s->size, s->order, s->site); break;
    case RSAN_OP_STORE: do_store(p, s->written, s->size, s->order, s->site); break;
    case RSAN_OP_RMW: got = do_xchg(p, s->written, s->size, s->order, s->site); break;
    case RSAN_OP_WAIT: got = do_wait(p, s->wait_v, s->size, s->order, s->wait_block, s->site); break;
    default: { /* CAS */
      int ok = s->has_write;
      uint64_t e = ok ? s->read : s->read + 1;
      rsan_cas_ret r = do_cas(p, e, s->written, s->size, ok ? s->order : RSAN_SEQ_CST,
                              ok ? RSAN_RELAXED : s->order, s->op == RSAN_OP_CAS_WEAK, s->site);
      got = r.old;
      if ((int)r.ok != ok) why = 2;
    }
    }
    break;
  default: return 3;
  }
  uint64_t m = s->size >= 8 ? ~0ull : (1ull << (8 * s->size)) - 1;
  if (s->ev == EV_ACCESS && s->has_read && (got & m) != (s->read & m)) why = 2;
  return why;
}
