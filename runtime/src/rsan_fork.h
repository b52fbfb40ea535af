/* fork: the lock-all / unlock-all functions of each runtime file, called by intercept_fork.c
 * from one pthread_atfork handler in this fixed order (the order in which the runtime nests
 * its locks: outer first), and released in the reverse order in the parent and the child.
 *   init -> interceptors (thread map, acq_rel stripes) -> locations (buckets, locations, free
 *   list, F) -> report -> threads -> sites -> heap -> shadow directory -> history stack pool
 * A new runtime lock must be added here, at its place in that order. */
#ifndef RSAN_FORK_H
#define RSAN_FORK_H

void rsan_init_fork_lock(void);
void rsan_init_fork_unlock(void);
void rsan_icpt_fork_lock(void); /* intercept_common.c */
void rsan_icpt_fork_unlock(void);
void rsan_loc_fork_lock(void);
void rsan_loc_fork_unlock(void);
void rsan_thread_fork_lock(void);
void rsan_thread_fork_unlock(void);
void rsan_sites_fork_lock(void);
void rsan_sites_fork_unlock(void);
void rsan_heap_fork_lock(void);
void rsan_heap_fork_unlock(void);
void rsan_shadow_fork_lock(void);
void rsan_shadow_fork_unlock(void);
/* report.c: the report lock; in the child, the report state starts afresh (no reports, no
 * deduplication history, json/log files reopened for the child's pid). */
void rsan_report_fork_lock(void);
void rsan_report_fork_unlock(int child);
/* history.c: the stack pool (taken under a location lock or the report lock, nothing under it) */
void rsan_hist_fork_lock(void);
void rsan_hist_fork_unlock(void);

#endif /* RSAN_FORK_H */
