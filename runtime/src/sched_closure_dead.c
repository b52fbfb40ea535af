/* The closure search's static pass (sched_closure.c has the whole design), from the log alone:
 * the coarse order, the stamps each step sees, and the checks that are dead in every interleaving
 * of the run's coarse class. */
#include <string.h>

#include "rsan_engine.h"
#include "rsan_sched_closure_internal.h"
#include "rsan_sched_internal.h"

/* Steps a (earlier) and b of other threads are ordered in every interleaving of the class: the
 * explorer's relation (every SC fence labelled clean: two SC fences are independent), and a
 * thread's spawn before its steps, its steps before a join of it (the explorer needs no such
 * pair: its steps are never enabled together with them). */
static int coarse_dependent(const step *a, const step *b) {
  if ((a->ev == EV_SPAWN && a->other == b->tid) || (b->ev == EV_JOIN && b->other == a->tid)) return 1;
  return rsan_sched_ops_dependent(a->tid, a->kind, a->addr, a->w, b->tid, b->kind, b->addr, b->w);
}

/* coarse predecessors: the earlier dependent steps of other threads */
void rsan_closure_coarse_need(const step *steps, int n, int nthreads, const int *index_in_thread, int *need) {
  for (int j = 0; j < n; j++) {
    int *row = need + (size_t)j * (size_t)nthreads;
    memset(row, 0, (size_t)nthreads * sizeof *row);
    const step *b = &steps[j];
    for (int i = 0; i < j; i++) {
      const step *a = &steps[i];
      if (coarse_dependent(a, b) && row[a->tid] < index_in_thread[i] + 1)
        row[a->tid] = index_in_thread[i] + 1;
    }
  }
}

/* A location's stamps are raised only by its writes, which every interleaving of the class runs
 * in the log's order (two writes of a location are coarse-dependent) */
void rsan_closure_stamps_before(const step *steps, int n, const uintptr_t *addrs, int naddrs,
                                uint64_t *stamp_before, uint64_t *stampu_before) {
  for (int i = 0; i < naddrs; i++) {
    rsan_loc *l = rsan_loc_peek(addrs[i]);
    uint64_t ts = 0, tu = 0;
    if (l) {
      ts = l->stamp;
      tu = l->stampU;
      rsan_loc_release(l);
    }
    for (int j = 0; j < n; j++) {
      const step *x = &steps[j];
      if (x->at != addrs[i] || x->ev == EV_JOIN) continue;
      stamp_before[j] = ts;
      stampu_before[j] = tu;
      ts += (uint64_t)writes_stamp(x);
      tu += (uint64_t)writes_stamp_u(x);
    }
  }
}

/* a[u] := max(a[u], b[u]): per-thread step counts joined */
static void max_into(int *a, const int *b, size_t n) {
  for (size_t u = 0; u < n; u++)
    if (a[u] < b[u]) a[u] = b[u];
}

static int acquire_order(int o) {
  return o == RSAN_CONSUME || o == RSAN_ACQUIRE || o == RSAN_ACQ_REL || o == RSAN_SEQ_CST;
}
static int release_order(int o) { return o == RSAN_RELEASE || o == RSAN_ACQ_REL || o == RSAN_SEQ_CST; }

void rsan_closure_dead_checks(const step *steps, int n, int nthreads, const int *need,
                              const int *index_in_thread, const int *first_of, const int *offset,
                              char *known_before) {
  /* Checks dead in every interleaving: the last write of the location before the check (of
   * the kind the check compares: any write for a load or a wait, a plain store for a store or
   * an RMW) happens before the check through the class's own synchronisation, which every
   * interleaving of the class shares (its reads read the same writes): program order, joins,
   * and a release write (or a lock's release) read by an acquire read (or a lock's
   * acquisition), and F between two SC fences that every interleaving of the class orders the
   * same way: f_U before f_T in the class's order (program order and the coarse order,
   * transitively: ord). An SC fence sets W(F) := its thread's Tc ⊔ W(F), and a later one takes
   * Tc ⊔= W(F); W(F) only grows, so f_T's thread then holds everything f_U's held. Edges through
   * fences the interleavings order either way are not counted, nor are release sequences and
   * other fences (fewer edges: fewer dead checks). The checking thread's Tc then holds the
   * write's stamps (a write raises its thread's Tc; W(x) := Tc at a release write, Tc ⊔= W(x)
   * at an acquire read of the newest write; a join takes the joinee's Tc), and Tc only grows.
   * hb[u]: how many logged steps of each thread happen before thread u's next step; rel[j]: the
   * same at release write j, fhb[j] at SC fence j. ord[j]: how many steps of each thread
   * precede step j in every interleaving (ordrow[u]: at thread u's last step so far). */
  size_t nt = (size_t)nthreads;
  int *hb = rsan_alloc(nt * nt * sizeof *hb), *rel = rsan_alloc((size_t)n * nt * sizeof *rel);
  int *fhb = rsan_alloc((size_t)n * nt * sizeof *fhb), *ord = rsan_alloc((size_t)n * nt * sizeof *ord);
  int *ordrow = rsan_alloc(nt * nt * sizeof *ordrow);
  char *released = rsan_alloc((size_t)n);
  memset(hb, 0, nt * nt * sizeof *hb);
  memset(ordrow, 0, nt * nt * sizeof *ordrow);
  for (int j = 0; j < n; j++) {
    const step *e = &steps[j];
    int *cur = hb + (size_t)e->tid * nt;
    int *o = ord + (size_t)j * nt;
    memcpy(o, ordrow + (size_t)e->tid * nt, nt * sizeof *o);
    const int *needs = need + (size_t)j * nt;
    for (int v = 0; v < nthreads; v++)
      if (needs[v] > 0) { /* the latest step of v that must precede j, and what precedes it */
        max_into(o, ord + (size_t)first_of[offset[v] + needs[v] - 1] * nt, nt);
      }
    o[e->tid] = index_in_thread[j] + 1;
    memcpy(ordrow + (size_t)e->tid * nt, o, nt * sizeof *o);
    known_before[j] = 0;
    if (checks(e) &&
        (e->op == RSAN_OP_LOAD || e->op == RSAN_OP_WAIT || e->op == RSAN_OP_STORE || e->op == RSAN_OP_RMW)) {
      int reads = e->op == RSAN_OP_LOAD || e->op == RSAN_OP_WAIT, w = -1;
      for (int i = j - 1; i >= 0 && w < 0; i--) {
        const step *x = &steps[i];
        if (x->at != e->at || x->ev == EV_JOIN) continue;
        if (reads ? writes_stamp(x) : writes_stamp_u(x)) w = i;
      }
      /* w < 0: the last write is older than the snapshot, and the state decides */
      if (w >= 0) known_before[j] = (char)(steps[w].tid == e->tid || cur[steps[w].tid] > index_in_thread[w]);
    }
    cur[e->tid] = index_in_thread[j] + 1;
    int acquires = (e->ev == EV_ACCESS && e->has_read && acquire_order(e->order)) || e->ev == EV_SYNC_ACQ ||
                   e->ev == EV_SYNC_ACQ_LOAD;
    if (acquires) {
      int r = -1; /* the write it reads: the newest before it */
      for (int i = j - 1; i >= 0 && r < 0; i--)
        if (steps[i].at == e->at && steps[i].ev != EV_JOIN && writes_stamp(&steps[i])) r = i;
      if (r >= 0 && released[r]) max_into(cur, rel + (size_t)r * nt, nt);
    }
    if (e->ev == EV_SPAWN && e->other >= 0 &&
        e->other < nthreads) /* the child starts from the creator's Tc */
      memcpy(hb + (size_t)e->other * nt, cur, nt * sizeof *cur);
    if (e->ev == EV_JOIN && e->other >= 0 && e->other < nthreads)
      max_into(cur, hb + (size_t)e->other * nt, nt);
    if (e->kind == RSAN_SK_FENCE_SC) {
      /* the latest SC fence of each other thread that precedes this one in every interleaving */
      for (int u = 0; u < nthreads; u++)
        for (int i = u == e->tid ? -1 : o[u] - 1; i >= 0; i--) {
          int f = first_of[offset[u] + i];
          if (steps[f].kind != RSAN_SK_FENCE_SC) continue;
          max_into(cur, fhb + (size_t)f * nt, nt);
          break;
        }
      memcpy(fhb + (size_t)j * nt, cur, nt * sizeof *cur);
    }
    released[j] = (char)((e->ev == EV_ACCESS && e->has_write && release_order(e->order)) ||
                         e->ev == EV_SYNC_REL);
    if (released[j]) memcpy(rel + (size_t)j * nt, cur, nt * sizeof *cur);
  }
}
