/* Clean SC fences (sched_fence.c, docs/scheduling.md "SC fences: when two commute"). */
#ifndef RSAN_SCHED_FENCE_H
#define RSAN_SCHED_FENCE_H

#include "rsan_internal.h"

/* at the end of every SC fence (rules.c): Fa := Ta, Fsc := Tsc */
void rsan_fence_sc_done(rsan_thread *t);
/* 1 when t's next SC fence would be clean: Ta ⊑ Fa and Tsc ⊑ Fsc (an SC fence ran before) */
int rsan_fence_sc_clean(const rsan_thread *t);
/* the thread record goes away (thread.c) */
void rsan_fence_sc_forget(rsan_thread *t);

#endif /* RSAN_SCHED_FENCE_H */
