/* Thread state: the current thread (TLS), small thread ids (main = 0), the location clocks
 * Tc Tr Ta Tsc and their U variants (algorithm.md §2), the thread lifecycle of rsan_sync.h
 * (architecture.md "Decisions and pitfalls": child Tr := ⊥), the shadow call stack and the
 * last few accesses (for report suggestions). */
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rsan_explain.h"
#include "rsan_internal.h"
#include "rsan_race.h"
#include "rsan_sched_fence.h"

/* rsan_internal.h (rsan_thread_fast): the calling thread's state, valid while rsan_tls_epoch equals
 * the generation (tests: a reset invalidates every thread's TLS) */
__thread rsan_thread *rsan_tls_current;
__thread uint64_t rsan_tls_epoch;
uint64_t rsan_thread_generation = 1;
static int next_tid;
static rsan_spin all_lock;
static rsan_thread *all_threads;

static void thread_free_clocks(rsan_thread *t);

/* Thread slots (rsan_internal.h, docs/design/clocks.md): the index of a thread in every
 * vector clock. A new thread takes a slot its creator holds in free_slots when there is one:
 * the slot of a thread the creator (or a thread it joined) has joined. That is exact: the
 * creator's Tc and Tsc contain the old owner's last epoch, the new owner's epochs continue
 * after it, so "facts of slot s up to epoch e" still means one set of real facts for every
 * clock, whichever incarnation made them. Otherwise a new slot. */
static uint32_t next_slot;

uint32_t rsan_thread_slot_count(void) { return __atomic_load_n(&next_slot, __ATOMIC_RELAXED); }

/* The owners of each slot, in order, with the race epoch each started at (race reports name
 * the thread of an old shadow cell: rsan_thread_tid_at). Under all_lock. */
typedef struct owner {
  uint64_t start;
  int tid;
} owner;
typedef struct slot_owners {
  uint32_t n, cap;
  owner *v;
} slot_owners;
static slot_owners *owners;
static uint32_t owners_cap;

static void note_owner(uint32_t slot, uint64_t start, int tid) {
  rsan_spin_lock(&all_lock);
  if (slot >= owners_cap) {
    uint32_t cap = owners_cap ? 2 * owners_cap : 64;
    while (cap <= slot) cap *= 2;
    slot_owners *o = rsan_alloc(cap * sizeof *o);
    if (owners_cap) memcpy(o, owners, owners_cap * sizeof *o);
    rsan_free(owners);
    owners = o;
    owners_cap = cap;
  }
  slot_owners *so = &owners[slot];
  if (so->n == so->cap) {
    so->cap = so->cap ? 2 * so->cap : 2;
    so->v = rsan_realloc(so->v, so->cap * sizeof(owner));
  }
  so->v[so->n++] = (owner){start, tid};
  rsan_spin_unlock(&all_lock);
}

int rsan_thread_tid_at(uint32_t slot, uint64_t race_epoch) {
  int tid = -1;
  rsan_spin_lock(&all_lock);
  if (slot < owners_cap)
    for (uint32_t i = 0; i < owners[slot].n && owners[slot].v[i].start <= race_epoch; i++)
      tid = owners[slot].v[i].tid;
  rsan_spin_unlock(&all_lock);
  return tid;
}

static void push_free_slot(rsan_thread *t, uint32_t slot) {
  if (t->nfree_slots == t->cap_free_slots) {
    uint32_t cap = t->cap_free_slots ? 2 * t->cap_free_slots : 8;
    t->free_slots = rsan_realloc(t->free_slots, cap * sizeof(uint32_t));
    t->cap_free_slots = cap;
  }
  t->free_slots[t->nfree_slots++] = slot;
}

static rsan_thread *thread_alloc(rsan_thread *parent) {
  rsan_thread *t = rsan_alloc(sizeof(*t));
  t->tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED);
  rsan_clk_init(&t->Tr);
  rsan_clk_init(&t->Tc);
  rsan_clk_init(&t->Ta);
  rsan_clk_init(&t->Tsc);
  if (parent && parent->nfree_slots) {
    t->slot = parent->free_slots[--parent->nfree_slots];
    t->epoch = rsan_clk_at(&parent->Tc, t->slot); /* >= the old owner's last epoch */
    RSAN_ASSERT(t->epoch == rsan_clk_at(&parent->Tsc, t->slot));
  } else {
    t->slot = __atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED);
    t->epoch = 0;
  }
  t->parent_tid = -1;
  rsan_race_thread_init(t);
  if (!parent) note_owner(t->slot, t->race_epoch, t->tid);
  rsan_spin_lock(&all_lock);
  t->all_next = all_threads;
  all_threads = t;
  rsan_spin_unlock(&all_lock);
  return t;
}

rsan_thread *rsan_thread_new_root(void) {
  rsan_ensure_init();
  return thread_alloc(NULL);
}

void rsan_thread_set_current(rsan_thread *t) {
  rsan_tls_current = t;
  rsan_tls_epoch = __atomic_load_n(&rsan_thread_generation, __ATOMIC_RELAXED);
}

rsan_thread *rsan_thread_current(void) {
  rsan_thread *t = rsan_tls_current;
  if (RSAN_LIKELY(t && rsan_tls_epoch == __atomic_load_n(&rsan_thread_generation, __ATOMIC_RELAXED)))
    return t;
  t = rsan_thread_new_root();
  rsan_thread_set_current(t);
  return t;
}

int rsan_thread_tid(const rsan_thread *t) { return t ? t->tid : -1; }

rsan_thread *rsan_thread_peek_current(void) {
  rsan_thread *t = rsan_tls_current;
  return t && rsan_tls_epoch == __atomic_load_n(&rsan_thread_generation, __ATOMIC_RELAXED) ? t : NULL;
}

rsan_thread *rsan_thread_by_tid(int tid) {
  rsan_spin_lock(&all_lock);
  rsan_thread *t = all_threads;
  while (t && t->tid != tid) t = t->all_next;
  rsan_spin_unlock(&all_lock);
  return t;
}

/* rsan_race.h */
void rsan_thread_for_each(void (*fn)(rsan_thread *t, void *arg), void *arg) {
  rsan_spin_lock(&all_lock);
  for (rsan_thread *t = all_threads; t; t = t->all_next) fn(t, arg);
  rsan_spin_unlock(&all_lock);
}

int rsan_thread_next_tid(void) { return __atomic_load_n(&next_tid, __ATOMIC_RELAXED); }

/* architecture.md: child Tc := Ta := parent Tc, Tsc := parent Tsc (U likewise), Tr := ⊥. */
rsan_thread *rsan_thread_create(rsan_thread *parent) {
  rsan_ensure_init();
  rsan_thread *t = thread_alloc(parent);
  if (parent) {
    rsan_clk_assign(&t->Tsc, &parent->Tsc);
    rsan_clk_assign(&t->Ta, &parent->Tc);
    rsan_clk_assign(&t->Tc, &parent->Tc);
    /* own entries: the slot's epoch (for a reused slot the parent holds it already) */
    rsan_clk_set(&t->Tsc, t->slot, t->epoch);
    rsan_clk_set(&t->Ta, t->slot, t->epoch);
    rsan_clk_set(&t->Tc, t->slot, t->epoch);
    rsan_race_thread_create(parent, t);
    RSAN_EXPLAIN(rsan_explain_thread(parent, "spawn", t));
    note_owner(t->slot, t->race_epoch, t->tid);
    t->parent_tid = parent->tid;
    /* where the thread was created, for race reports: the creator's call stack above the
     * interceptor (whose frame is above this one) */
    t->ncreate = rsan_thread_stack(parent, (uintptr_t)__builtin_frame_address(0), t->create_stack,
                                   RSAN_CREATE_STACK);
  }
  rsan_thread_check_invariants(t);
  return t;
}

void rsan_thread_start(rsan_thread *child) {
  __atomic_store_n(&child->ktid, (int)syscall(SYS_gettid), __ATOMIC_RELAXED);
  rsan_thread_set_current(child);
}

void rsan_thread_finish(rsan_thread *t, const void *stack_lo, const void *stack_hi) {
  if (stack_lo && stack_hi > stack_lo)
    rsan_memory_retire(stack_lo, (size_t)((const char *)stack_hi - (const char *)stack_lo));
  if (t) __atomic_store_n(&t->finished, 1, __ATOMIC_RELEASE);
}

/* architecture.md: joiner Tc ⊔= joinee Tc, Ta ⊔= joinee Tc, Tsc ⊔= joinee Tsc (U likewise);
 * Tr unchanged. */
void rsan_thread_join(rsan_thread *joiner, rsan_thread *joinee) {
  if (!joiner || !joinee || joiner == joinee) return;
  /* each with its U twin; the higher clock first (rsan_internal.h, origin) */
  rsan_clk_join(&joiner->Tsc, &joinee->Tsc);
  rsan_clk_join(&joiner->Ta, &joinee->Tc);
  rsan_clk_join(&joiner->Tc, &joinee->Tc);
  rsan_race_thread_join(joiner, joinee); /* algorithm.md §5, join */
  RSAN_EXPLAIN(rsan_explain_thread(joiner, "join", joinee));
  rsan_thread_check_invariants(joiner);
  /* the joinee has exited and the joiner's clocks now hold its last epoch (and those of the
   * slots it could reuse): its children may take them (thread_alloc). Race detection still
   * indexes by tid, so this recycling is exact for it too. */
  if (!joinee->finished_slot) {
    joinee->finished_slot = 1;
    push_free_slot(joiner, joinee->slot);
    for (uint32_t i = 0; i < joinee->nfree_slots; i++) push_free_slot(joiner, joinee->free_slots[i]);
    joinee->nfree_slots = 0;
  }
  /* A thread is joined once, after it has fully exited: its clocks are no longer needed
   * (the small record stays, a joined thread's clocks read as ⊥). */
  thread_free_clocks(joinee);
}

#ifdef RSAN_DEBUG
void rsan_thread_check_invariants(const rsan_thread *t) {
  /* algorithm.md §3.4, pointwise on the vector clocks; the own entries hold the epoch */
  RSAN_ASSERT(rsan_clk_leq(&t->Tr, &t->Tc));
  RSAN_ASSERT(rsan_clk_leq(&t->Tc, &t->Ta));
  RSAN_ASSERT(rsan_clk_leq(&t->Ta, &t->Tsc));
  if (t->Tc.n) { /* (a joined thread's clocks are released) */
    RSAN_ASSERT(rsan_clk_at(&t->Tc, t->slot) == t->epoch);
    RSAN_ASSERT(rsan_clk_at(&t->Ta, t->slot) == t->epoch);
    RSAN_ASSERT(rsan_clk_at(&t->Tsc, t->slot) == t->epoch);
  }
}
#endif

static void thread_free_clocks(rsan_thread *t) {
  rsan_clk_release(&t->Tc);
  rsan_clk_release(&t->Tr);
  rsan_clk_release(&t->Ta);
  rsan_clk_release(&t->Tsc);
  rsan_thread_snaps_release(t); /* and the memos: the clocks are ⊥, they contain nothing now */
  rsan_fence_sc_forget(t);
  rsan_race_thread_free(t);
}

/* tests: t's epoch jumps by n, as if t had made n facts that no clock ever learnt (its own
 * entries follow; every fact made before keeps its epoch, so every clock contains the same
 * facts as before): a thread's epochs past 2^32 without 2^32 operations (clock widths,
 * docs/design/clocks.md §13) */
void rsan_thread_skip_epochs(rsan_thread *t, uint64_t n) {
  t->epoch += n;
  rsan_clk_set(&t->Tc, t->slot, t->epoch);
  rsan_clk_set(&t->Ta, t->slot, t->epoch);
  rsan_clk_set(&t->Tsc, t->slot, t->epoch);
  rsan_thread_check_invariants(t);
}

uint64_t rsan_thread_clock_get(const rsan_thread *t, int which, rsan_loc *l) {
  const rsan_clk *c[] = {&t->Tc, &t->Tr, &t->Ta, &t->Tsc};
  if (which < 0 || which > 7) return 0;
  rsan_q q;
  rsan_loc_query(l, c[which % 4], &q);
  return which < 4 ? q.hi : q.hiU;
}

void rsan_thread_reset_all(void) {
  rsan_spin_lock(&all_lock);
  rsan_thread *t = all_threads;
  all_threads = NULL;
  rsan_spin_unlock(&all_lock);
  while (t) {
    rsan_thread *next = t->all_next;
    thread_free_clocks(t);
    rsan_free(t->free_slots);
    rsan_free(t);
    t = next;
  }
  next_tid = 0;
  next_slot = 0;
  for (uint32_t i = 0; i < owners_cap; i++) rsan_free(owners[i].v);
  rsan_free(owners);
  owners = NULL;
  owners_cap = 0;
  __atomic_fetch_add(&rsan_thread_generation, 1, __ATOMIC_RELAXED);
  rsan_tls_current = NULL;
  rsan_race_floor_reset(); /* the floors of the old threads' slots */
}

/* ---- shadow call stack (rsan_interface.h) ----
 * Each entry records the frame address of __rsan_func_entry itself, which equals the frame
 * address of any runtime hook called from the same instrumented function. Frames skipped by
 * exceptions or longjmp are dropped at the next entry/exit by comparing addresses. */

RSAN_EXPORT RSAN_NOINLINE void __rsan_func_entry(uint64_t call_site) {
  uintptr_t fa = (uintptr_t)__builtin_frame_address(0);
  rsan_thread *t = rsan_thread_current();
  while (t->depth && t->shadow_frame[t->depth - 1] <= fa) t->depth--;
  if (t->depth == RSAN_SHADOW_MAX) {
    /* too deep: drop the outermost half, keep the innermost frames */
    memmove(&t->shadow_site[0], &t->shadow_site[RSAN_SHADOW_MAX / 2],
            (RSAN_SHADOW_MAX / 2) * sizeof(uint64_t));
    memmove(&t->shadow_frame[0], &t->shadow_frame[RSAN_SHADOW_MAX / 2],
            (RSAN_SHADOW_MAX / 2) * sizeof(uintptr_t));
    t->depth = RSAN_SHADOW_MAX / 2;
  }
  t->shadow_site[t->depth] = call_site;
  t->shadow_frame[t->depth] = fa;
  t->depth++;
}

RSAN_EXPORT RSAN_NOINLINE void __rsan_func_exit(void) {
  uintptr_t fa = (uintptr_t)__builtin_frame_address(0);
  rsan_thread *t = rsan_thread_current();
  while (t->depth && t->shadow_frame[t->depth - 1] < fa) t->depth--;
  if (t->depth && t->shadow_frame[t->depth - 1] == fa) t->depth--;
}

uint32_t rsan_thread_stack(const rsan_thread *t, uintptr_t hook_frame, uint64_t *out, uint32_t max) {
  uint32_t n = 0;
  for (uint32_t i = t->depth; i > 0 && n < max; i--) {
    if (t->shadow_frame[i - 1] <= hook_frame) continue; /* stale: at or below the hook's caller */
    out[n++] = t->shadow_site[i - 1];
  }
  return n;
}

void rsan_thread_note_access(rsan_thread *t, uint64_t site, const rsan_loc *l, int op, int rmw_op, int size) {
  rsan_thread_note_access_i(t, site, l, op, rmw_op, size);
}

/* fork (rsan_fork.h) */
/* (and the clocks' lock, vclock.c, which a thread growing its clock may hold at the fork) */
void rsan_thread_fork_lock(void) {
  rsan_spin_lock(&all_lock);
  rsan_vc_read_lock();
}
void rsan_thread_fork_unlock(void) {
  rsan_vc_read_unlock();
  rsan_spin_unlock(&all_lock);
}
