/* rsan_sync.h: the synchronisation primitives the interceptors see, modelled in the clocks
 * (architecture.md "Decisions and pitfalls": acquire RMW / release store, checks off). */
#include "rsan_engine.h"
#include "rsan_explain.h"

/* ---- rsan_sync.h: primitives modelled as acquire RMW / release store, checks off ---- */
void rsan_sync_acquire(rsan_thread *t, const void *addr) {
  rsan_ensure_init();
  if (!t) t = rsan_thread_current();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)addr);
  l->nocheck = 1;
  uint64_t ts = ++l->stamp;
  rsan_sc_write(t, l, ts, 0);
  rsan_hb_rmw(t, l, RSAN_ACQUIRE, ts);
  rsan_race_rmw(t, l, RSAN_ACQUIRE);
  RSAN_EXPLAIN(rsan_explain_sync(t, "acquire", l->addr));
  rsan_loc_check_invariants(l);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
}

void rsan_sync_acquire_load(rsan_thread *t, const void *addr) {
  rsan_ensure_init();
  if (!t) t = rsan_thread_current();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)addr);
  l->nocheck = 1;
  rsan_sc_load(t, l);
  rsan_hb_load(t, l, RSAN_ACQUIRE);
  rsan_race_load(t, l, RSAN_ACQUIRE);
  RSAN_EXPLAIN(rsan_explain_sync(t, "acquire_load", l->addr));
  rsan_loc_check_invariants(l);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
}

void rsan_sync_release(rsan_thread *t, const void *addr) {
  rsan_ensure_init();
  if (!t) t = rsan_thread_current();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)addr);
  l->nocheck = 1;
  uint64_t ts = ++l->stamp, tU = ++l->stampU;
  rsan_sc_write(t, l, ts, tU);
  rsan_hb_store(t, l, RSAN_RELEASE, ts, tU);
  rsan_race_store(t, l, RSAN_RELEASE);
  RSAN_EXPLAIN(rsan_explain_sync(t, "release", l->addr));
  rsan_loc_check_invariants(l);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
}
