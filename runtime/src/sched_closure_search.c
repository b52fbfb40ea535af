/* The snapshot's side of the F-order closure (sched_closure.c has the whole design): replay the
 * run's logged steps through the engine's entry points along the linearisations of the run's
 * coarse order, fork one child per ready SC fence, prune states by their key. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rsan_engine.h"
#include "rsan_exit.h"
#include "rsan_explain.h"
#include "rsan_interface.h"
#include "rsan_report.h"
#include "rsan_sched_closure.h"
#include "rsan_sched_closure_internal.h"
#include "rsan_sched_closure_lean.h"
#include "rsan_sched_closure_state.h"
#include "rsan_sched_fence.h"
#include "rsan_sched_internal.h"
#include "rsan_sync.h"

static step *steps;
static int *need;     /* steps x nthreads: steps of each thread that must run before it */
static int *total;    /* steps of each thread in the log */
static int *index_in_thread;
static int *first_of; /* per thread: log index of each of its steps, flattened by offsets */
static int *offset;   /* per thread: start of its steps in first_of */
static int nthreads;
static uintptr_t *addrs;
static int naddrs;
/* each thread's record in the snapshot: the run's, or (a thread created after the snapshot)
 * the one the replay of its spawn made; NULL until then */
static rsan_thread **rec;


/* Only accesses make robustness checks (checks, rsan_sched_closure_internal.h); every other
 * step matters through the clocks it passes on (fences through F, sync primitives through
 * their locations, joins to the joiner). */
static int passes_on(const step *s) {
  return s->kind != RSAN_SK_EXIT && s->kind != RSAN_SK_EXIT_PROCESS && s->ev != EV_NONE;
}

/* The location whose checks this search looks for (snapshot_main: one search per location).
 * A clock's value at location y evolves by joins, which are per location, and by the stamps of
 * y's own writes, so the values at y of every clock follow from the steps alone, whatever the
 * other locations' values are; and a check at y reads values at y only (its thread's clocks,
 * y's history). So the reports at y are those of a search whose states are the values at y:
 * far fewer states than the values at every location together. */
static int focus;
static uintptr_t focus_addr;

/* per step: the stamps of its location just before it (both kinds), from the log */
static uint64_t *stamp_before, *stampu_before;
/* per check: its thread's Tc reaches those stamps in every interleaving of the class */
static char *known_before;
static int in_process; /* the root: one search per focus in this process (restores), else a fork each */
static int restoring;  /* branch: restore states in this process (set for good once it can), else fork */
/* lean: this focus is searched on the lean state (sched_closure_lean.c) instead of the engine's
 * records; lean_abort: a check there reported on it, and the engine searches the focus again */
static int lean, lean_abort;
/* index_steps, index_focus_checks */
static int nlog;
static rsan_loc **locs;       /* the record of each addrs[i] (made at the root), then F's */
static int *last_passing;     /* per thread: the position of its last step that passes clocks on */
static int *last_join_of;     /* [u][v]: the position of v's last join of u */
static int *next_at;          /* [v][k][i]: thread v's first access of addrs[i] at or after its k-th step */
static int *first_later;      /* first_accesses_later's answer */
static int *focus_check_from, *focus_check_k;
static int *focus_check_at; /* [offset[v] + v + k]: thread v's first check at its position k or later */

/* A step not yet run at the focus location y can still report. A load's or a wait's check
 * needs its thread's Tsc(y) above its Tc(y) (rsan_engine.h rsan_read_violation; the value
 * check of a wait looks for a write in [Tc(y), Tsc(y))), a store's or an RMW's the same of
 * their U stamps (rsan_write_violation); a CAS is always live. No clock holds more at y than
 * y's stamp, which at the check is the class's (the writes of y before it are ordered before
 * it), and Tc only grows (Tc ⊑ Ta, and an acquire fence sets Tc := Ta): a check whose
 * thread's Tc(y) already reaches the stamp it will see is dead. */
static int check_later(const int *pos) {
  for (int v = 0; v < nthreads; v++)
    for (int i = focus_check_at[offset[v] + v + (pos[v] < total[v] ? pos[v] : total[v])];
         i < focus_check_from[v + 1]; i++) {
      int k = focus_check_k[i];
      int j = first_of[offset[v] + k];
      const step *s = &steps[j];
      if (!rec[s->tid]) return 1; /* a thread not created yet: its check is live */
      rsan_q q;
      if (lean) {
        q.lo = rsan_lean_v[2 * lean_tp(s->tid, LEAN_TC)];
        q.loU = rsan_lean_v[2 * lean_tp(s->tid, LEAN_TC) + 1];
      } else {
        rsan_loc_query(locs[focus], &rec[s->tid]->Tc, &q);
      }
      if (s->op == RSAN_OP_LOAD || s->op == RSAN_OP_WAIT) {
        if (q.lo < stamp_before[j]) return 1; /* read check */
      } else if (s->op == RSAN_OP_STORE || s->op == RSAN_OP_RMW) {
        if (q.loU < stampu_before[j]) return 1; /* write check */
      } else {
        return 1; /* a CAS's value checks compare Tc with the history, not with Tsc */
      }
    }
  return 0;
}

/* Thread u's clocks can still decide a report (some check is left, check_later): u has a
 * step left other than the end of a thread or of the process (a fence of a seq_cst access
 * passes its clocks into F), or a thread joins it later. */
static int live_later(int u, const int *pos) {
  if (pos[u] <= last_passing[u]) return 1;
  for (int v = 0; v < nthreads; v++)
    if (pos[v] <= last_join_of[(size_t)u * (size_t)nthreads + (size_t)v]) return 1;
  return 0;
}

/* For each addrs[i], the log index of its first access not yet run, in the run's order (INT_MAX:
 * none), into first_later: when it writes, every other access of addrs[i] left is ordered after
 * it. Thread v's next accesses of every location from its position on are one row of next_at. */
static void first_accesses_later(const int *pos) {
  for (int i = 0; i < naddrs; i++) first_later[i] = INT_MAX;
  for (int v = 0; v < nthreads; v++) {
    const int *t = next_at + (size_t)(offset[v] + v + pos[v]) * (size_t)naddrs;
    for (int i = 0; i < naddrs; i++)
      if (t[i] < first_later[i]) first_later[i] = t[i];
  }
}

/* The tables the functions above read, from the log: what each thread's remaining steps do. */
static void index_steps(void) {
  size_t nt = (size_t)nthreads, row = (size_t)(nlog + nthreads);
  last_passing = rsan_alloc(nt * sizeof *last_passing);
  last_join_of = rsan_alloc(nt * nt * sizeof *last_join_of);
  next_at = rsan_alloc((size_t)naddrs * row * sizeof *next_at);
  first_later = rsan_alloc((size_t)(naddrs ? naddrs : 1) * sizeof *first_later);
  for (int u = 0; u < nthreads; u++) {
    last_passing[u] = -1;
    for (int v = 0; v < nthreads; v++) last_join_of[(size_t)u * nt + (size_t)v] = -1;
  }
  for (int v = 0; v < nthreads; v++)
    for (int k = 0; k < total[v]; k++) {
      const step *s = &steps[first_of[offset[v] + k]];
      if (passes_on(s) || s->kind == RSAN_SK_FENCE_SC) last_passing[v] = k;
      if (s->ev == EV_JOIN && s->other >= 0 && s->other < nthreads)
        last_join_of[(size_t)s->other * nt + (size_t)v] = k;
    }
  size_t na = (size_t)naddrs;
  for (int i = 0; i < naddrs; i++)
    for (int v = 0; v < nthreads; v++) {
      int *t = next_at + (size_t)(offset[v] + v) * na + (size_t)i; /* t[k * na]: position k */
      t[(size_t)total[v] * na] = INT_MAX;
      for (int k = total[v] - 1; k >= 0; k--) {
        int j = first_of[offset[v] + k];
        int hit = steps[j].at == addrs[i] && steps[j].ev != EV_JOIN && steps[j].ev != EV_NONE;
        t[(size_t)k * na] = hit ? j : t[(size_t)(k + 1) * na];
      }
    }
}

/* The checks at the focus location that the static pass did not find dead, by thread. */
static void index_focus_checks(void) {
  rsan_free(focus_check_from); /* the previous focus's (searches in one process) */
  rsan_free(focus_check_k);
  rsan_free(focus_check_at);
  focus_check_from = rsan_alloc((size_t)(nthreads + 1) * sizeof *focus_check_from);
  focus_check_k = rsan_alloc((size_t)(nlog ? nlog : 1) * sizeof *focus_check_k);
  focus_check_at = rsan_alloc((size_t)(nlog + nthreads) * sizeof *focus_check_at);
  int c = 0;
  for (int v = 0; v < nthreads; v++) {
    focus_check_from[v] = c;
    for (int k = 0; k < total[v]; k++) {
      focus_check_at[offset[v] + v + k] = c;
      int j = first_of[offset[v] + k];
      if (checks(&steps[j]) && steps[j].at == focus_addr && !known_before[j]) focus_check_k[c++] = k;
    }
    focus_check_at[offset[v] + v + total[v]] = c;
  }
  focus_check_from[nthreads] = c;
}

/* The key of a state: what a later step can read, by its meaning, not its representation.
 * A clock is a vector over thread slots whose entries name facts (rsan_internal.h); which
 * epochs a thread holds depends on whether its loads needed new facts, which depends on the
 * fences' order although the clock's value at every location may not. So each clock that a
 * later step can read (the threads' Tc, Tr, Ta, Tsc; the W, Wsc, Msc of the locations still
 * accessed; F's W and Msc) is hashed by its value at the focus location (rsan_loc_query),
 * with that location's stamps; threads and locations that no later step reads are left out,
 * and so are clocks that the next step overwrites unread (docs/design/exploration.md §4). */
static int nlive;
static int live[1024]; /* the live clocks, as the lean state's pairs (rsan_sched_closure_lean.h) */

/* the engine's clock of a pair: a thread's Tc, Tr, Ta, Tsc, a location's (F's last) W, Wsc, Msc */
static const rsan_clk *engine_clk(int p) {
  if (p < rsan_lean_loc_base) {
    const rsan_thread *t = rec[p / 4];
    const rsan_clk *c[4] = {&t->Tc, &t->Tr, &t->Ta, &t->Tsc};
    return c[p % 4];
  }
  const rsan_loc *l = locs[(p - rsan_lean_loc_base) / 3];
  int k = (p - rsan_lean_loc_base) % 3;
  return k == LEAN_W ? &l->W : k == LEAN_WSC ? &l->Wsc : rsan_loc_msc(l);
}

static uint64_t state_key(const int *pos) {
  uint64_t h = 0x5eed;
  nlive = 0;
  for (int u = 0; u < nthreads; u++) {
    h = rsan_closure_mix(h, (uint64_t)pos[u]);
    const rsan_thread *t = rec[u];
    if (!total[u] || !t || !live_later(u, pos) || nlive + 4 > 1024) continue;
    h = rsan_closure_mix(h, (uint64_t)u + 1000);
    /* a pending SC fence overwrites Tc (:= Ta) and Tr (:= Tc) before it reads them */
    if (pos[u] >= total[u] || steps[first_of[offset[u] + pos[u]]].kind != RSAN_SK_FENCE_SC) {
      live[nlive++] = lean_tp(u, LEAN_TC);
      live[nlive++] = lean_tp(u, LEAN_TR);
    }
    live[nlive++] = lean_tp(u, LEAN_TA);
    live[nlive++] = lean_tp(u, LEAN_TSC);
  }
  int at = 0; /* the focus location, reached */
  first_accesses_later(pos);
  for (int i = 0; i < naddrs; i++) {
    int first = first_later[i];
    if (first == INT_MAX) continue; /* no step reads its clocks again */
    if (i == focus) {
      const rsan_loc *l = locs[i];
      uint64_t st = lean ? rsan_lean_v[2 * lean_lp(naddrs + 1, 0)] : l->stamp;
      uint64_t su = lean ? rsan_lean_v[2 * lean_lp(naddrs + 1, 0) + 1] : l->stampU;
      h = rsan_closure_mix(rsan_closure_mix(rsan_closure_mix(h, (uint64_t)i + 5000), st), su);
      at = 1;
    }
    if (nlive + 3 <= 1024) {
      /* a store next (it is ordered before every other access of x left) overwrites W(x) and
       * Wsc(x) without reading them; it reads Msc(x) */
      if (!(steps[first].ev == EV_ACCESS && steps[first].op == RSAN_OP_STORE)) {
        live[nlive++] = lean_lp(i, LEAN_W);
        live[nlive++] = lean_lp(i, LEAN_WSC);
      }
      live[nlive++] = lean_lp(i, LEAN_MSC);
    }
  }
  /* F's clocks that the later fences read: W and Msc (Wsc(F) is never read: nothing loads F) */
  if (nlive + 2 <= 1024) {
    live[nlive++] = lean_lp(naddrs, LEAN_W);
    live[nlive++] = lean_lp(naddrs, LEAN_MSC);
  }
  h = rsan_closure_mix(h, (uint64_t)focus + 77);
  /* two lanes, each a chain of multiplies half as long, joined at the end */
  uint64_t g = h ^ 0x2545f4914f6cdd1dull;
  if (lean && at) rsan_lean_hash(live, nlive, &h, &g);
  /* the engine's clocks queried two at a time (rsan_loc_query2: one scan of the fact window,
   * the answers of two queries) */
  for (int c = 0; !lean && at && c < nlive; c += 2) {
    rsan_q q[2];
    int two = c + 1 < nlive;
    if (two) {
      rsan_loc_query2(locs[focus], engine_clk(live[c]), engine_clk(live[c + 1]), &q[0], &q[1]);
    } else {
      rsan_loc_query(locs[focus], engine_clk(live[c]), &q[0]);
    }
    for (int k = 0; k < 2 && c + k < nlive; k++) {
      h = rsan_closure_mix(rsan_closure_mix(h, q[k].lo), q[k].loU);
      g = rsan_closure_mix(rsan_closure_mix(g, q[k].hi), q[k].hiU);
    }
  }
  h = rsan_closure_mix(h, g);
  /* a focus the lean state hands back is searched again by the engine: its keys are not the
   * engine's (the set keeps every key of a search) */
  if (lean) h ^= 0x6c65616e6c65616eull;
  return h ? h : 1;
}

static int exact(const rsan_q *q) { return q->lo == q->hi && q->loU == q->hiU; }
/* x ⊑ y ⊔ z at the focus location (both timestamps) */
static int leq_join(const rsan_q *x, const rsan_q *y, const rsan_q *z) {
  return x->lo <= (y->lo > z->lo ? y->lo : z->lo) && x->loU <= (y->loU > z->loU ? y->loU : z->loU);
}

/* The SC fences of threads a and b commute in this state: both orders reach the same clocks
 * (docs/scheduling.md "SC fences: when two commute": b ⊑ a ⊔ W, a ⊑ b ⊔ W, t ⊑ s ⊔ M and
 * s ⊑ t ⊔ M, with a, s and b, t the threads' Ta and Tsc, W and M F's W and Msc): at the focus
 * location when every value there is exact, else on the whole clocks. */
static int fences_commute(int ta, int tb) {
  if (lean) return rsan_lean_fences_commute(ta, tb); /* the same test on exact values */
  const rsan_thread *a = rec[ta], *b = rec[tb];
  rsan_loc *f = rsan_loc_fence();
  rsan_loc *at = locs[focus];
  {
    rsan_q q[6];
    const rsan_clk *c[6] = {&a->Ta, &b->Ta, &f->W, &a->Tsc, &b->Tsc, rsan_loc_msc(f)};
    int all = 1;
    for (int k = 0; k < 6; k += 2) {
      rsan_loc_query2(at, c[k], c[k + 1], &q[k], &q[k + 1]);
      all &= exact(&q[k]) & exact(&q[k + 1]);
    }
    if (all)
      return leq_join(&q[1], &q[0], &q[2]) && leq_join(&q[0], &q[1], &q[2]) &&
             leq_join(&q[4], &q[3], &q[5]) && leq_join(&q[3], &q[4], &q[5]);
  }
  const rsan_clk *w = &f->W, *m = rsan_loc_msc(f);
  rsan_clk tmp;
  rsan_clk_init(&tmp);
  int ok = 1;
  const rsan_clk *pairs[4][2] = {{&a->Ta, &b->Ta}, {&b->Ta, &a->Ta}, {&a->Tsc, &b->Tsc}, {&b->Tsc, &a->Tsc}};
  for (int k = 0; k < 4 && ok; k++) { /* pairs[k][1] ⊑ pairs[k][0] ⊔ (W or M) */
    rsan_clk_assign(&tmp, pairs[k][0]);
    rsan_clk_join(&tmp, k < 2 ? w : m);
    ok = rsan_clk_leq(pairs[k][1], &tmp);
  }
  rsan_clk_release(&tmp);
  return ok;
}

static void incomplete(int why) {
  if (!__atomic_load_n(&rsan_closure_sh->incomplete, __ATOMIC_RELAXED))
    __atomic_store_n(&rsan_closure_sh->incomplete, why, __ATOMIC_RELAXED);
}


static int ready(int u, const int *pos) {
  if (pos[u] >= total[u]) return 0;
  int j = first_of[offset[u] + pos[u]];
  for (int v = 0; v < nthreads; v++)
    if (pos[v] < need[(size_t)j * (size_t)nthreads + (size_t)v]) return 0;
  return 1;
}

/* A replayed step made a report: record the interleaving (once per reporting step). */
static void record(int j, const uint16_t *path, int len) {
  uint64_t key = ((uint64_t)(unsigned)steps[j].tid << 32) | (uint64_t)(unsigned)index_in_thread[j];
  for (int i = 0; i < __atomic_load_n(&rsan_closure_sh->nfound, __ATOMIC_RELAXED); i++)
    if (rsan_closure_sh->found_key[i] == key) return;
  int i = rsan_closure_sh->nfound;
  if (i >= MAX_FOUND) return;
  rsan_closure_sh->found_key[i] = key;
  rsan_closure_sh->found_len[i] = len;
  memcpy(rsan_closure_sh->found[i], path, (size_t)len * sizeof *path);
  __atomic_store_n(&rsan_closure_sh->nfound, i + 1, __ATOMIC_RELEASE);
}

/* How a branching state explores its fence orders: in this process, restoring the state's
 * records before each order but the first (sched_closure_state.c), or, when the log creates a
 * thread after the root (a restore cannot take a new thread record back), a fork per order but
 * the last. The records a restore writes back: every logged thread's and location's, and F's. */
static rsan_thread **save_threads;
static int nsave_threads;
static rsan_loc **save_locs;
static int *save_sizes;
static int nsave_locs;
static uint16_t path[MAX_LOG];
static int *tsave, *lsave; /* per tid / per step: its record's index in save_threads / save_locs */
static int *tsave_of;      /* tsave's table, made at the root: tsave is set once states are restored */

/* Run thread take's next step (a fence wakes the sleeping fences it does not commute with);
 * returns the path's new length. */
static int step_one(int take, int *pos, uint64_t *sleep, int len) {
  int j = first_of[offset[take] + pos[take]];
  if (*sleep && steps[j].kind == RSAN_SK_FENCE_SC)
    for (int u = 0; u < nthreads; u++)
      if ((*sleep >> u & 1) && !fences_commute(u, take)) *sleep &= ~(1ull << u);
  if (lean) {
    lean_abort = rsan_lean_step(j); /* a report on the lean values: the engine searches again */
    pos[take]++;
    path[len++] = (uint16_t)steps[j].tid;
    return len;
  }
  if (tsave) { /* the records the step may change (sched_closure_state.c skips the others) */
    const step *x = &steps[j];
    int fence = x->kind == RSAN_SK_FENCE_SC || x->ev == EV_FENCE;
    rsan_cstate_touch(tsave[x->tid], fence ? nsave_locs - 1 : lsave[j]);
    if (x->ev == EV_JOIN && x->other >= 0 && x->other < nthreads) rsan_cstate_touch(tsave[x->other], -1);
  }
  uint64_t before = rsan_report_count();
  int why = rsan_closure_replay(&steps[j], rec, nthreads);
  if (why) incomplete(why);
  pos[take]++;
  path[len++] = (uint16_t)steps[j].tid;
  if (rsan_report_count() != before) record(j, path, len);
  return len;
}

static void search(int *pos, uint64_t sleep, int len);

/* The run is gone (the alive pipe's end: only the run held its write end): nobody waits for
 * this search, which ends here, in every process of the snapshot's group (sched_closure.c). */
static int alive_fd = -1;
static void run_gone(void) {
  struct pollfd p = {alive_fd, POLLIN, 0};
  if (alive_fd >= 0 && poll(&p, 1, 0) > 0) rsan_exit_raw(0);
}

/* A search that forks because the log creates threads after the root (a restore cannot take
 * a new thread record back) restores from the first branching state on whose path every
 * spawn of the log has been replayed: no step below it creates a thread record, so every
 * record a step below may change is one of save_threads' (every logged thread's, all made by
 * now) or save_locs', which is the precondition of sched_closure_state.c. Once set in a
 * process it stays: the process's fork-mode branching states above are at their last order
 * (a fork's child exits after its order, the parent takes the last itself), so no fork is
 * left to it. The key set stays the one the root chose (the shared one, searched in the same
 * order as with a fork per state). */
static int start_restoring(void) {
  if (rsan_sched_flag.closure_fork) return 0;
  for (int j = 0; j < nlog; j++)
    if (steps[j].ev == EV_SPAWN && steps[j].other >= 0 && steps[j].other < nthreads && !rec[steps[j].other])
      return 0;
  nsave_threads = 0;
  tsave = tsave_of;
  for (int u = 0; u < nthreads; u++) {
    tsave[u] = rec[u] ? nsave_threads : -1;
    if (rec[u]) save_threads[nsave_threads++] = rec[u];
  }
  rsan_cstate_track(nsave_threads, nsave_locs);
  restoring = 1;
  return 1;
}

/* A branching state (only SC fences ready): each ready fence first, in turn; fence i's order
 * sleeps on the fences before it that commute with it here. A restored state ends (its copies
 * pass to the state below, sched_closure_state.c) once restored for its last order, which no
 * restore of it follows: the records that order changes are copied only into the state below,
 * and only when that one does not hold them yet (docs/design/exploration.md §16). */
static void branch(int *pos, uint64_t sleep, int len, const int *fences, int nf) {
  int use_sleep = nthreads <= 64, pos0[nthreads]; /* small frames: one pair a branching state */
  memcpy(pos0, pos, (size_t)nthreads * sizeof *pos);
  int here = lean || restoring || start_restoring(); /* restore this state's orders, else fork */
  rsan_cstate *saved = here && !lean
                           ? rsan_cstate_save(save_threads, nsave_threads, save_locs, save_sizes, nsave_locs)
                           : NULL;
  int lean_saved = lean ? rsan_lean_save() : 0;
  uint64_t done = 0;
  for (int i = 0; i < nf && !rsan_closure_sh->incomplete && !lean_abort; i++) {
    int last = i == nf - 1;
    if (!here && !last) {
      pid_t pid = _Fork();
      if (pid < 0) {
        incomplete(1);
        break;
      }
      if (pid > 0) {
        int st = 0;
        if (rsan_closure_wait_child(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
          incomplete(3); /* a child that crashed searched nothing */
        if (use_sleep) done |= 1ull << fences[i];
        continue;
      }
    } else if (here && i) {
      if (lean) rsan_lean_restore(lean_saved);
      else rsan_cstate_restore(saved);
      memcpy(pos, pos0, (size_t)nthreads * sizeof *pos);
      if (last) { /* no restore of this state is left: it ends before its last order */
        rsan_lean_free(lean_saved);
        lean_saved = 0;
        rsan_cstate_free(saved);
        saved = NULL;
      }
    }
    if (!last) __atomic_add_fetch(&rsan_closure_sh->forks, 1, __ATOMIC_RELAXED);
    uint64_t sl = sleep | done;
    int n = step_one(fences[i], pos, &sl, len);
    search(pos, sl, n);
    if (!here && !last) rsan_exit_raw(0); /* a fork's child: its order is searched */
    if (use_sleep) done |= 1ull << fences[i];
  }
  rsan_lean_free(lean_saved);
  rsan_cstate_free(saved);
}

/* The search along the linearisations of the coarse order from the state (pos, sleep, len),
 * to the end of every path. A ready step that is not an SC fence is taken alone; where only
 * SC fences are ready, each in turn (branch). Sleep sets (bits: threads whose pending fence
 * was explored from an earlier state and commutes with every fence run since) keep the
 * search from running both orders of two fences that commute. */
static void search(int *pos, uint64_t sleep, int len) {
  for (;;) {
    if (rsan_closure_sh->incomplete || lean_abort) return;
    int fences[nthreads], nf = 0, take = -1;
    for (int u = 0; u < nthreads && take < 0; u++) {
      if (!ready(u, pos)) continue;
      const step *s = &steps[first_of[offset[u] + pos[u]]];
      if (s->kind != RSAN_SK_FENCE_SC) take = u;
      else if (!(sleep >> u & 1)) fences[nf++] = u;
    }
    if (take < 0 && nf == 0) return; /* the end, or every ready fence asleep: explored */
    /* no check left: no report can follow. On the lean state, asked only before a fence: a
     * check that is dead stays dead (its thread's Tc only grows), and its steps make no report,
     * so the path ends at its next fence with the same states (§19) */
    if ((!lean || take < 0) && !check_later(pos)) return;
    if (take < 0 && nf > 1) {
      if (!rsan_closure_key_visit(state_key(pos), sleep, in_process)) {
        __atomic_add_fetch(&rsan_closure_sh->pruned, 1, __ATOMIC_RELAXED);
        return;
      }
      uint64_t states = __atomic_add_fetch(&rsan_closure_sh->states, 1, __ATOMIC_RELAXED);
      if (states > MAX_STATES) {
        incomplete(1);
        return;
      }
      if (!(states & 1023)) run_gone();
      branch(pos, sleep, len, fences, nf);
      return;
    }
    len = step_one(take >= 0 ? take : fences[0], pos, &sleep, len);
  }
}

/* The search of focus i on the lean state (sched_closure_lean.c), when the log and the focus
 * allow it: 1 when it is done; 0 when the engine searches the focus (a check reported on the
 * lean values: the engine's search makes the report, with its counts as if the lean one had not
 * run; or the lean state cannot start there) */
static int lean_log;
static rsan_cstate *root; /* the engine's records at the root (a search by the engine saved them) */
static int try_lean(int i) {
  focus = i;
  focus_addr = addrs[i];
  index_focus_checks();
  if (root) rsan_cstate_restore(root); /* an earlier focus's engine search changed them */
  if (!rsan_lean_begin(i, rec, locs)) return 0;
  uint64_t states = rsan_closure_sh->states, forks = rsan_closure_sh->forks, pruned = rsan_closure_sh->pruned;
  int pos[256] = {0};
  lean = 1;
  search(pos, 0, 0);
  lean = 0;
  rsan_closure_sh->lean++;
  if (!lean_abort) return 1;
  lean_abort = 0;
  rsan_closure_sh->lean_back++;
  rsan_closure_sh->states = states, rsan_closure_sh->forks = forks, rsan_closure_sh->pruned = pruned;
  return 0;
}

static int read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n) {
    ssize_t k = read(fd, p, n);
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* the snapshot process: wait for the log, search, exit */
void rsan_closure_snapshot_main(int fd, int done_w, int alive_r) {
  (void)done_w; /* held to the end (the run sees the group's end), and so do the searches */
  alive_fd = alive_r;
  /* nothing of the run's output, scheduler or explain log from here on */
  rsan_sched_on = 0;
  rsan_sched.finished = 1;
  rsan_sched_trace_forget();
  rsan_closure_logging = 0;
  rsan_explain_on = 0;
  rsan_report_reset();
  rsan_flag.json_path[0] = 0;
  rsan_flag.log_path[0] = 0;
  rsan_flag.print_reports = 0;
  rsan_flag.halt_on_error = 0;
  rsan_flag.report_races = 0;
  rsan_flag.sc_accesses = RSAN_SC_RA; /* the fences of a seq_cst access are steps of their own */
  int n;
  if (read_all(fd, &n, sizeof n) || n <= 0 || n > MAX_LOG) rsan_exit_raw(0);
  steps = rsan_alloc((size_t)n * sizeof *steps);
  if (read_all(fd, steps, (size_t)n * sizeof *steps)) rsan_exit_raw(0);
  close(fd);
  if (rsan_sched_flag.closure_stall_ms) { /* test hook: a search that stalls (closure_timeout_ms) */
    struct pollfd p = {alive_fd, POLLIN, 0}; /* until the stall's end, or the run's */
    uint64_t ms = rsan_sched_flag.closure_stall_ms;
    int r;
    while ((r = poll(&p, 1, ms > 60000 ? 60000 : (int)ms)) < 0 && errno == EINTR) {
    }
    if (r > 0) rsan_exit_raw(0);
  }
  nthreads = 0;
  for (int j = 0; j < n; j++)
    if (steps[j].tid + 1 > nthreads) nthreads = steps[j].tid + 1;
  if (nthreads > 256) {
    incomplete(3);
    rsan_exit_raw(0);
  }
  total = rsan_alloc((size_t)nthreads * sizeof *total);
  offset = rsan_alloc((size_t)(nthreads + 1) * sizeof *offset);
  first_of = rsan_alloc((size_t)n * sizeof *first_of);
  index_in_thread = rsan_alloc((size_t)n * sizeof *index_in_thread);
  need = rsan_alloc((size_t)n * (size_t)nthreads * sizeof *need);
  addrs = rsan_alloc((size_t)n * sizeof *addrs);
  memset(total, 0, (size_t)nthreads * sizeof *total);
  for (int j = 0; j < n; j++) index_in_thread[j] = total[steps[j].tid]++;
  offset[0] = 0;
  for (int u = 0; u < nthreads; u++) offset[u + 1] = offset[u] + total[u];
  for (int j = 0; j < n; j++) first_of[offset[steps[j].tid] + index_in_thread[j]] = j;
  rec = rsan_alloc((size_t)nthreads * sizeof *rec);
  for (int u = 0; u < nthreads; u++) rec[u] = total[u] ? steps[first_of[offset[u]]].t : NULL;
  for (int j = 0; j < n; j++) /* created after the snapshot: the replay of its spawn makes it */
    if (steps[j].ev == EV_SPAWN && steps[j].other >= 0 && steps[j].other < nthreads)
      rec[steps[j].other] = NULL;
  rsan_closure_coarse_need(steps, n, nthreads, index_in_thread, need);
  naddrs = 0;
  rsan_loc *f = rsan_loc_fence();
  for (int j = 0; j < n; j++) {
    uintptr_t a = steps[j].at;
    if (!a || steps[j].ev == EV_JOIN || a == f->addr) continue;
    int k = 0;
    while (k < naddrs && addrs[k] != a) k++;
    if (k < naddrs) continue;
    addrs[naddrs++] = a;
    /* freed and made again (free, a thread's stack) after the snapshot: the snapshot's record
     * is not the one the run used, and the replay would not be the run's steps */
    rsan_loc *l = steps[j].ev == EV_ACCESS ? rsan_loc_peek(a) : NULL;
    if (l) {
      uint64_t id = l->id;
      rsan_loc_release(l);
      if (id != steps[j].loc_id) incomplete(2);
    }
    for (int i = j + 1; i < n; i++)
      if (steps[i].at == a && steps[i].ev == EV_ACCESS && steps[j].ev == EV_ACCESS &&
          steps[i].loc_id != steps[j].loc_id)
        incomplete(2);
  }
  /* The records a restore writes back (branch): every logged thread's, every logged location's
   * (made here when the run made it after the snapshot: a new record is the same, its id
   * aside, whenever it is made) and F's, with the program's memory at each accessed location. */
  in_process = !rsan_sched_flag.closure_fork;
  for (int j = 0; j < n; j++)
    if (steps[j].ev == EV_SPAWN) in_process = 0;
  save_threads = rsan_alloc((size_t)nthreads * sizeof *save_threads);
  for (int u = 0; u < nthreads; u++)
    if (rec[u]) save_threads[nsave_threads++] = rec[u];
  save_locs = rsan_alloc((size_t)(naddrs + 1) * sizeof *save_locs);
  save_sizes = rsan_alloc((size_t)(naddrs + 1) * sizeof *save_sizes);
  for (int i = 0; i < naddrs; i++) {
    rsan_loc *l = rsan_loc_acquire(addrs[i]);
    rsan_loc_release(l); /* one thread: the record stays */
    save_locs[nsave_locs] = l;
    for (int j = 0; j < n; j++)
      if (steps[j].at == addrs[i] && steps[j].ev == EV_ACCESS && steps[j].size > save_sizes[nsave_locs])
        save_sizes[nsave_locs] = steps[j].size;
    nsave_locs++;
  }
  save_locs[nsave_locs++] = f;
  locs = save_locs;
  nlog = n;
  restoring = in_process;
  tsave_of = rsan_alloc((size_t)nthreads * sizeof *tsave_of);
  lsave = rsan_alloc((size_t)n * sizeof *lsave);
  for (int u = 0, k = 0; u < nthreads; u++) tsave_of[u] = rec[u] ? k++ : -1;
  for (int j = 0; j < n; j++) {
    lsave[j] = -1;
    for (int i = 0; i < naddrs && lsave[j] < 0; i++)
      if (steps[j].at && steps[j].at == addrs[i] && steps[j].ev != EV_JOIN) lsave[j] = i;
  }
  if (in_process) {
    tsave = tsave_of;
    rsan_cstate_track(nsave_threads, nsave_locs);
  }
  index_steps();
  lean_log = rsan_lean_log(steps, n, nthreads, addrs, naddrs) && in_process && rsan_sched_flag.closure_lean;
  stamp_before = rsan_alloc((size_t)n * sizeof *stamp_before);
  stampu_before = rsan_alloc((size_t)n * sizeof *stampu_before);
  rsan_closure_stamps_before(steps, n, addrs, naddrs, stamp_before, stampu_before);
  known_before = rsan_alloc((size_t)n);
  rsan_closure_dead_checks(steps, n, nthreads, need, index_in_thread, first_of, offset, known_before);
  /* One search per location that a logged step checks (focus, above). In this process when
   * states are restored (each search after the first starts from the root's records, restored;
   * the set of keys is shared, each key names its focus), else in a child each. */
  signal(SIGCHLD, SIG_DFL); /* the program's disposition must not reap the searches */
  for (int i = 0; i < naddrs && !rsan_closure_sh->incomplete; i++) {
    int checked = 0;
    for (int j = 0; j < n && !checked; j++) checked = steps[j].at == addrs[i] && checks(&steps[j]);
    if (!checked) continue;
    if (lean_log && try_lean(i)) continue;
    pid_t pid = 0;
    if (in_process) {
      if (root) rsan_cstate_restore(root);
      else root = rsan_cstate_save(save_threads, nsave_threads, save_locs, save_sizes, nsave_locs);
    } else {
      pid = _Fork();
    }
    if (pid == 0) {
      focus = i;
      focus_addr = addrs[i];
      index_focus_checks();
      int pos[256] = {0};
      search(pos, 0, 0);
      if (!in_process) rsan_exit_raw(0);
      continue;
    }
    int st = 0;
    if (pid < 0 || rsan_closure_wait_child(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
      incomplete(3);
  }
  rsan_exit_raw(0);
}
