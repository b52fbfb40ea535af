/* The explain log (option explain_path; docs/interfaces.md "Explain log"): the events of the
 * run, in the order the runtime performed them, for `pyrsan explain` to rebuild the execution
 * graph that shows a report (po, rf, mo, fr, hb). Off by default; every hook is one
 * predictable branch on rsan_explain_on, so a run without the option pays nothing else.
 *
 * Order. An atomic access is logged while its location lock is held, so the log order is the
 * location's mo and rf order; a thread logs its own events in program order. The log is thus
 * an SC run of the events it holds (exact under the controlled schedulers, which run one
 * thread at a time). Plain accesses are logged once per (site, kind) between two other
 * events of the thread: their position relative to synchronisation is what an explanation
 * needs, not every iteration of a loop. */
#ifndef RSAN_EXPLAIN_H
#define RSAN_EXPLAIN_H

#include <stdint.h>

#include "rsan_internal.h"

extern int rsan_explain_on __attribute__((visibility("hidden"))); /* (rsan_internal.h RSAN_HIDDEN) */

#define RSAN_EXPLAIN(call) \
  do { \
    if (__builtin_expect(rsan_explain_on, 0)) call; \
  } while (0)

/* start-up (init.c): opens explain_path when set */
void rsan_explain_init(void);
/* An atomic access by t at l (its lock held): op an enum rsan_opkind (rmw_op for RMW);
 * has_read / has_write: what it read (the value) and wrote (the value). */
void rsan_explain_access(const rsan_thread *t, const rsan_loc *l, int op, int rmw_op, int order, int size,
                         int has_read, uint64_t read, int has_write, uint64_t written, uint64_t site);
void rsan_explain_fence(const rsan_thread *t, int order, uint64_t site);
/* a synchronisation primitive modelled as an acquire RMW, acquire load or release store
 * (sync.c): kind "acquire", "acquire_load", "release" */
void rsan_explain_sync(const rsan_thread *t, const char *kind, uintptr_t addr);
/* thread creation (kind "spawn") and join ("join"): other is the child / joinee */
void rsan_explain_thread(const rsan_thread *t, const char *kind, const rsan_thread *other);
/* a plain (non-atomic) access checked by the race detector */
void rsan_explain_plain(const rsan_thread *t, uintptr_t addr, uint64_t size, int is_write, uint64_t site);
/* free() / delete of the block [p, p + n) by the current thread (intercept_malloc.c) */
void rsan_explain_free(const void *p, size_t n);
/* a published report (its JSON key is a/b/type), right after the access that raised it */
void rsan_explain_report(int tid, uint64_t a, uint64_t b, const char *type);

#endif /* RSAN_EXPLAIN_H */
