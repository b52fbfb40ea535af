/* The closure search's lean state (docs/design/exploration.md §19). One search looks for the
 * reports at one location y (the focus, sched_closure_search.c), and what it reads of a state is
 * the values at y of the clocks later steps read (its key, the dead-check test, the fences'
 * commutation test). A clock's value at y is the newest fact of y it contains, whose two
 * timestamps (stamp, U stamp) grow together; containment is per thread slot, so the value of a
 * join is the larger of the two values (on both timestamps), an assignment copies it, and a
 * thread's own new fact of y raises its Tc, Ta and Tsc to y's stamps (no other fact changes a
 * value at y). So every rule of a replayed step is a function of the values at y alone, and a
 * state is a few words a clock: the threads' Tc, Tr, Ta, Tsc, every logged location's and F's
 * W, Wsc, Msc, and y's stamps. The rules below are those of rsan_engine.h and rules.c (named at
 * each) on those values; the values start as the engine's own answers at the root.
 *
 * Used for a log only when its steps are ones these rules know and replaying it reads what the
 * run read (rsan_lean_log: else the engine's replay would make the closure incomplete or make an
 * attempt without an event), and for a focus only when every value there is exact at the root
 * (rsan_lean_begin). A check at y that may report on the values (rsan_lean_step) hands the focus
 * back to the engine (sched_closure_search.c), whose search makes the report with its stacks,
 * dedup and suppressions: the lean state decides only what a search explores and that no report
 * is made. */
#include <string.h>

#include "rsan_engine.h"
#include "rsan_sched_closure_lean.h"
#include "rsan_sched_internal.h"

uint64_t *rsan_lean_v;
int rsan_lean_loc_base;

static const step *ls;
static int ln, lnt, lnaddrs, lfocus, nwords;
static int *li;                  /* per step: its location's index (F: lnaddrs), -1: none */
static uint64_t **stack;         /* saved values, by depth */
static int depth, depth_cap;

static inline uint64_t mx(uint64_t a, uint64_t b) { return a > b ? a : b; }
/* pair d ⊔= pair s; d := s */
static inline void join(int d, int s) {
  uint64_t *v = rsan_lean_v;
  v[2 * d] = mx(v[2 * d], v[2 * s]);
  v[2 * d + 1] = mx(v[2 * d + 1], v[2 * s + 1]);
}
static inline void set(int d, int s) {
  uint64_t *v = rsan_lean_v;
  v[2 * d] = v[2 * s];
  v[2 * d + 1] = v[2 * s + 1];
}
/* the thread's own fact of y with y's stamps now: Tc, Ta, Tsc contain it (rsan_add_fact_i) */
static void fact(int u) {
  uint64_t *v = rsan_lean_v, s = v[nwords - 2], su = v[nwords - 1];
  const int k[3] = {LEAN_TC, LEAN_TA, LEAN_TSC};
  for (int i = 0; i < 3; i++) {
    int p = lean_tp(u, k[i]);
    v[2 * p] = mx(v[2 * p], s);
    v[2 * p + 1] = mx(v[2 * p + 1], su);
  }
}

/* Load(mo) of x (rsan_sc_load_mo_i, rsan_hb_load_i): the fact, Tsc ⊔= Wsc(x), Msc(x) ⊔= Tsc;
 * Ta ⊔= W(x), and Tc ⊔= W(x) when it acquires. An elided fact or join (the engine's "known")
 * leaves the same values: the engine's argument is that the clocks hold them already. */
static void load(int u, int x, int mo) {
  if (x == lfocus) fact(u);
  join(lean_tp(u, LEAN_TSC), lean_lp(x, LEAN_WSC));
  join(lean_lp(x, LEAN_MSC), lean_tp(u, LEAN_TSC));
  join(lean_tp(u, LEAN_TA), lean_lp(x, LEAN_W));
  if (mo_acq(mo)) join(lean_tp(u, LEAN_TC), lean_lp(x, LEAN_W));
}
/* The SC side of a write (rsan_sc_write_i): the fact, Tsc ⊔= Msc(x), Wsc(x) := Msc(x) := Tsc */
static void sc_write(int u, int x) {
  if (x == lfocus) fact(u);
  join(lean_tp(u, LEAN_TSC), lean_lp(x, LEAN_MSC));
  set(lean_lp(x, LEAN_WSC), lean_tp(u, LEAN_TSC));
  set(lean_lp(x, LEAN_MSC), lean_tp(u, LEAN_TSC));
}
/* Store(mo) (op_store, rsan_hb_store_i): both stamps of x raised; W(x) := Tc when it releases,
 * else Tr (every logged location's record is FULL at the root, rsan_lean_begin) */
static void store(int u, int x, int mo) {
  if (x == lfocus) rsan_lean_v[nwords - 2]++, rsan_lean_v[nwords - 1]++;
  sc_write(u, x);
  set(lean_lp(x, LEAN_W), lean_tp(u, mo_rel(mo) ? LEAN_TC : LEAN_TR));
}
/* RMW(mo) (op_rmw, rsan_hb_rmw_i): the stamp raised, not the U stamp; Ta ⊔= W(x), Tc ⊔= W(x)
 * when it acquires; W(x) := Tc when acq_rel (Tc ⊒ W(x) then), ⊔= Tc when release, else ⊔= Tr */
static void rmw(int u, int x, int mo) {
  if (x == lfocus) rsan_lean_v[nwords - 2]++;
  sc_write(u, x);
  join(lean_tp(u, LEAN_TA), lean_lp(x, LEAN_W));
  if (mo_acq(mo)) join(lean_tp(u, LEAN_TC), lean_lp(x, LEAN_W));
  if (mo_rel(mo) && mo_acq(mo)) set(lean_lp(x, LEAN_W), lean_tp(u, LEAN_TC));
  else join(lean_lp(x, LEAN_W), lean_tp(u, mo_rel(mo) ? LEAN_TC : LEAN_TR));
}
/* rules.c fence_acq (Tc := Ta), fence_rel (Tr := Tc), fence_sc: the acquire part, the RMW on F
 * (no fact: F's are never made; acq_rel), the release part */
static void fence_acq(int u) { set(lean_tp(u, LEAN_TC), lean_tp(u, LEAN_TA)); }
static void fence_rel(int u) { set(lean_tp(u, LEAN_TR), lean_tp(u, LEAN_TC)); }
static void fence_sc(int u) {
  int f = lnaddrs;
  fence_acq(u);
  join(lean_tp(u, LEAN_TSC), lean_lp(f, LEAN_MSC));
  set(lean_lp(f, LEAN_WSC), lean_tp(u, LEAN_TSC));
  set(lean_lp(f, LEAN_MSC), lean_tp(u, LEAN_TSC));
  join(lean_tp(u, LEAN_TA), lean_lp(f, LEAN_W));
  join(lean_tp(u, LEAN_TC), lean_lp(f, LEAN_W));
  set(lean_lp(f, LEAN_W), lean_tp(u, LEAN_TC));
  fence_rel(u);
}

static int addr_index(uintptr_t a, const uintptr_t *addrs) {
  for (int i = 0; i < lnaddrs; i++)
    if (addrs[i] == a) return i;
  return -1;
}

int rsan_lean_log(const step *steps, int n, int nthreads, const uintptr_t *addrs, int naddrs) {
  ls = steps;
  ln = n;
  lnt = nthreads;
  lnaddrs = naddrs;
  rsan_lean_loc_base = nthreads * 4;
  nwords = 2 * (nthreads * 4 + (naddrs + 1) * 3) + 2;
  li = rsan_alloc((size_t)(n ? n : 1) * sizeof *li);
  int *size = rsan_alloc((size_t)(naddrs + 1) * sizeof *size);
  uint64_t *mem = rsan_alloc((size_t)(naddrs + 1) * sizeof *mem);
  int ok = 1;
  /* the steps the rules know; one access size per location (the static replay below) */
  for (int j = 0; j < n && ok; j++) {
    const step *s = &steps[j];
    li[j] = -1;
    if (s->kind == RSAN_SK_FENCE_SC || s->ev == EV_FENCE) li[j] = naddrs;
    if (s->ev == EV_NONE || s->ev == EV_FENCE) continue;
    if (s->ev == EV_JOIN) {
      ok = s->other >= 0 && s->other < nthreads;
      continue;
    }
    if (s->ev != EV_ACCESS) {
      ok = 0; /* a sync primitive (its location's rules), a spawn (a new record) */
      continue;
    }
    int i = addr_index(s->at, addrs);
    ok = i >= 0 && (s->size == 1 || s->size == 2 || s->size == 4 || s->size == 8) &&
         (!size[i] || size[i] == s->size) &&
         (s->op == RSAN_OP_LOAD || s->op == RSAN_OP_STORE || s->op == RSAN_OP_RMW || s->op == RSAN_OP_WAIT ||
          s->op == RSAN_OP_CAS_WEAK || s->op == RSAN_OP_CAS_STRONG);
    if (!ok) continue;
    li[j] = i;
    if (!size[i]) {
      size[i] = s->size;
      memcpy(&mem[i], (const void *)s->at, (size_t)s->size); /* the program's memory at the root */
    }
  }
  /* The static replay: what sched_closure_replay.c's entry points read, in the run's order. Two
   * accesses of a location are coarse-dependent unless both read, so every interleaving the
   * search runs replays a location's writes in this order, and a step reads the same value in all
   * of them: the engine's replay diverges (why 2) or makes an attempt without an event (a wait
   * whose value memory does not hold, a CAS that succeeds where the run's failed) on every path
   * through that step or on none. A log with such a step is left to the engine. */
  for (int j = 0; j < n && ok; j++) {
    const step *s = &steps[j];
    if (s->ev != EV_ACCESS) continue;
    int i = li[j];
    uint64_t m = size_mask(s->size), got = s->read, *x = &mem[i];
    switch (s->op) {
    case RSAN_OP_LOAD: got = *x; break;
    case RSAN_OP_STORE: *x = s->written & m; break;
    case RSAN_OP_RMW: got = *x, *x = s->written & m; break;
    case RSAN_OP_WAIT:
      if (s->wait_block == 1) ok = (*x & m) == (s->wait_v & m), got = s->wait_v;
      else if (s->wait_block == 2) ok = (*x & m) == (s->wait_v & m), got = *x;
      else if (s->wait_block == 3) ok = (*x & m) != (s->wait_v & m), got = *x;
      else ok = 0;
      break;
    default: { /* a CAS, expecting what it read (it succeeds) or another value (it fails) */
      uint64_t e = s->has_write ? s->read : s->read + 1;
      int succ = (*x & m) == (e & m);
      ok = succ == !!s->has_write;
      got = *x;
      if (succ) *x = s->written & m;
    }
    }
    if (s->has_read && (got & m) != (s->read & m)) ok = 0;
  }
  rsan_free(size);
  rsan_free(mem);
  return ok;
}

int rsan_lean_begin(int focus, rsan_thread *const *rec, rsan_loc *const *locs) {
  if (!rsan_lean_v) rsan_lean_v = rsan_alloc((size_t)nwords * sizeof *rsan_lean_v);
  memset(rsan_lean_v, 0, (size_t)nwords * sizeof *rsan_lean_v);
  rsan_loc *at = locs[focus];
  const rsan_clk *c[4];
  int p[4], nc = 0;
  /* the engine's answers at the root: every value exact, else the engine searches */
  for (int u = 0; u < lnt + lnaddrs + 1; u++) {
    if (u < lnt) {
      const rsan_thread *t = rec[u];
      if (!t) continue; /* no step of its own (its values are never read) */
      const rsan_clk *tc[4] = {&t->Tc, &t->Tr, &t->Ta, &t->Tsc};
      for (int k = 0; k < 4; k++) c[k] = tc[k], p[k] = lean_tp(u, k);
      nc = 4;
    } else {
      int i = u - lnt;
      const rsan_loc *l = locs[i];
      if (l->cls != RSAN_LOC_FULL) return 0; /* W(x) is the record's (rsan_loc_w) */
      c[0] = &l->W, c[1] = &l->Wsc, c[2] = rsan_loc_msc(l);
      for (int k = 0; k < 3; k++) p[k] = lean_lp(i, k);
      nc = 3;
    }
    for (int k = 0; k < nc; k++) {
      rsan_q q;
      rsan_loc_query(at, c[k], &q);
      if (q.lo != q.hi || q.loU != q.hiU) return 0;
      rsan_lean_v[2 * p[k]] = q.lo;
      rsan_lean_v[2 * p[k] + 1] = q.loU;
    }
  }
  rsan_lean_v[nwords - 2] = at->stamp;
  rsan_lean_v[nwords - 1] = at->stampU;
  lfocus = focus;
  depth = 0;
  return 1;
}

int rsan_lean_step(int j) {
  const step *s = &ls[j];
  int u = s->tid, x = li[j];
  const uint64_t *v = rsan_lean_v;
  switch (s->ev) {
  case EV_NONE:
    if (s->kind == RSAN_SK_FENCE_SC) fence_sc(u); /* rsan_fence_sc_step */
    break;
  case EV_FENCE: /* op_fence */
    if (s->order == RSAN_ACQUIRE || s->order == RSAN_CONSUME) fence_acq(u);
    else if (s->order == RSAN_RELEASE) fence_rel(u);
    else if (s->order == RSAN_ACQ_REL) fence_acq(u), fence_rel(u);
    else if (s->order == RSAN_SEQ_CST) fence_sc(u);
    break;
  case EV_JOIN: { /* rsan_thread_join: Tsc ⊔= Tsc', Ta ⊔= Tc', Tc ⊔= Tc'; the joinee's released */
    int o = s->other;
    if (o == u) break;
    join(lean_tp(u, LEAN_TSC), lean_tp(o, LEAN_TSC));
    join(lean_tp(u, LEAN_TA), lean_tp(o, LEAN_TC));
    join(lean_tp(u, LEAN_TC), lean_tp(o, LEAN_TC));
    memset(rsan_lean_v + 2 * lean_tp(o, 0), 0, 8 * sizeof *rsan_lean_v);
    break;
  }
  case EV_ACCESS: {
    int c = lean_tp(u, LEAN_TC), sc = lean_tp(u, LEAN_TSC);
    if (x == lfocus) {
      /* The checks on exact values: a load's and a weak CAS's (rsan_read_violation) Tsc > Tc, a
       * store's and an RMW's (rsan_write_violation) the same of the U timestamps. A wait's and a
       * strong CAS's value checks (value.c) look for a write in [Tc, Tsc) (on either timestamp
       * for the CAS), in y's history: they report only when that interval is not empty, which is
       * what is asked here; the engine then decides, with the history */
      int r = v[2 * sc] > v[2 * c], w = v[2 * sc + 1] > v[2 * c + 1];
      if (s->op == RSAN_OP_STORE || s->op == RSAN_OP_RMW ? w : s->op == RSAN_OP_CAS_STRONG ? r || w : r)
        return 1;
    }
    int o = s->order;
    switch (s->op) {
    case RSAN_OP_LOAD:
    case RSAN_OP_WAIT: load(u, x, o == RSAN_SEQ_CST ? RSAN_ACQUIRE : o); break;
    case RSAN_OP_STORE: store(u, x, o == RSAN_SEQ_CST ? RSAN_RELEASE : o); break;
    case RSAN_OP_RMW: rmw(u, x, o == RSAN_SEQ_CST ? RSAN_ACQ_REL : o); break;
    default: /* op_cas: success RMW(mo_s), failure Load(mo_f) */
      if (s->has_write) rmw(u, x, o == RSAN_SEQ_CST ? RSAN_ACQ_REL : o);
      else
        load(u, x,
             o == RSAN_SEQ_CST || o == RSAN_ACQ_REL ? RSAN_ACQUIRE
             : o == RSAN_RELEASE                    ? RSAN_RELAXED
                                                    : o);
    }
    break;
  }
  default: break;
  }
  return 0;
}

/* Each pair hashed once (hi = lo: the engine's second lane would repeat the first), as one word
 * when every timestamp fits in 32 bits (then the word is the pair, one to one): a function of
 * the same values as the engine's key, so two states have one key exactly when the engine's
 * keys are one (up to collisions of the 64-bit hash, as there) */
void rsan_lean_hash(const int *live, int nlive, uint64_t *h, uint64_t *g) {
  const uint64_t *v = rsan_lean_v;
  uint64_t wide = 0;
  for (int c = 0; c < nlive; c++) wide |= v[2 * live[c]] | v[2 * live[c] + 1];
  for (int c = 0; c < nlive; c++) {
    uint64_t lo = v[2 * live[c]], lu = v[2 * live[c] + 1], *lane = c & 1 ? g : h;
    *lane = wide >> 32 ? rsan_closure_mix(rsan_closure_mix(*lane, lo), lu)
                       : rsan_closure_mix(*lane, lo | lu << 32);
  }
}

/* x ⊑ y ⊔ z on both timestamps; the fences' test of sched_closure_search.c fences_commute (b ⊑ a ⊔
 * W, a ⊑ b ⊔ W, t ⊑ s ⊔ M, s ⊑ t ⊔ M: a, s and b, t the threads' Ta and Tsc, W and M F's W and
 * Msc) on exact values */
static int leq_join(int x, int y, int z) {
  const uint64_t *v = rsan_lean_v;
  return v[2 * x] <= mx(v[2 * y], v[2 * z]) && v[2 * x + 1] <= mx(v[2 * y + 1], v[2 * z + 1]);
}
int rsan_lean_fences_commute(int ta, int tb) {
  int a = lean_tp(ta, LEAN_TA), b = lean_tp(tb, LEAN_TA), s = lean_tp(ta, LEAN_TSC),
      t = lean_tp(tb, LEAN_TSC);
  int w = lean_lp(lnaddrs, LEAN_W), m = lean_lp(lnaddrs, LEAN_MSC);
  return leq_join(b, a, w) && leq_join(a, b, w) && leq_join(t, s, m) && leq_join(s, t, m);
}

int rsan_lean_save(void) {
  if (depth == depth_cap) {
    int cap = depth_cap ? 2 * depth_cap : 64;
    uint64_t **ns = rsan_alloc((size_t)cap * sizeof *ns);
    if (stack) memcpy(ns, stack, (size_t)depth_cap * sizeof *ns);
    rsan_free(stack);
    stack = ns;
    depth_cap = cap;
  }
  if (!stack[depth]) stack[depth] = rsan_alloc_raw((size_t)nwords * sizeof **stack);
  memcpy(stack[depth], rsan_lean_v, (size_t)nwords * sizeof *rsan_lean_v);
  return ++depth;
}
void rsan_lean_restore(int d) {
  if (d != depth) __builtin_trap(); /* only the innermost (a crashed search: incomplete) */
  memcpy(rsan_lean_v, stack[d - 1], (size_t)nwords * sizeof *rsan_lean_v);
}
void rsan_lean_free(int d) {
  if (!d) return;
  if (d != depth) __builtin_trap();
  depth--;
}
