/* The clock engine: algorithm.md §3 with architecture.md "Decisions and pitfalls", and the
 * __rsan_* atomic entry points of rsan_interface.h.
 *
 * Every operation takes the location lock, runs the check, computes its timestamps once
 * (t = ++stamp(x), tU = ++stampU(x) for non-RMW writes) and passes them to both the hb_SC
 * side and the hb side, records the write in the location's history, then performs the real
 * memory operation with a seq_cst hardware atomic, still under the lock: the lock order per
 * location is mo and rf, which makes the observed run SC (algorithm.md §3, "Order per op").
 * Reports are rendered after the lock is dropped. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsan_internal.h"
#include "rsan_sched.h"

int rsan_inited;
int rsan_test_mode;
static rsan_spin init_lock;

extern void *__libc_calloc(size_t, size_t);
extern void *__libc_malloc(size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static void rsan_oom(void) {
  static const char msg[] = "pyrsan: out of memory in the runtime\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(2);
}

void *rsan_alloc(size_t n) {
  void *p = __libc_calloc(1, n ? n : 1);
  if (!p) rsan_oom();
  return p;
}

void *rsan_alloc_raw(size_t n) {
  void *p = __libc_malloc(n ? n : 1);
  if (!p) rsan_oom();
  return p;
}

void *rsan_realloc(void *p, size_t n) {
  void *q = __libc_realloc(p, n ? n : 1);
  if (!q) rsan_oom();
  return q;
}

void rsan_free(void *p) { __libc_free(p); }

void rsan_die_assert(const char *cond, const char *file, int line) {
  char buf[512];
  int n = 0;
  const char *parts[] = {"pyrsan: internal assertion failed: ", cond, " at ", file, ":"};
  for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++)
    for (const char *s = parts[i]; *s && n < 480; s++) buf[n++] = *s;
  char num[16];
  int k = 0;
  do num[k++] = (char)('0' + line % 10); while ((line /= 10) && k < 15);
  while (k) buf[n++] = num[--k];
  buf[n++] = '\n';
  (void)!write(2, buf, (size_t)n);
  abort();
}

static void rsan_at_exit(void) { rsan_report_at_exit(); }

void rsan_init_slow(void) {
  rsan_spin_lock(&init_lock);
  if (!rsan_inited) {
    rsan_flags_defaults();
    const char *env = getenv("PYRSAN_OPTIONS");
    char err[300];
    if (env && rsan_flags_parse(env, err, sizeof err) != 0) {
      (void)!write(2, err, strlen(err));
      _exit(2);
    }
    if (rsan_flag.help) rsan_flags_print_help();
    rsan_sched_init();
    if (rsan_flag.verbosity >= 1) {
      static const char msg[] = "pyrsan: runtime started\n";
      (void)!write(2, msg, sizeof msg - 1);
    }
    atexit(rsan_at_exit);
    __atomic_store_n(&rsan_inited, 1, __ATOMIC_RELEASE);
  }
  rsan_spin_unlock(&init_lock);
}


/* ---- invariants (algorithm.md §3.4), debug builds only ---- */
static inline void loc_check_invariants(const rsan_loc *l) {
#ifdef RSAN_DEBUG
  RSAN_ASSERT(rsan_clk_get(&l->W, l->id) == l->stamp);
  RSAN_ASSERT(rsan_clk_get(&l->Wsc, l->id) == l->stamp);
  RSAN_ASSERT(rsan_clk_getU(&l->W, l->id) == l->stampU);
  RSAN_ASSERT(rsan_clk_leq(&l->W, &l->Wsc, 1));
  RSAN_ASSERT(rsan_clk_leq(&l->Wsc, &l->Msc, 1));
#else
  (void)l;
#endif
}

/* Clocks are fused with their U twins (rsan_internal.h): each rule below is the rule of
 * algorithm.md for the plain clock and, in the same call, for its U twin. Where a rule gives
 * the plain side x@t and the U side nothing (RMW), the call passes tsU = 0 (max with 0).
 *
 * Two thread clocks holding the same value (e.g. Tc and Ta after an acquire fence) that get
 * the same update are updated once and shared again: one copy instead of two. a is the higher
 * clock (Ta before Tc): a lower clock never gets ahead of a higher one (rsan_internal.h). */
static inline void set_max2(rsan_clk *a, rsan_clk *b, uint64_t id, uint64_t ts, uint64_t tsU) {
  if (rsan_clk_same(a, b)) {
    rsan_clk_set_max(a, id, ts, tsU);
    rsan_clk_assign(b, a);
  } else {
    rsan_clk_set_max(a, id, ts, tsU);
    rsan_clk_set_max(b, id, ts, tsU);
  }
}

/* ---- hb_SC side: algorithm.md §3.2 ---- */
/* Load: Msc(x) ⊔= Tsc; Tsc ⊔= Wsc(x) (and the U pair: MscU(x) ⊔= TscU; TscU ⊔= WscU(x)). */
static void sc_load(rsan_thread *t, rsan_loc *l) {
  rsan_clk_join(&l->Msc, &t->Tsc);
  rsan_clk_join(&t->Tsc, &l->Wsc);
}

/* Store (tU != 0) or RMW / successful CAS / F-RMW (tU == 0: no U increment):
 * Msc(x) ⊔= x@t; Tsc ⊔= Msc(x); Wsc(x) := Tsc; Msc(x) := Tsc (U: x@tU, or nothing).
 * Computed as Tsc ⊔= Msc(x); Tsc ⊔= x@t (the same value: Msc(x) is overwritten anyway), so
 * Msc(x) is never copied; Wsc(x) and Msc(x) then share Tsc's buffer. */
static void sc_write(rsan_thread *t, rsan_loc *l, uint64_t ts, uint64_t tU) {
  rsan_clk_join(&t->Tsc, &l->Msc);
  rsan_clk_set_max(&t->Tsc, l->id, ts, tU);
  rsan_clk_assign(&l->Wsc, &t->Tsc);
  rsan_clk_assign(&l->Msc, &t->Tsc);
}

/* ---- hb side (RC20): algorithm.md §3.3 ---- */
/* Load(mo): Ta ⊔= W(x); mo ⊒ acq: Tc ⊔= W(x), else Tc ⊔= W(x)|x (coherence only); U alike. */
static void hb_load(rsan_thread *t, rsan_loc *l, int mo) {
  int same = rsan_clk_same(&t->Tc, &t->Ta);
  rsan_clk_join(&t->Ta, &l->W);
  if (mo_acq(mo)) {
    if (same) /* Tc = Ta before: Tc ⊔ W(x) = Ta ⊔ W(x) */
      rsan_clk_assign(&t->Tc, &t->Ta);
    else
      rsan_clk_join(&t->Tc, &l->W);
  } else {
    rsan_clk_join_restricted(&t->Tc, &l->W, l->id);
  }
}

/* Store(mo): Ta, Tc ⊔= x@t (U: x@tU); mo ⊒ rel: W(x) := Tc, else W(x) := Tr ⊔ x@t (a relaxed
 * store releases only what a release fence did). (W(x) ⊔= x@t first is subsumed.) */
static void hb_store(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts, uint64_t tU) {
  set_max2(&t->Ta, &t->Tc, l->id, ts, tU);
  if (mo_rel(mo)) {
    rsan_clk_assign(&l->W, &t->Tc);
  } else {
    rsan_clk_assign(&l->W, &t->Tr);
    rsan_clk_set_max(&l->W, l->id, ts, tU);
  }
}

/* RMW(mo): W(x) ⊔= x@t; Ta, Tc ⊔= x@t (no U increment). Read part: Ta ⊔= W(x); mo ⊒ acq:
 * Tc ⊔= W(x), else TcU ⊔= WU(x)|x. Write part, joined (release sequences run through RMWs):
 * mo ⊒ rel: W(x) ⊔= Tc, else W(x) ⊔= Tr.
 * Computed with W(x) ⊔= x@t moved to the end (the same values: Ta and Tc get x@t anyway, and
 * W(x)'s final value contains x@t either through Tc or explicitly), so W(x) is not copied
 * before it is replaced; the restricted join covers both sides (the plain side is a no-op:
 * Tc(x) = t already). */
static void hb_rmw(rsan_thread *t, rsan_loc *l, int mo, uint64_t ts) {
  int same = rsan_clk_same(&t->Tc, &t->Ta);
  rsan_clk_join(&t->Ta, &l->W);
  rsan_clk_set_max(&t->Ta, l->id, ts, 0);
  if (mo_acq(mo)) {
    if (same)
      rsan_clk_assign(&t->Tc, &t->Ta);
    else {
      rsan_clk_join(&t->Tc, &l->W);
      rsan_clk_set_max(&t->Tc, l->id, ts, 0);
    }
  } else {
    rsan_clk_join_restricted(&t->Tc, &l->W, l->id);
    rsan_clk_set_max(&t->Tc, l->id, ts, 0);
  }
  if (mo_rel(mo) && mo_acq(mo)) {
    RSAN_ASSERT(rsan_clk_leq(&l->W, &t->Tc, 3));
    rsan_clk_assign(&l->W, &t->Tc); /* Tc ⊒ W(x) ⊔ x@t here: W(x) ⊔ x@t ⊔ Tc = Tc */
  } else if (mo_rel(mo)) {
    rsan_clk_join(&l->W, &t->Tc);
  } else {
    rsan_clk_join(&l->W, &t->Tr);
    rsan_clk_set_max(&l->W, l->id, ts, 0);
  }
}

/* ---- fences: algorithm.md §3.3 and architecture.md (SC fence on both sides) ---- */
/* Tc := Ta (U alike): shares Ta's buffer, nothing when they are already equal */
static void fence_acq(rsan_thread *t) {
  if (!rsan_clk_same(&t->Tc, &t->Ta)) rsan_clk_assign(&t->Tc, &t->Ta);
  rsan_race_fence_acq(t); /* algorithm.md §5, fence acq */
}
/* Tr := Tc (U alike) */
static void fence_rel(rsan_thread *t) {
  if (!rsan_clk_same(&t->Tr, &t->Tc)) rsan_clk_assign(&t->Tr, &t->Tc);
  rsan_race_fence_rel(t); /* algorithm.md §5, fence rel */
}
/* acquire part; RMW(F, acq_rel) on both sides under the global SC lock (F's entry lives
 * inline in every clock, so bumping it copies nothing; joins with F's clocks are skipped when
 * they are known to be contained, e.g. when this thread made the last fence); release part */
static void fence_sc(rsan_thread *t) {
  fence_acq(t);
  rsan_loc *f = rsan_loc_fence(); /* its lock is the global SC lock */
  rsan_spin_lock(&f->lock);
  uint64_t ts = ++f->stamp; /* RMW on F: no check, no U increment */
  sc_write(t, f, ts, 0);
  hb_rmw(t, f, RSAN_ACQ_REL, ts);
  rsan_race_rmw(t, f, RSAN_ACQ_REL); /* algorithm.md §5, fence sc: RMW acq_rel on F */
  loc_check_invariants(f);
  rsan_spin_unlock(&f->lock);
  fence_rel(t);
  rsan_thread_check_invariants(t);
}

/* The SC fence of a seq_cst access under sc_accesses=fenced, as its own scheduling point:
 * a controlled scheduler must be able to preempt between the leading fence, the access and
 * the trailing fence (docs/scheduling.md; testsuite/reference FENCED_SC_STORE). */
static void fence_sc_step(rsan_thread *t) {
  RSAN_SCHED_POINT(RSAN_SK_FENCE_SC, NULL, 0);
  fence_sc(t);
}

/* ---- the real memory operations (seq_cst hardware atomics) ---- */
static inline uint64_t mem_load(const void *p, int size) {
  switch (size) {
  case 1: return __atomic_load_n((const uint8_t *)p, __ATOMIC_SEQ_CST);
  case 2: return __atomic_load_n((const uint16_t *)p, __ATOMIC_SEQ_CST);
  case 4: return __atomic_load_n((const uint32_t *)p, __ATOMIC_SEQ_CST);
  default: return __atomic_load_n((const uint64_t *)p, __ATOMIC_SEQ_CST);
  }
}

static inline void mem_store(void *p, uint64_t v, int size) {
  switch (size) {
  case 1: __atomic_store_n((uint8_t *)p, (uint8_t)v, __ATOMIC_SEQ_CST); break;
  case 2: __atomic_store_n((uint16_t *)p, (uint16_t)v, __ATOMIC_SEQ_CST); break;
  case 4: __atomic_store_n((uint32_t *)p, (uint32_t)v, __ATOMIC_SEQ_CST); break;
  default: __atomic_store_n((uint64_t *)p, v, __ATOMIC_SEQ_CST); break;
  }
}

/* Returns 1 on success; *old receives the value read. */
static inline int mem_cas(void *p, uint64_t *old, uint64_t des, int weak, int size) {
  switch (size) {
  case 1: {
    uint8_t e = (uint8_t)*old;
    int ok = __atomic_compare_exchange_n((uint8_t *)p, &e, (uint8_t)des, weak, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *old = e;
    return ok;
  }
  case 2: {
    uint16_t e = (uint16_t)*old;
    int ok = __atomic_compare_exchange_n((uint16_t *)p, &e, (uint16_t)des, weak, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *old = e;
    return ok;
  }
  case 4: {
    uint32_t e = (uint32_t)*old;
    int ok = __atomic_compare_exchange_n((uint32_t *)p, &e, (uint32_t)des, weak, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *old = e;
    return ok;
  }
  default: {
    uint64_t e = *old;
    int ok = __atomic_compare_exchange_n((uint64_t *)p, &e, des, weak, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    *old = e;
    return ok;
  }
  }
}

static inline uint64_t size_mask(int size) { return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1; }
static inline int64_t sext(uint64_t v, int size) {
  int sh = 64 - 8 * size;
  return sh ? (int64_t)(v << sh) >> sh : (int64_t)v;
}

static double fmaxnum(double a, double b) {
  if (__builtin_isnan(a)) return b;
  if (__builtin_isnan(b)) return a;
  if (a == b) return __builtin_signbit(a) ? b : a; /* max(-0, +0) = +0 */
  return a > b ? a : b;
}
static double fminnum(double a, double b) {
  if (__builtin_isnan(a)) return b;
  if (__builtin_isnan(b)) return a;
  if (a == b) return __builtin_signbit(a) ? a : b;
  return a < b ? a : b;
}
static double fmaximum(double a, double b) {
  if (__builtin_isnan(a) || __builtin_isnan(b)) return a + b;
  return fmaxnum(a, b);
}
static double fminimum(double a, double b) {
  if (__builtin_isnan(a) || __builtin_isnan(b)) return a + b;
  return fminnum(a, b);
}

static double bits_to_fp(uint64_t v, int size) {
  if (size == 8) {
    double d;
    memcpy(&d, &v, 8);
    return d;
  }
  if (size == 4) {
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  uint16_t u = (uint16_t)v; /* size 2: IEEE half */
  _Float16 h;
  memcpy(&h, &u, 2);
  return (double)h;
}

static uint64_t fp_to_bits(double d, int size) {
  if (size == 8) {
    uint64_t v;
    memcpy(&v, &d, 8);
    return v;
  }
  if (size == 4) {
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  _Float16 h = (_Float16)d;
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}

/* The new value of an atomicrmw (rsan_interface.h, enum rsan_rmw_op), at the access size. */
static uint64_t rmw_apply(int op, uint64_t old, uint64_t v, int size) {
  uint64_t m = size_mask(size);
  old &= m;
  v &= m;
  uint64_t r;
  switch (op) {
  case RSAN_RMW_XCHG: r = v; break;
  case RSAN_RMW_ADD: r = old + v; break;
  case RSAN_RMW_SUB: r = old - v; break;
  case RSAN_RMW_AND: r = old & v; break;
  case RSAN_RMW_NAND: r = ~(old & v); break;
  case RSAN_RMW_OR: r = old | v; break;
  case RSAN_RMW_XOR: r = old ^ v; break;
  case RSAN_RMW_MAX: r = sext(old, size) >= sext(v, size) ? old : v; break;
  case RSAN_RMW_MIN: r = sext(old, size) <= sext(v, size) ? old : v; break;
  case RSAN_RMW_UMAX: r = old >= v ? old : v; break;
  case RSAN_RMW_UMIN: r = old <= v ? old : v; break;
  case RSAN_RMW_FADD: r = fp_to_bits(bits_to_fp(old, size) + bits_to_fp(v, size), size); break;
  case RSAN_RMW_FSUB: r = fp_to_bits(bits_to_fp(old, size) - bits_to_fp(v, size), size); break;
  case RSAN_RMW_FMAX: r = fp_to_bits(fmaxnum(bits_to_fp(old, size), bits_to_fp(v, size)), size); break;
  case RSAN_RMW_FMIN: r = fp_to_bits(fminnum(bits_to_fp(old, size), bits_to_fp(v, size)), size); break;
  case RSAN_RMW_FMAXIMUM: r = fp_to_bits(fmaximum(bits_to_fp(old, size), bits_to_fp(v, size)), size); break;
  case RSAN_RMW_FMINIMUM: r = fp_to_bits(fminimum(bits_to_fp(old, size), bits_to_fp(v, size)), size); break;
  case RSAN_RMW_UINC_WRAP: r = old >= v ? 0 : old + 1; break;
  case RSAN_RMW_UDEC_WRAP: r = (old == 0 || old > v) ? v : old - 1; break;
  case RSAN_RMW_USUB_COND: r = old >= v ? old - v : old; break;
  case RSAN_RMW_USUB_SAT: r = old >= v ? old - v : 0; break;
  default: r = old; break; /* unknown op: leave memory unchanged */
  }
  return r & m;
}

/* Performs the RMW with a CAS loop (correct even against uninstrumented writers). */
static uint64_t mem_rmw(void *p, int op, uint64_t v, int size, uint64_t *newv) {
  uint64_t old = mem_load(p, size);
  for (;;) {
    uint64_t n = rmw_apply(op, old, v, size);
    if (mem_cas(p, &old, n, 0, size)) {
      *newv = n;
      return old;
    }
  }
}

/* ---- history and reports ---- */
static void hist_record(rsan_loc *l, rsan_thread *t, uintptr_t fa, uint64_t ts, int rmw,
                        uint64_t site, uint64_t value, int order, int op, int rmw_op, int size) {
  if (RSAN_UNLIKELY(!l->hist)) l->hist = rsan_alloc(RSAN_HIST * sizeof(rsan_hist));
  rsan_hist *h = &l->hist[l->hist_next++ % RSAN_HIST];
  h->ts = ts;
  h->tsU = l->stampU;
  h->site = site;
  h->value = value;
  uint32_t n = rsan_thread_stack(t, fa, h->stack, RSAN_HIST_STACK);
  for (uint32_t i = n; i < RSAN_HIST_STACK; i++) h->stack[i] = 0;
  h->tid = t->tid;
  h->order = (uint8_t)order;
  h->op = (uint8_t)op;
  h->rmw_op = (uint8_t)rmw_op;
  h->rmw = (uint8_t)rmw;
  h->size = (uint8_t)size;
}

/* The history entry of the write with timestamp ts (U timestamp of a non-RMW write when
 * is_write). Returns 0 initial value, 1 found, 2 out of the window. */
static int hist_find(const rsan_loc *l, int is_write, uint64_t ts, rsan_hist *out) {
  if (ts == 0) return 0;
  if (!l->hist) return 2;
  for (int i = 0; i < RSAN_HIST; i++) {
    const rsan_hist *h = &l->hist[i];
    if (!h->ts) continue;
    if (is_write ? (!h->rmw && h->tsU == ts) : (h->ts == ts)) {
      *out = *h;
      return 1;
    }
  }
  return 2;
}

static void fill_report(rsan_report_info *r, rsan_thread *t, rsan_loc *l, int is_write, int op,
                        int rmw_op, int order, int size, uint64_t site, uintptr_t fa) {
  memset(r, 0, sizeof *r);
  r->is_write = is_write;
  r->strong_cas = op == RSAN_OP_CAS_STRONG;
  r->addr = l->addr;
  r->loc_id = l->id;
  r->site = site;
  r->tid = t->tid;
  r->op = op;
  r->rmw_op = rmw_op;
  r->order = order;
  r->size = size;
  r->nstack = rsan_thread_stack(t, fa, r->stack, RSAN_SHADOW_MAX);
  if (is_write) {
    r->ts_hb = rsan_clk_getU(&t->Tc, l->id);
    r->ts_sc = rsan_clk_getU(&t->Tsc, l->id);
  } else {
    r->ts_hb = rsan_clk_get(&t->Tc, l->id);
    r->ts_sc = rsan_clk_get(&t->Tsc, l->id);
  }
  r->prev_state = hist_find(l, is_write, r->ts_hb, &r->prev);
  r->forced_state = hist_find(l, is_write, r->ts_sc, &r->forced);
  /* the thread's latest earlier access to another location */
  for (uint32_t k = 1; k <= RSAN_RECENT && k <= t->recent_next; k++) {
    const rsan_recent *a = &t->recent[(t->recent_next - k) % RSAN_RECENT];
    if (a->loc_id != l->id || a->addr != l->addr) {
      r->have_before = 1;
      r->before = *a;
      break;
    }
  }
}

/* ---- value tracking: algorithm.md §4 in the equivalent reading of architecture.md ----
 * Tval(τ)(x,v) = the largest timestamp of a write of v to x below Tsc(τ)(x), so a check
 * "some stale write of v" asks for a write of v with a timestamp in [Tc(τ)(x), Tsc(τ)(x)).
 * The writes known are the initial one (timestamp 0, its value read when the location was
 * first touched) and the last RSAN_HIST ones; an older write is assumed not to exist (a
 * miss, never a false alarm). Values compare at the access size. */

/* Records the initial value (the ts-0 write) at the first access of the location. */
static inline void loc_touch(rsan_loc *l, const void *p, int size) {
  if (RSAN_UNLIKELY(!l->init_known)) {
    l->init_value = mem_load(p, size);
    l->init_known = 1;
  }
}

/* The known write with timestamp ts: 1 and its value / U stamp / rmw flag, else 0. */
static int known_write(const rsan_loc *l, uint64_t ts, uint64_t *value, uint64_t *tsU, int *rmw) {
  if (ts == 0) {
    if (!l->init_known) return 0;
    *value = l->init_value;
    *tsU = 0;
    *rmw = 0;
    return 1;
  }
  if (!l->hist) return 0;
  for (int i = 0; i < RSAN_HIST; i++) {
    const rsan_hist *h = &l->hist[i];
    if (h->ts == ts) {
      *value = h->value;
      *tsU = h->tsU;
      *rmw = h->rmw;
      return 1;
    }
  }
  return 0;
}

/* Read-type value check: a known write with a timestamp in [Tc(x), Tsc(x)) whose value is v
 * (want_eq) or differs from v (!want_eq): a read may still see it, SC forbids it. */
static int stale_value_read(const rsan_thread *t, const rsan_loc *l, uint64_t v, uint64_t m,
                            int want_eq) {
  uint64_t tc = rsan_clk_get(&t->Tc, l->id), tsc = rsan_clk_get(&t->Tsc, l->id);
  if (tsc <= tc) return 0;
  if (tc == 0 && l->init_known && ((l->init_value & m) == (v & m)) == want_eq) return 1;
  if (!l->hist) return 0;
  for (int i = 0; i < RSAN_HIST; i++) {
    const rsan_hist *h = &l->hist[i];
    if (h->ts && h->ts >= tc && h->ts < tsc && ((h->value & m) == (v & m)) == want_eq) return 1;
  }
  return 0;
}

/* Write-type value check of a blocking / strong CAS that succeeds reading e (algorithm.md §4,
 * TcU(x) <= TvalU(x,e)): an RMW must be placed right after the write it reads (atomicity),
 * so it can read only the last write of a block of writes (a non-RMW write and the RMWs
 * after it). Violation iff a closed block k with TcU(x) <= k < TscU(x) ends with a write of e:
 * a known write w of e with U stamp k in that range whose successor (timestamp ts(w)+1) is
 * known and not an RMW. */
static int block_ends_with(const rsan_loc *l, uint64_t ts, uint64_t tsU, uint64_t val,
                           uint64_t tcU, uint64_t tscU, uint64_t e, uint64_t m) {
  uint64_t nval, nu;
  int nrmw;
  if (tsU < tcU || tsU >= tscU || (val & m) != (e & m)) return 0;
  return known_write(l, ts + 1, &nval, &nu, &nrmw) && !nrmw;
}

static int stale_value_rmw(const rsan_thread *t, const rsan_loc *l, uint64_t e, uint64_t m) {
  uint64_t tcU = rsan_clk_getU(&t->Tc, l->id), tscU = rsan_clk_getU(&t->Tsc, l->id);
  if (tscU <= tcU) return 0;
  if (l->init_known && block_ends_with(l, 0, 0, l->init_value, tcU, tscU, e, m)) return 1;
  if (!l->hist) return 0;
  for (int i = 0; i < RSAN_HIST; i++) {
    const rsan_hist *h = &l->hist[i];
    if (h->ts && block_ends_with(l, h->ts, h->tsU, h->value, tcU, tscU, e, m)) return 1;
  }
  return 0;
}

/* algorithm.md §3.1 */
static inline int read_violation(const rsan_thread *t, const rsan_loc *l) {
  return rsan_clk_get(&t->Tsc, l->id) > rsan_clk_get(&t->Tc, l->id);
}
static inline int write_violation(const rsan_thread *t, const rsan_loc *l) {
  return rsan_clk_getU(&t->Tsc, l->id) > rsan_clk_getU(&t->Tc, l->id);
}

static inline int checks_on(const rsan_loc *l) { return rsan_flag.report_robustness && !l->nocheck; }

/* The shadow part of an atomic access (algorithm.md §5: atomics are recorded too, so that
 * mixed atomic / plain races are found). Made under the location lock: a thread that
 * synchronises with this access (it takes the lock later) must find the cell already there,
 * or its own plain access would be checked first and this one then reported against it. A
 * race report made here takes only leaf locks (report, sites, threads, heap blocks). */
static inline void race_atomic(rsan_thread *t, const void *p, int size, int wr, uint64_t epoch,
                               uint64_t site, uintptr_t fa) {
  if (rsan_flag.report_races) rsan_race_access(t, (uintptr_t)p, (uint64_t)size, wr, 1, epoch, site, fa);
}

/* ---- the operations ---- */
static uint64_t op_load(void *p, int size, int order, uint64_t site, uintptr_t fa) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_current();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_ACQUIRE : order;
  if (fenced) fence_sc_step(t);
  RSAN_SCHED_POINT(RSAN_SK_LOAD, p, 0);
  rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
  loc_touch(l, p, size);
  rsan_report_info rep;
  int bad = checks_on(l) && read_violation(t, l);
  if (RSAN_UNLIKELY(bad)) fill_report(&rep, t, l, 0, RSAN_OP_LOAD, 0, order, size, site, fa);
  sc_load(t, l);
  hb_load(t, l, mo);
  rsan_race_load(t, l, mo);
  uint64_t v = mem_load(p, size);
  rsan_thread_note_access(t, site, l, RSAN_OP_LOAD, 0, size);
  loc_check_invariants(l);
  race_atomic(t, p, size, 0, rsan_race_epoch(t), site, fa);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, v, 0);
  if (fenced) fence_sc_step(t);
  return v;
}

static void op_store(void *p, uint64_t v, int size, int order, uint64_t site, uintptr_t fa) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_current();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_RELEASE : order;
  if (fenced) fence_sc_step(t);
  RSAN_SCHED_POINT(RSAN_SK_STORE, p, 1);
  rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
  loc_touch(l, p, size);
  rsan_report_info rep;
  int bad = checks_on(l) && write_violation(t, l);
  if (RSAN_UNLIKELY(bad)) fill_report(&rep, t, l, 1, RSAN_OP_STORE, 0, order, size, site, fa);
  uint64_t ts = ++l->stamp, tU = ++l->stampU;
  sc_write(t, l, ts, tU);
  hb_store(t, l, mo, ts, tU);
  uint64_t race_epoch = rsan_race_store(t, l, mo);
  v &= size_mask(size);
  hist_record(l, t, fa, ts, 0, site, v, order, RSAN_OP_STORE, 0, size);
  mem_store(p, v, size);
  rsan_thread_note_access(t, site, l, RSAN_OP_STORE, 0, size);
  loc_check_invariants(l);
  race_atomic(t, p, size, 1, race_epoch, site, fa);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, v, 1);
  if (fenced) fence_sc_step(t);
}

static uint64_t op_rmw(void *p, uint64_t v, int op, int size, int order, uint64_t site, uintptr_t fa) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_current();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_ACQ_REL : order;
  if (fenced) fence_sc_step(t);
  RSAN_SCHED_POINT(RSAN_SK_RMW, p, 1);
  rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
  loc_touch(l, p, size);
  rsan_report_info rep;
  int bad = checks_on(l) && write_violation(t, l);
  if (RSAN_UNLIKELY(bad)) fill_report(&rep, t, l, 1, RSAN_OP_RMW, op, order, size, site, fa);
  uint64_t ts = ++l->stamp; /* no U increment for RMW */
  sc_write(t, l, ts, 0);
  hb_rmw(t, l, mo, ts);
  uint64_t race_epoch = rsan_race_rmw(t, l, mo);
  uint64_t newv;
  uint64_t old = mem_rmw(p, op, v, size, &newv);
  hist_record(l, t, fa, ts, 1, site, newv, order, RSAN_OP_RMW, op, size);
  rsan_thread_note_access(t, site, l, RSAN_OP_RMW, op, size);
  loc_check_invariants(l);
  race_atomic(t, p, size, 1, race_epoch, site, fa);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) {
    rep.rmw_op = op;
    rsan_report_robustness(&rep);
  }
  /* an RMW that leaves memory as it was (test-and-set on a held flag) may be a spin loop */
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, old, newv != (old & size_mask(size)));
  if (fenced) fence_sc_step(t);
  return old;
}

static rsan_cas_ret op_cas(void *p, uint64_t expected, uint64_t desired, int size, int succ, int fail,
                           int weak, uint64_t site, uintptr_t fa) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_current();
  int fenced = (succ == RSAN_SEQ_CST || fail == RSAN_SEQ_CST) && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int ms = succ == RSAN_SEQ_CST ? RSAN_ACQ_REL : succ;
  int mf = fail == RSAN_SEQ_CST || fail == RSAN_ACQ_REL ? RSAN_ACQUIRE : fail;
  if (mf == RSAN_RELEASE) mf = RSAN_RELAXED; /* not a valid failure order */
  int opk = weak ? RSAN_OP_CAS_WEAK : RSAN_OP_CAS_STRONG;
  if (fenced) fence_sc_step(t);
  RSAN_SCHED_POINT(RSAN_SK_RMW, p, 1);
  rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
  loc_touch(l, p, size);
  rsan_report_info rep;
  uint64_t m = size_mask(size);
  /* weak CAS: the read check (it may fail reading any stale write). Strong CAS, exact
   * (algorithm.md §4, architecture.md "Value tracking"): write-type if it can succeed reading
   * a stale write of the expected value, read-type if it can fail reading a stale write of
   * another value. */
  int bad = 0, bad_write = 0;
  if (checks_on(l)) {
    if (weak) {
      bad = read_violation(t, l);
    } else if (stale_value_rmw(t, l, expected, m)) {
      bad = bad_write = 1;
    } else {
      bad = stale_value_read(t, l, expected, m, 0);
    }
  }
  if (RSAN_UNLIKELY(bad)) {
    fill_report(&rep, t, l, bad_write, opk, 0, succ, size, site, fa);
    rep.strong_cas = 0; /* the check is exact: no "value tracking off" note */
  }
  uint64_t old = expected & m;
  int ok = mem_cas(p, &old, desired & m, weak != 0, size);
  uint64_t race_epoch;
  if (ok) { /* success: RMW(mo_s) */
    uint64_t ts = ++l->stamp;
    sc_write(t, l, ts, 0);
    hb_rmw(t, l, ms, ts);
    race_epoch = rsan_race_rmw(t, l, ms);
    hist_record(l, t, fa, ts, 1, site, desired & m, succ, opk, 0, size);
  } else { /* failure: Load(mo_f) */
    sc_load(t, l);
    hb_load(t, l, mf);
    rsan_race_load(t, l, mf);
    race_epoch = rsan_race_epoch(t);
  }
  rsan_thread_note_access(t, site, l, opk, 0, size);
  loc_check_invariants(l);
  race_atomic(t, p, size, ok, race_epoch, site, fa);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
  if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
  /* a failed CAS writes nothing: a CAS retry loop is a spin loop */
  if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, old, ok);
  if (fenced) fence_sc_step(t);
  rsan_cas_ret r = {old, (uint64_t)ok};
  return r;
}

/* wait(x = v) (papers/002 §4.3, algorithm.md §4): blocks until x holds v. Failed attempts
 * create no events: each attempt re-reads memory under the location lock and, when the value
 * differs, drops the lock and yields. The thread's clocks do not change between attempts
 * (it makes no event), so the check is made once, at the first attempt, before blocking: a
 * stale write of v with a timestamp in [Tc(x), Tsc(x)) (Tc(x) <= Tval(x,v)). Checking before
 * blocking matters: in BARW₀,₀ one wait blocks forever in every SC run. The successful read
 * is a Load(mo). block: 1 blocks; 0 (tests) one attempt, checked; WAIT_SPIN one attempt of a
 * recognised spin loop (__rsan_spin_load_N): no check and no event unless it reads v (the
 * check is then made at the successful read); *seen gets the value read. WAIT_SPIN_NE: the
 * same for a loop that leaves on any value other than v (wait(x != v)): its successful read
 * reads some value other than v, so it is stale iff a known write of another value has a
 * timestamp in [Tc(x), Tsc(x)) (the read check of a failing strong CAS). */
#define WAIT_SPIN 2
#define WAIT_SPIN_NE 3
static int op_wait(void *p, uint64_t v, int size, int order, uint64_t site, uintptr_t fa, int block,
                   uint64_t *seen) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_current();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_ACQUIRE : order;
  uint64_t m = size_mask(size);
  v &= m;
  int spin = block == WAIT_SPIN || block == WAIT_SPIN_NE, ne = block == WAIT_SPIN_NE;
  if (fenced && spin) { /* the fence belongs to the event: only when it may happen */
    RSAN_SCHED_POINT(RSAN_SK_WAIT, p, 0);
    rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
    uint64_t got = mem_load(p, size);
    rsan_loc_release(l);
    if ((got == v) == ne) {
      *seen = got;
      /* a failed attempt: no point in retrying before another thread writes x */
      if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_retry_after_write(p);
      return 0;
    }
  }
  if (fenced) fence_sc_step(t);
  for (int first = 1;; first = 0) {
    RSAN_SCHED_POINT(RSAN_SK_WAIT, p, 0);
    rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
    loc_touch(l, p, size);
    rsan_report_info rep;
    uint64_t got = mem_load(p, size);
    int ok = (got == v) != ne;
    if (spin) *seen = got;
    int bad = first && (ok || !spin) && checks_on(l) && stale_value_read(t, l, v, m, !ne);
    if (RSAN_UNLIKELY(bad)) fill_report(&rep, t, l, 0, RSAN_OP_WAIT, 0, order, size, site, fa);
    if (ok) {
      sc_load(t, l);
      hb_load(t, l, mo);
      rsan_race_load(t, l, mo);
      rsan_thread_note_access(t, site, l, RSAN_OP_WAIT, 0, size);
      loc_check_invariants(l);
    }
    if (ok) race_atomic(t, p, size, 0, rsan_race_epoch(t), site, fa);
    rsan_loc_release(l);
    if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
    if (ok) break;
    /* controlled scheduler: the thread is disabled until another thread writes x */
    if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_retry_after_write(p);
    if (block != 1) return 0; /* tests, spin loads: one attempt, no event */
    if (!rsan_sched_on) sched_yield();
  }
  rsan_thread_check_invariants(t);
  if (fenced) fence_sc_step(t);
  return 1;
}

/* BCAS(x, e -> d) (papers/002 §4.3, algorithm.md §4): a strong CAS retried until it succeeds;
 * failed attempts create no events, success is one RMW(mo). Checked once at the first
 * attempt (as wait): write-type iff it can succeed reading a stale write of e that ends a
 * block (TcU(x) <= TvalU(x,e)). */
static int op_bcas(void *p, uint64_t e, uint64_t d, int size, int order, uint64_t site,
                   uintptr_t fa, int block) {
  rsan_ensure_init();
  rsan_thread *t = rsan_thread_current();
  int fenced = order == RSAN_SEQ_CST && rsan_flag.sc_accesses == RSAN_SC_FENCED;
  int mo = order == RSAN_SEQ_CST ? RSAN_ACQ_REL : order;
  uint64_t m = size_mask(size);
  e &= m;
  d &= m;
  if (fenced) fence_sc_step(t);
  for (int first = 1;; first = 0) {
    RSAN_SCHED_POINT(RSAN_SK_RMW, p, 1);
    rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
    loc_touch(l, p, size);
    rsan_report_info rep;
    int bad = first && checks_on(l) && stale_value_rmw(t, l, e, m);
    if (RSAN_UNLIKELY(bad)) fill_report(&rep, t, l, 1, RSAN_OP_BCAS, 0, order, size, site, fa);
    uint64_t old = e, race_epoch = 0;
    int ok = mem_cas(p, &old, d, 0, size);
    if (ok) {
      uint64_t ts = ++l->stamp; /* an RMW: no U increment */
      sc_write(t, l, ts, 0);
      hb_rmw(t, l, mo, ts);
      race_epoch = rsan_race_rmw(t, l, mo);
      hist_record(l, t, fa, ts, 1, site, d, order, RSAN_OP_BCAS, 0, size);
      rsan_thread_note_access(t, site, l, RSAN_OP_BCAS, 0, size);
      loc_check_invariants(l);
    }
    if (ok) race_atomic(t, p, size, 1, race_epoch, site, fa);
    rsan_loc_release(l);
    if (RSAN_UNLIKELY(bad)) rsan_report_robustness(&rep);
    if (ok) {
      if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_note_access(p, d, 1);
      break;
    }
    if (RSAN_UNLIKELY(rsan_sched_on)) rsan_sched_retry_after_write(p);
    if (!block) return 0; /* tests: one attempt, no event */
    if (!rsan_sched_on) sched_yield();
  }
  rsan_thread_check_invariants(t);
  if (fenced) fence_sc_step(t);
  return 1;
}

/* track(x, v): declares (x, v) critical. With the equivalent reading of value tracking
 * (architecture.md) every value is tracked exactly inside the history window, so this only
 * records the location's initial value if x was never touched. */
static void op_track(void *p, int size) {
  rsan_ensure_init();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)p);
  loc_touch(l, p, size);
  rsan_loc_release(l);
}

/* ---- ABI entry points (rsan_interface.h). Each records its own frame address for the
 * shadow call stack before calling the shared implementation. ---- */
#define RSAN_DEF_SIZE(N)                                                                         \
  RSAN_EXPORT RSAN_NOINLINE uint64_t __rsan_load_##N(void *p, int32_t order, uint64_t site) {    \
    return op_load(p, N, order, site, (uintptr_t)__builtin_frame_address(0));                    \
  }                                                                                              \
  RSAN_EXPORT RSAN_NOINLINE void __rsan_store_##N(void *p, uint64_t v, int32_t order,           \
                                                  uint64_t site) {                               \
    op_store(p, v, N, order, site, (uintptr_t)__builtin_frame_address(0));                       \
  }                                                                                              \
  RSAN_EXPORT RSAN_NOINLINE uint64_t __rsan_rmw_##N(void *p, uint64_t v, int32_t op,             \
                                                    int32_t order, uint64_t site) {              \
    return op_rmw(p, v, op, N, order, site, (uintptr_t)__builtin_frame_address(0));              \
  }                                                                                              \
  RSAN_EXPORT RSAN_NOINLINE rsan_cas_ret __rsan_cas_##N(void *p, uint64_t expected,              \
                                                        uint64_t desired, int32_t succ,          \
                                                        int32_t fail, int32_t weak,              \
                                                        uint64_t site) {                         \
    return op_cas(p, expected, desired, N, succ, fail, weak, site,                               \
                  (uintptr_t)__builtin_frame_address(0));                                        \
  }

#define RSAN_DEF_VALUE(N)                                                                        \
  RSAN_EXPORT RSAN_NOINLINE void __rsan_wait_##N(void *p, uint64_t v, int32_t order,             \
                                                 uint64_t site) {                                \
    op_wait(p, v, N, order, site, (uintptr_t)__builtin_frame_address(0), 1, NULL);               \
  }                                                                                              \
  RSAN_EXPORT RSAN_NOINLINE uint64_t __rsan_spin_load_##N(void *p, uint64_t expected,            \
                                                          int32_t order, uint64_t site) {        \
    uint64_t seen = 0;                                                                           \
    op_wait(p, expected, N, order, site, (uintptr_t)__builtin_frame_address(0), WAIT_SPIN,       \
            &seen);                                                                              \
    return seen;                                                                                 \
  }                                                                                              \
  RSAN_EXPORT RSAN_NOINLINE uint64_t __rsan_spin_load_ne_##N(void *p, uint64_t unexpected,       \
                                                             int32_t order, uint64_t site) {     \
    uint64_t seen = 0;                                                                           \
    op_wait(p, unexpected, N, order, site, (uintptr_t)__builtin_frame_address(0), WAIT_SPIN_NE,  \
            &seen);                                                                              \
    return seen;                                                                                 \
  }                                                                                              \
  RSAN_EXPORT RSAN_NOINLINE void __rsan_bcas_##N(void *p, uint64_t expected, uint64_t desired,   \
                                                 int32_t order, uint64_t site) {                 \
    op_bcas(p, expected, desired, N, order, site, (uintptr_t)__builtin_frame_address(0), 1);     \
  }                                                                                              \
  RSAN_EXPORT void __rsan_track_##N(void *p, uint64_t v, uint64_t site) {                        \
    (void)v;                                                                                     \
    (void)site;                                                                                  \
    op_track(p, N);                                                                              \
  }

RSAN_DEF_VALUE(1)
RSAN_DEF_VALUE(2)
RSAN_DEF_VALUE(4)
RSAN_DEF_VALUE(8)

/* Tests (testsuite/reference/explore.py drives one thread at a time and cannot block): one
 * attempt of wait / BCAS, with its check and, when memory holds the value, the operation
 * (1); otherwise nothing happens after the check (0): the attempt creates no event. */
RSAN_EXPORT int __rsan_test_wait_once(void *p, uint64_t v, int32_t size, int32_t order, uint64_t site) {
  return op_wait(p, v, size, order, site, (uintptr_t)__builtin_frame_address(0), 0, NULL);
}
RSAN_EXPORT int __rsan_test_bcas_once(void *p, uint64_t expected, uint64_t desired, int32_t size,
                                      int32_t order, uint64_t site) {
  return op_bcas(p, expected, desired, size, order, site, (uintptr_t)__builtin_frame_address(0), 0);
}

RSAN_DEF_SIZE(1)
RSAN_DEF_SIZE(2)
RSAN_DEF_SIZE(4)
RSAN_DEF_SIZE(8)

RSAN_EXPORT void __rsan_fence(int32_t order, int32_t singlethread, uint64_t site) {
  (void)site;
  if (singlethread) return; /* syncscope("singlethread"): a compiler barrier only */
  rsan_ensure_init();
  RSAN_SCHED_POINT(order == RSAN_SEQ_CST ? RSAN_SK_FENCE_SC : RSAN_SK_FENCE, NULL, 0);
  rsan_thread *t = rsan_thread_current();
  switch (order) {
  case RSAN_CONSUME:
  case RSAN_ACQUIRE: fence_acq(t); break;
  case RSAN_RELEASE: fence_rel(t); break;
  case RSAN_ACQ_REL:
    fence_acq(t);
    fence_rel(t);
    break;
  case RSAN_SEQ_CST: fence_sc(t); break; /* both models: SC fences are RMWs on F */
  default: break;
  }
  rsan_thread_check_invariants(t);
}

/* ---- rsan_sync.h: primitives modelled as acquire RMW / release store, checks off ---- */
void rsan_sync_acquire(rsan_thread *t, const void *addr) {
  rsan_ensure_init();
  if (!t) t = rsan_thread_current();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)addr);
  l->nocheck = 1;
  uint64_t ts = ++l->stamp;
  sc_write(t, l, ts, 0);
  hb_rmw(t, l, RSAN_ACQUIRE, ts);
  rsan_race_rmw(t, l, RSAN_ACQUIRE);
  loc_check_invariants(l);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
}

void rsan_sync_acquire_load(rsan_thread *t, const void *addr) {
  rsan_ensure_init();
  if (!t) t = rsan_thread_current();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)addr);
  l->nocheck = 1;
  sc_load(t, l);
  hb_load(t, l, RSAN_ACQUIRE);
  rsan_race_load(t, l, RSAN_ACQUIRE);
  loc_check_invariants(l);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
}

void rsan_sync_release(rsan_thread *t, const void *addr) {
  rsan_ensure_init();
  if (!t) t = rsan_thread_current();
  rsan_loc *l = rsan_loc_acquire((uintptr_t)addr);
  l->nocheck = 1;
  uint64_t ts = ++l->stamp, tU = ++l->stampU;
  sc_write(t, l, ts, tU);
  hb_store(t, l, RSAN_RELEASE, ts, tU);
  rsan_race_store(t, l, RSAN_RELEASE);
  loc_check_invariants(l);
  rsan_loc_release(l);
  rsan_thread_check_invariants(t);
}
