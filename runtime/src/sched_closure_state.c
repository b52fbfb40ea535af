/* A closure state saved and restored in the search process (sched_closure_search.c), instead
 * of a fork per branching state: a fork costs 250-450 us on this kind of machine whatever the
 * process's size (benchmarks/README.md "Session 11"), a copy of the records a few us.
 *
 * What a replayed step can change (sched_closure_replay.c: the engine's entry points acting as
 * the logged threads) is: the records of those threads, the records of the locations the log
 * accesses and of F, the program's memory at those locations, and the report machinery. A
 * state holds a copy of each of these that changed since the save (below: the undo log), and a
 * restore writes them back, so the engine sees exactly the records a fork would have kept. The
 * copy is of the records' bytes plus what they own:
 * - a clock's array (location clocks of more than one slot, thread clocks of more than six):
 *   copied, and restored into a new array (the engine may free or grow the one in use);
 * - a shared location clock's snapshot and a thread's last snapshots (rsan_snap, immutable,
 *   reference-counted): the state holds a reference, the restored record one of its own (a
 *   thread's: its biased claim, clock.c rsan_thread_snaps_claim);
 * - a thread's export states (docs/design/clocks.md §16): restored with its clocks, which they
 *   describe; a lineage's later snapshots are remade with the same numbers, which only the
 *   restored records can hold; its memos are emptied instead (THREAD_BYTES below);
 * - a location's write history, its grown fact window and its evicted-facts table, a thread's
 *   free slots: copied, restored into new blocks;
 * - the race detector's clocks (a thread's C, R, A, a location's S), the records' locks and
 *   table links are left as they are: the search makes no race report and links no record.
 * The resources of the record being overwritten are released as the engine would (clock.c
 * rsan_clk_release and the blocks' rsan_free). Reports: the dedup table is emptied at each
 * restore (rsan_report_reset), so a report the state's future makes is counted again, as in a
 * fork whose parent had not made it (a superset of the fork's reports: each is re-run).
 *
 * Preconditions, checked by the caller: every location the log touches has its record (made
 * at the search's root) and no thread is created after the root (a spawn makes a record and a
 * slot that a restore would not take back): sched_closure_search.c forks otherwise. */
#include <stddef.h>
#include <string.h>

#include "rsan_engine.h"
#include "rsan_sched_closure_state.h"

typedef struct saved_clk {
  rsan_clk c;
  void *ext; /* a copy of the array, when the clock has one (not shared) */
  size_t ext_bytes;
} saved_clk;

/* The copy of a thread record: its bytes last, and allocated only up to THREAD_BYTES of them
 * (below: no byte past it is copied, written back or read), unzeroed, so that a copy faults in
 * the pages its copied spans lie on and no more (saved_thread_alloc). */
typedef struct saved_thread {
  rsan_thread *t;
  struct saved_thread *next; /* the free list (th_pool) */
  saved_clk clk[6];          /* Tc, Tr, Ta, Tsc, Fa, Fsc */
  uint32_t *free_slots;
  rsan_thread bytes; /* only its first THREAD_BYTES exist */
} saved_thread;

typedef struct saved_loc {
  rsan_loc *l;
  struct saved_loc *next; /* the free list (loc_pool) */
  rsan_loc bytes;
  saved_clk clk[3]; /* W, Wsc, Msc */
  rsan_hist *hist;
  size_t hist_n;
  rsan_fact *facts;
  void *ev;
  size_t ev_bytes;
  uint64_t mem; /* the program's memory at the location (size bytes) */
  int size;
} saved_loc;

/* A thread record is copied up to its memos (6 KiB of its 9.6): a memo only remembers that a
 * shared snapshot is contained in one of its clocks, and the restore empties them
 * (rsan_thread_snaps_release) instead of writing back the saved ones. An empty memo is always
 * true, and a join without it is the whole join, with the same entries and version (clock.c
 * join_whole), so the engine sees the same clocks, only without the shortcut. */
#define THREAD_BYTES offsetof(rsan_thread, memo_used) /* memo_used too: released, 0 */
/* Of those bytes, two spans are neither copied nor written back:
 * - the shadow call stack (depth, shadow_site, shadow_frame): only __rsan_func_entry/exit
 *   change it, from the program's instrumented code, and the search runs none (it replays the
 *   log through the engine's entry points from runtime code): its value at a restore is its
 *   value at the save;
 * - the race detector's call stacks of recent plain-access sites (site_stack): read only by a
 *   race report, and the search makes none (like the race detector's clocks, left as they are);
 *   and the history key cache (hkc): a hit must match the whole key, and the pool's keys are
 *   never forgotten, so a cache entry of a later write is as right as the saved one. */
#define TH_SKIP1 offsetof(rsan_thread, depth)
#define TH_KEEP1 offsetof(rsan_thread, recent_next)
#define TH_SKIP2 offsetof(rsan_thread, site_stack)
#define TH_KEEP2 offsetof(rsan_thread, parent_tid)
_Static_assert(TH_SKIP1 < offsetof(rsan_thread, shadow_site) &&
                   offsetof(rsan_thread, shadow_frame) < TH_KEEP1 && TH_KEEP1 <= TH_SKIP2 &&
                   TH_SKIP2 < TH_KEEP2 && TH_KEEP2 < THREAD_BYTES,
               "rsan_thread's layout: the skipped spans hold only the shadow stack, site_stack and hkc");
_Static_assert(offsetof(rsan_thread, snap_sc) + sizeof(rsan_snap *) <= TH_SKIP1,
               "thread_drop reads the saved snapshots among the copied bytes");
/* Nor the six clocks (Tc, Tr, Ta, Tsc, Fa, Fsc, one span): each is saved in the copy's clk[] and
 * restored into the record's clock in use (clk_restore), so their bytes among the copy's would be
 * written at the save and overwritten at the restore, never read. */
#define TH_CLK0 offsetof(rsan_thread, Tc)
#define TH_CLK1 offsetof(rsan_thread, snap_c)
_Static_assert(offsetof(rsan_thread, Tr) == TH_CLK0 + sizeof(rsan_clk) &&
                   offsetof(rsan_thread, Ta) == TH_CLK0 + 2 * sizeof(rsan_clk) &&
                   offsetof(rsan_thread, Tsc) == TH_CLK0 + 3 * sizeof(rsan_clk) &&
                   offsetof(rsan_thread, Fa) == TH_CLK0 + 4 * sizeof(rsan_clk) &&
                   offsetof(rsan_thread, Fsc) == TH_CLK0 + 5 * sizeof(rsan_clk) &&
                   TH_CLK1 == TH_CLK0 + 6 * sizeof(rsan_clk) && TH_CLK1 < TH_SKIP1,
               "rsan_thread's layout: the six clocks thread_save saves lie together, before the snapshots");
static void thread_bytes(void *dst, const void *src) {
  memcpy(dst, src, TH_CLK0);
  memcpy((char *)dst + TH_CLK1, (const char *)src + TH_CLK1, TH_SKIP1 - TH_CLK1);
  memcpy((char *)dst + TH_KEEP1, (const char *)src + TH_KEEP1, TH_SKIP2 - TH_KEEP1);
  memcpy((char *)dst + TH_KEEP2, (const char *)src + TH_KEEP2, THREAD_BYTES - TH_KEEP2);
}

/* States nest (the search's branching states, innermost on top) and are saved lazily, as an
 * undo log: a save copies nothing; the first time a step may change a record after the save
 * (rsan_cstate_touch, before the step), the record is copied into the innermost state, whose
 * value it still has. So a state holds exactly the records changed since its save (or its last
 * restore, which writes back these and keeps them), a restore writes back those, and when a
 * state ends its copies pass to the state below it for the records that one does not hold yet
 * (their value at the inner save was their value at the outer one: untouched in between); the
 * others are dropped. A copy is an entry of its own, so passing it on moves a pointer. */
typedef struct rsan_cstate rsan_cstate;
struct rsan_cstate {
  int nt, nl, cap_t, cap_l;
  rsan_cstate *below; /* the enclosing state (the stack), or the free list (pool) */
  rsan_thread *const *threads;
  rsan_loc *const *locs;
  const int *sizes;
  saved_thread **th; /* [i]: the copy of threads[i], NULL while not changed since the save */
  saved_loc **loc;
};

static rsan_cstate *pool, *top;   /* states freed (arrays kept); the innermost live state */
static saved_thread *th_pool; /* entries freed */
static saved_loc *loc_pool;
static int track_nt, track_nl;

void rsan_cstate_track(int nt, int nl) {
  track_nt = nt;
  track_nl = nl;
}

static void snap_hold(rsan_snap *p) {
  if (p) __atomic_fetch_add(&p->refs, 1, __ATOMIC_RELAXED);
}
static void snap_drop(rsan_snap *p) {
  if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) rsan_snap_free(p);
}

static void *dup(const void *p, size_t n) {
  if (!p || !n) return NULL;
  void *q = rsan_alloc_raw(n);
  memcpy(q, p, n);
  return q;
}

static size_t clk_ext_bytes(const rsan_clk *c) {
  if (c->cap <= RSAN_CLK_INLINE || rsan_clk_shared(c)) return 0;
  return (size_t)c->cap * (rsan_clk_narrow(c) ? sizeof(uint32_t) : sizeof(uint64_t));
}

static void clk_save(saved_clk *s, const rsan_clk *c) {
  memcpy(&s->c, c, sizeof *c);
  s->ext_bytes = clk_ext_bytes(c);
  s->ext = s->ext_bytes ? dup(c->u.x.ext, s->ext_bytes) : NULL;
  if (rsan_clk_shared(c)) snap_hold(c->u.s.snap);
}

static void clk_restore(rsan_clk *c, const saved_clk *s) {
  if (c->ver == s->c.ver && c->n == s->c.n && c->cap == s->c.cap && !rsan_clk_shared(c))
    return; /* unchanged */
  if (s->ext_bytes && c->cap == s->c.cap && clk_ext_bytes(c) == s->ext_bytes &&
      rsan_clk_narrow(c) == rsan_clk_narrow(&s->c)) { /* the array in use, of the same shape */
    void *e = c->u.x.ext;
    memcpy(e, s->ext, s->ext_bytes);
    memcpy(c, &s->c, sizeof *c);
    c->u.x.ext = e;
    return;
  }
  rsan_clk_release(c);
  memcpy(c, &s->c, sizeof *c);
  if (s->ext_bytes) c->u.x.ext = dup(s->ext, s->ext_bytes);
  if (rsan_clk_shared(c)) snap_hold(c->u.s.snap);
}

static void clk_free(saved_clk *s) {
  rsan_free(s->ext);
  if (rsan_clk_shared(&s->c)) snap_drop(s->c.u.s.snap);
}

static rsan_clk *thread_clk(rsan_thread *t, int k) {
  rsan_clk *c[6] = {&t->Tc, &t->Tr, &t->Ta, &t->Tsc, &t->Fa, &t->Fsc};
  return c[k];
}
static rsan_clk *loc_clk(rsan_loc *l, int k) {
  rsan_clk *c[3] = {&l->W, &l->Wsc, &l->Msc};
  return c[k];
}

/* the size of a location's evicted-facts table (rsan_location.h, narrow or wide) */
static size_t ev_bytes(const rsan_loc *l) { return rsan_loc_ev_bytes(l); }

static uint64_t mem_get(uintptr_t a, int size) {
  uint64_t v = 0;
  memcpy(&v, (const void *)a, (size_t)size);
  return v;
}

static void thread_save(saved_thread *st, rsan_thread *t) {
  st->t = t;
  thread_bytes(&st->bytes, t);
  for (int k = 0; k < 6; k++) clk_save(&st->clk[k], thread_clk(t, k));
  snap_hold(t->snap_c);
  snap_hold(t->snap_r);
  snap_hold(t->snap_sc);
  st->free_slots = dup(t->free_slots, (size_t)t->cap_free_slots * sizeof(uint32_t));
}

static void loc_save(saved_loc *sl, rsan_loc *l, int size) {
  sl->l = l;
  memcpy(&sl->bytes, l, sizeof *l);
  for (int k = 0; k < 3; k++) clk_save(&sl->clk[k], loc_clk(l, k));
  sl->hist_n = l->hist ? (size_t)rsan_hist_len(l) : 0;
  sl->hist = dup(l->hist, sl->hist_n * sizeof(rsan_hist));
  sl->facts = l->fcap > RSAN_FACTS ? dup(l->facts_ext, (size_t)l->fcap * sizeof(rsan_fact)) : NULL;
  sl->ev_bytes = ev_bytes(l);
  sl->ev = dup(l->ev, sl->ev_bytes);
  sl->size = size;
  sl->mem = size ? mem_get(l->addr, size) : 0;
}

static void thread_restore(const saved_thread *st) {
  rsan_thread *t = st->t;
  rsan_thread_snaps_release(t);
  rsan_free(t->free_slots);
  /* kept: the clocks (thread_bytes leaves them; restored one by one below), the race
   * detector's clocks, the thread list's link, the scheduler's slot */
  rsan_vc C = t->C, R = t->R, A = t->A;
  uint64_t race_epoch = t->race_epoch, race_cur = t->race_cur;
  rsan_thread *all_next = t->all_next;
  void *sched = t->sched;
  thread_bytes(t, &st->bytes); /* the memos stay as released: empty */
  t->C = C, t->R = R, t->A = A;
  t->race_epoch = race_epoch, t->race_cur = race_cur;
  t->all_next = all_next;
  t->sched = sched;
  for (int k = 0; k < 6; k++) clk_restore(thread_clk(t, k), &st->clk[k]);
  rsan_thread_snaps_claim(t);
  t->free_slots = dup(st->free_slots, (size_t)t->cap_free_slots * sizeof(uint32_t));
}

static void loc_restore(const saved_loc *sl) {
  rsan_loc *l = sl->l;
  /* the history in use, when it has the saved one's length (the ring grows by doubling) */
  rsan_hist *hist = l->hist && (size_t)rsan_hist_len(l) == sl->hist_n ? l->hist : NULL;
  if (!hist) rsan_hist_free(l);
  if (l->fcap > RSAN_FACTS) rsan_free(l->facts_ext);
  rsan_loc_ev_free(l);
  /* kept: the clocks (restored one by one below), the lock, the race detector's S, the
   * table's links */
  rsan_clk cur[3];
  for (int k = 0; k < 3; k++) memcpy(&cur[k], loc_clk(l, k), sizeof cur[k]);
  rsan_spin lock = l->lock;
  rsan_vc S = l->S;
  rsan_loc *gnext = l->gnext;
  memcpy(l, &sl->bytes, sizeof *l);
  l->lock = lock;
  l->S = S;
  l->gnext = gnext;
  for (int k = 0; k < 3; k++) {
    rsan_clk *c = loc_clk(l, k);
    memcpy(c, &cur[k], sizeof *c);
    clk_restore(c, &sl->clk[k]);
  }
  if (hist) {
    memcpy(hist, sl->hist, sl->hist_n * sizeof(rsan_hist));
    l->hist = hist;
  } else {
    l->hist = sl->hist_n ? rsan_hist_alloc((uint32_t)sl->hist_n) : NULL; /* alloc.c's classes */
    if (l->hist) memcpy(l->hist, sl->hist, sl->hist_n * sizeof(rsan_hist));
  }
  if (l->fcap > RSAN_FACTS) l->facts_ext = dup(sl->facts, (size_t)l->fcap * sizeof(rsan_fact));
  if (sl->ev_bytes) {
    l->ev = rsan_slab_alloc(sl->ev_bytes); /* alloc.c's classes (rsan_loc_ev_free) */
    memcpy(l->ev, sl->ev, sl->ev_bytes);
  }
  if (sl->size) memcpy((void *)l->addr, &sl->mem, (size_t)sl->size);
}

static void thread_drop(saved_thread *st) {
  for (int k = 0; k < 6; k++) clk_free(&st->clk[k]);
  snap_drop(st->bytes.snap_c);
  snap_drop(st->bytes.snap_r);
  snap_drop(st->bytes.snap_sc);
  rsan_free(st->free_slots);
  st->next = th_pool;
  th_pool = st;
}

static void loc_drop(saved_loc *sl) {
  for (int k = 0; k < 3; k++) clk_free(&sl->clk[k]);
  rsan_free(sl->hist);
  rsan_free(sl->facts);
  rsan_free(sl->ev);
  sl->next = loc_pool;
  loc_pool = sl;
}

/* A new copy of a thread record, 64-byte aligned (the records' clocks are: rsan_clk). Not
 * zeroed: thread_save writes every field the copy's other users read (t, clk, free_slots and
 * the copied spans of bytes); a zeroed one would touch the 6 KiB of bytes no one reads, two
 * pages in a search process whose every page is new or copy-on-write (a fault each). */
extern void *__libc_memalign(size_t, size_t);
static saved_thread *saved_thread_alloc(void) {
  size_t n = (offsetof(saved_thread, bytes) + THREAD_BYTES + 63) & ~(size_t)63;
  saved_thread *st = __libc_memalign(64, n);
  if (!st) __builtin_trap(); /* out of memory in the search: it crashed, the closure is incomplete */
  return st;
}

/* The first change of a record since the innermost state's save: its copy, into that state */
void rsan_cstate_touch(int thread_i, int loc_i) {
  rsan_cstate *s = top;
  if (!s) return;
  if (thread_i >= 0 && thread_i < s->nt && !s->th[thread_i]) {
    saved_thread *st = th_pool;
    if (st) th_pool = st->next;
    else st = saved_thread_alloc();
    thread_save(st, s->threads[thread_i]);
    s->th[thread_i] = st;
  }
  if (loc_i >= 0 && loc_i < s->nl && !s->loc[loc_i]) {
    saved_loc *sl = loc_pool;
    if (sl) loc_pool = sl->next;
    else sl = rsan_alloc_line(sizeof *sl);
    loc_save(sl, s->locs[loc_i], s->sizes[loc_i]);
    s->loc[loc_i] = sl;
  }
}

rsan_cstate *rsan_cstate_save(rsan_thread *const *threads, int nt, rsan_loc *const *locs, const int *sizes,
                              int nl) {
  rsan_cstate *s = pool;
  if (s && s->cap_t >= nt && s->cap_l >= nl) {
    pool = s->below;
  } else {
    s = rsan_alloc(sizeof *s);
    s->cap_t = nt ? nt : 1;
    s->cap_l = nl ? nl : 1;
    s->th = rsan_alloc((size_t)s->cap_t * sizeof *s->th);
    s->loc = rsan_alloc((size_t)s->cap_l * sizeof *s->loc);
  }
  s->nt = nt < track_nt ? nt : track_nt; /* the records rsan_cstate_touch can name */
  s->nl = nl < track_nl ? nl : track_nl;
  s->threads = threads;
  s->locs = locs;
  s->sizes = sizes;
  memset(s->th, 0, (size_t)s->nt * sizeof *s->th);
  memset(s->loc, 0, (size_t)s->nl * sizeof *s->loc);
  s->below = top;
  top = s;
  return s;
}

/* Only the innermost state is restored or freed (the search's states nest) */
static void check_top(const rsan_cstate *s) {
  if (s != top) __builtin_trap(); /* a crashed search: the closure is incomplete */
}

void rsan_cstate_restore(const rsan_cstate *s) {
  check_top(s);
  for (int i = 0; i < s->nt; i++)
    if (s->th[i]) thread_restore(s->th[i]);
  for (int i = 0; i < s->nl; i++)
    if (s->loc[i]) loc_restore(s->loc[i]);
  rsan_report_reset();
}

void rsan_cstate_free(rsan_cstate *s) {
  if (!s) return;
  check_top(s);
  rsan_cstate *b = s->below;
  for (int i = 0; i < s->nt; i++) {
    if (!s->th[i]) continue;
    if (b && i < b->nt && !b->th[i]) b->th[i] = s->th[i]; /* its value at b's save too */
    else thread_drop(s->th[i]);
  }
  for (int i = 0; i < s->nl; i++) {
    if (!s->loc[i]) continue;
    if (b && i < b->nl && !b->loc[i]) b->loc[i] = s->loc[i];
    else loc_drop(s->loc[i]);
  }
  top = b;
  s->below = pool;
  pool = s;
}
