/* The coarse order's causality, for blocked iterations under the F-order closure
 * (sched_closure_hb.c; docs/design/exploration.md §11). */
#ifndef RSAN_SCHED_CLOSURE_HB_H
#define RSAN_SCHED_CLOSURE_HB_H

#include "rsan_sched_internal.h"

/* decide(): the step chosen (after sched_await.c has looked at it), under the scheduler lock */
void rsan_closure_hb_step(const sched_thread *c);
/* c's pending load of an await iteration: 1 when Wsc(x) ⊑ Tsc(c) before it may fail in some
 * interleaving of the run's coarse class (the load's write is not known to come before the
 * thread's previous step in the coarse order), 0 when it holds in all of them */
int rsan_closure_hb_imports(const sched_thread *c);

#endif /* RSAN_SCHED_CLOSURE_HB_H */
