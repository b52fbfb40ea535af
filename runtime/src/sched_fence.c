/* Clean SC fences (docs/scheduling.md "SC fences: when two commute"): an SC fence of thread
 * A is clean when A's Ta and Tsc (each fused with its U twin) hold nothing they did not hold
 * right after A's previous SC fence. That fence left Ta = Tc ⊑ W(F) and Tsc ⊑ Msc(F), and
 * F's clocks only grow, so a clean fence moves nothing into F: it only reads F. Two clean
 * fences of different threads therefore commute in every state. The label depends on A's
 * clocks alone (nothing another thread does changes them while the fence is pending), so it
 * is a property of the operation, as the explorer's relation needs. */
#include "rsan_internal.h"
#include "rsan_sched.h"
#include "rsan_sched_fence.h"

/* rules.c, at the end of every SC fence: remember what it left in the thread's clocks. Only
 * when a controlled scheduler or a test reads the labels (two O(threads) copies). */
void rsan_fence_sc_done(rsan_thread *t) {
  if (!__atomic_load_n(&rsan_sched_on, __ATOMIC_RELAXED) && !rsan_test_mode) return;
  rsan_clk_assign(&t->Fa, &t->Ta);
  rsan_clk_assign(&t->Fsc, &t->Tsc);
}

/* a ⊑ b, where b is a copy a held earlier (equal versions: equal contents) */
static int unchanged(const rsan_clk *a, const rsan_clk *b) { return a->ver == b->ver || rsan_clk_leq(a, b); }

int rsan_fence_sc_clean(const rsan_thread *t) {
  if (!t->Fsc.ver) return 0; /* no SC fence yet */
  return unchanged(&t->Ta, &t->Fa) && unchanged(&t->Tsc, &t->Fsc);
}

void rsan_fence_sc_forget(rsan_thread *t) {
  rsan_clk_release(&t->Fa);
  rsan_clk_release(&t->Fsc);
}

/* rsan_test.h */
RSAN_EXPORT int __rsan_test_fence_sc_clean(const rsan_thread *t) { return rsan_fence_sc_clean(t); }
