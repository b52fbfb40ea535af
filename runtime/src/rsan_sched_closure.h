/* The F-order closure of a run (sched_closure.c; docs/design/exploration.md §2). */
#ifndef RSAN_SCHED_CLOSURE_H
#define RSAN_SCHED_CLOSURE_H

#include <stddef.h>
#include <stdint.h>

#include "rsan_internal.h"

/* 1 while the run logs its steps for the closure (after its first SC fence step) */
extern int rsan_closure_logging;

/* the engine events of the step being run (explain.c's hooks call them first) */
void rsan_closure_note_access(const rsan_thread *t, const rsan_loc *l, int op, int rmw_op, int order,
                              int size, int has_read, uint64_t read, int has_write, uint64_t written,
                              uint64_t site);
void rsan_closure_note_fence(const rsan_thread *t, int order, uint64_t site);
void rsan_closure_note_sync(const rsan_thread *t, const char *kind, uintptr_t addr);
/* atomic.c op_wait's entry (only while rsan_closure_logging): the value and mode of the wait */
void rsan_closure_note_wait(const rsan_thread *t, uint64_t v, int block);
void rsan_closure_note_thread(const rsan_thread *t, const char *kind, const rsan_thread *other);

#endif /* RSAN_SCHED_CLOSURE_H */
