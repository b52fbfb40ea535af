/* The location records' memory (location_slab.c), for location.c: records of a size class
 * from slabs, freed records back to them, slabs of free records given back to the system
 * (docs/design/clocks.md §25). Part of the location table: included by location.c and
 * location_slab.c only, after rsan_internal.h. */
#ifndef RSAN_LOC_SLAB_H
#define RSAN_LOC_SLAB_H

/* a free record of class cls: its class, fcap RSAN_FACTS and retired set, not locked (its
 * lock may be held by a stale reader: the caller takes it), its other fields as they were
 * cleared, or zero (a new or released slab's) */
rsan_loc *rsan_lslab_take(unsigned cls);
/* a retired, cleared record (its lock not held) back to its slab; may give the slab's pages
 * back to the system. Called under a stripe lock (so never while fork holds every lock). */
void rsan_lslab_put(rsan_loc *l);
/* every record of a slab not released, passed to fn under its lock (census) */
void rsan_lslab_for_each_made(void (*fn)(rsan_loc *l, void *arg), void *arg);
/* every record of a slab not released, without locks (the test reset) */
void rsan_lslab_walk(void (*fn)(rsan_loc *l));
void rsan_lslab_reset_all(void); /* every slab and region gone (the test reset, after walk) */
void rsan_lslab_fork_lock(void); /* every record's lock, then the slabs' lock */
void rsan_lslab_fork_unlock(void);
uint64_t rsan_lslab_made(unsigned cls); /* records of class cls in slabs not released */
void rsan_lslab_print_census(void);     /* verbosity >= 1: one line */

#endif
