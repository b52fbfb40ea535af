/* Clocks (algorithm.md §2) as vector clocks over thread slots (rsan_internal.h,
 * docs/design/clocks.md): a clock with its U twin is one array of epochs by slot; its value
 * at a location is answered from the location's facts (location.c). Every operation here is
 * O(threads) and independent of the number of locations. Memory comes from rsan_alloc; it is
 * allocated only when a clock first holds more slots than before (the thread count grew). */
#include <string.h>

#include "rsan_internal.h"

/* versions (rsan_internal.h): blocks of RSAN_VER_BLOCK from one global counter, so that
 * threads do not contend on it; 0 is never handed out */
#define RSAN_VER_BLOCK 4096
static uint64_t ver_counter;
__thread uint64_t rsan_clk_ver_next, rsan_clk_ver_end;
uint64_t rsan_clk_newver_slow(void) {
  uint64_t b = __atomic_fetch_add(&ver_counter, RSAN_VER_BLOCK, __ATOMIC_RELAXED);
  rsan_clk_ver_next = b + 2;
  rsan_clk_ver_end = b + RSAN_VER_BLOCK + 1;
  return b + 1;
}

void rsan_clk_init(rsan_clk *c) {
  memset(c, 0, sizeof *c);
  c->cap = RSAN_CLK_INLINE;
}

/* ⊥, the W(x) or Wsc(x) of a record whose size class has no line for it (rsan_loc_w) */
const rsan_clk rsan_clk_bottom;

/* ---- shared snapshots (rsan_internal.h): immutable once made, freed by their last holder ----
 * Biased counts: the thread that takes a snapshot counts the references it gives location
 * clocks in its own record (rsan_xclk.nref, no atomic), while refs holds RSAN_SNAP_BIAS for
 * it; every other holder adds or drops one atomically. When the thread lets the snapshot go
 * it adds nref - RSAN_SNAP_BIAS. Until then refs >= RSAN_SNAP_BIAS - nref > 0 (every drop is
 * one of the references counted), so only the last holder of all sees 0 and frees it. */
#define RSAN_SNAP_BIAS (1ull << 62)
/* A snapshot's memory (docs/design/clocks.md §25): a plain malloc block of its size + 48,
 * the snapshot at its first 64-byte boundary (glibc's blocks are 16-byte aligned: at most 48
 * bytes in), the block's address kept in the refs line's padding. Not memalign: glibc's
 * memalign takes size + 64 + 32 bytes and leaves the rest as fragments, so a freed snapshot
 * (a block of its exact size) is too small for the next memalign of the same size and stays
 * free; a plain block of one size is reused by the next snapshot of that size. */
static rsan_snap *snap_alloc(uint32_t n) {
  size_t size = sizeof(rsan_snap) + (size_t)n * sizeof(uint32_t);
  char *raw = rsan_alloc_raw(size + 48);
  rsan_snap *p = (rsan_snap *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
  RSAN_ASSERT((char *)p + size <= raw + size + 48);
  memset(p, 0, sizeof *p); /* the header (every entry is written by the caller) */
  memcpy(p->refs_line, &raw, sizeof raw);
  return p;
}
void rsan_snap_free(rsan_snap *p) {
  char *raw;
  memcpy(&raw, p->refs_line, sizeof raw);
  rsan_free(raw);
}
_Static_assert(sizeof(((rsan_snap *)0)->refs_line) >= sizeof(char *),
               "the block's address fits the refs line");
static void snap_ref(rsan_snap *p) { __atomic_fetch_add(&p->refs, 1, __ATOMIC_RELAXED); }
static void snap_unref(rsan_snap *p) {
  if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) rsan_snap_free(p);
}
/* the exporting thread lets *p go, with the nref references it gave */
static void snap_let_go(rsan_snap **p, uint64_t nref) {
  if (*p && __atomic_add_fetch(&(*p)->refs, nref - RSAN_SNAP_BIAS, __ATOMIC_ACQ_REL) == 0) rsan_snap_free(*p);
  *p = NULL;
}

void rsan_clk_release(rsan_clk *c) {
  if (rsan_clk_shared(c)) snap_unref(c->u.s.snap);
  else if (c->cap > RSAN_CLK_INLINE) rsan_free(c->u.x.ext);
  rsan_clk_init(c);
}

void rsan_clk_unshare(rsan_clk *c) {
  snap_unref(c->u.s.snap);
  memset(c, 0, sizeof *c);
  c->cap = RSAN_CLK_INLINE_LOC;
}

/* ---- width (rsan_internal.h): a location clock's array is narrow (32-bit entries) while
 * every entry it holds fits; exact, since an entry is converted to 64 bits before a value
 * that does not fit is stored. ---- */
#define NARROW_MAX 0xFFFFFFFFull

uint64_t rsan_clk_get(const rsan_clk *c, uint32_t slot) {
  if (slot >= c->n) return 0;
  if (rsan_clk_shared(c)) {
    const rsan_snap *p = c->u.s.snap;
    uint64_t v = slot < p->n ? p->e[slot] : 0;
    for (int i = 0; i < RSAN_CLK_DELTA; i++)
      if (c->u.s.ep[i] && c->u.s.slot[i] == slot && c->u.s.ep[i] > v) v = c->u.s.ep[i];
    return v;
  }
  if (rsan_clk_narrow(c)) return ((const uint32_t *)c->u.x.ext)[slot];
  return rsan_clk_ce(c)[slot];
}

/* c's first n entries into a new array of cap entries of the given width (n <= cap, cap >
 * RSAN_CLK_INLINE); the rest of the new array is 0 */
static void clk_move(rsan_clk *c, uint32_t cap, int narrow) {
  void *e = rsan_alloc(cap * (narrow ? sizeof(uint32_t) : sizeof(uint64_t))); /* zeroed */
  for (uint32_t i = 0; i < c->n; i++) {
    uint64_t v = rsan_clk_get(c, i);
    RSAN_ASSERT(!narrow || v <= NARROW_MAX);
    if (narrow) ((uint32_t *)e)[i] = (uint32_t)v;
    else ((uint64_t *)e)[i] = v;
  }
  if (rsan_clk_shared(c)) snap_unref(c->u.s.snap);
  else if (c->cap > RSAN_CLK_INLINE) rsan_free(c->u.x.ext);
  memset(&c->u, 0, sizeof c->u);
  c->u.x.ext = e;
  c->u.x.narrow = (uint32_t)narrow;
  c->cap = cap;
}

/* a shared clock made a narrow array of its own (the same entries) */
static void clk_materialise(rsan_clk *c) {
  if (rsan_clk_shared(c)) clk_move(c, (c->n + 3) & ~3u, 1);
}

/* a narrow clock made 64-bit (an entry that does not fit is about to be stored) */
static void clk_widen(rsan_clk *c) {
  if (rsan_clk_narrow(c)) clk_move(c, c->cap, 0);
}

void rsan_clk_grow(rsan_clk *c, uint32_t n) {
  if (n <= c->n) return;
  clk_materialise(c);
  uint32_t have = c->cap > RSAN_CLK_INLINE ? c->cap : RSAN_CLK_INLINE;
  if (n > have) {
    uint32_t cap = (n + 3) & ~3u; /* exact (a multiple of 4): slot counts grow rarely */
    int narrow;
    if (c->cap > RSAN_CLK_INLINE) {
      narrow = (int)c->u.x.narrow;
    } else { /* an inline location clock starts narrow when its entries fit */
      narrow = c->cap == RSAN_CLK_INLINE_LOC;
      for (uint32_t i = 0; i < c->n; i++)
        if (c->u.inl[i] > NARROW_MAX) narrow = 0;
    }
    clk_move(c, cap, narrow);
  } else if (rsan_clk_narrow(c)) {
    memset((uint32_t *)c->u.x.ext + c->n, 0, (n - c->n) * sizeof(uint32_t));
  } else {
    memset(rsan_clk_e(c) + c->n, 0, (n - c->n) * sizeof(uint64_t));
  }
  c->n = n;
}

/* The join of clocks beyond RSAN_CLK_INLINE slots (the inline case is in rsan_internal.h):
 * built for AVX2 too (64-bit max as compare + blend, 4 entries at once), picked at load time. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define RSAN_JOIN_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef RSAN_JOIN_CLONES
#define RSAN_JOIN_CLONES
#endif
/* the max loops of rsan_clk_join_slow, by the widths of d and s: 1 when an entry of d
 * changed */
#define RSAN_JOIN_LOOP(name, DT, ST) \
  RSAN_JOIN_CLONES static int name(DT *d, const ST *s, uint32_t n) { \
    DT changed = 0; \
    for (uint32_t i = 0; i < n; i++) { \
      DT m = d[i] > s[i] ? d[i] : s[i]; \
      changed |= m ^ d[i]; \
      d[i] = m; \
    } \
    return changed != 0; \
  }
RSAN_JOIN_LOOP(join_loop, uint64_t, uint64_t)
RSAN_JOIN_LOOP(join_loop_wn, uint64_t, uint32_t)
RSAN_JOIN_LOOP(join_loop_nn, uint32_t, uint32_t)
#undef RSAN_JOIN_LOOP
/* narrow d, 64-bit s: *over is set when an entry of s does not fit; the entries stored
 * are then not all meaningful (the caller widens d and joins s again: every entry that
 * did not fit is s's, and every other one was stored right) */
RSAN_JOIN_CLONES static int join_loop_nw(uint32_t *d, const uint64_t *s, uint32_t n, int *over) {
  uint64_t changed = 0, high = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t m = d[i] > s[i] ? d[i] : s[i];
    high |= m >> 32;
    changed |= m ^ d[i];
    d[i] = (uint32_t)m;
  }
  *over = high != 0;
  return changed != 0;
}

/* dst ⊔= src, any widths (rsan_clk_join when a clock is not inline) */
void rsan_clk_join_slow(rsan_clk *dst, const rsan_clk *src) {
  clk_materialise(dst);
  uint32_t n = src->n;
  if (RSAN_UNLIKELY(n > dst->n)) rsan_clk_grow(dst, n);
  int changed, sn = rsan_clk_narrow(src);
  if (rsan_clk_shared(src)) { /* its snapshot, then its differences */
    const rsan_snap *p = src->u.s.snap;
    if (rsan_clk_narrow(dst)) changed = join_loop_nn((uint32_t *)dst->u.x.ext, p->e, p->n);
    else changed = join_loop_wn(rsan_clk_e(dst), p->e, p->n);
    if (rsan_clk_narrow(dst)) {
      uint32_t *d = (uint32_t *)dst->u.x.ext;
      for (int i = 0; i < RSAN_CLK_DELTA; i++) {
        uint32_t u = src->u.s.slot[i], v = src->u.s.ep[i];
        if (v > d[u]) d[u] = v, changed = 1; /* (an unused one, v = 0, never is) */
      }
    } else {
      uint64_t *d = rsan_clk_e(dst);
      for (int i = 0; i < RSAN_CLK_DELTA; i++) {
        uint32_t u = src->u.s.slot[i], v = src->u.s.ep[i];
        if (v > d[u]) d[u] = v, changed = 1;
      }
    }
  } else if (!rsan_clk_narrow(dst)) {
    uint64_t *d = rsan_clk_e(dst);
    changed = sn ? join_loop_wn(d, (const uint32_t *)src->u.x.ext, n) : join_loop(d, rsan_clk_ce(src), n);
  } else if (sn) {
    changed = join_loop_nn((uint32_t *)dst->u.x.ext, (const uint32_t *)src->u.x.ext, n);
  } else {
    int over;
    changed = join_loop_nw((uint32_t *)dst->u.x.ext, rsan_clk_ce(src), n, &over);
    if (RSAN_UNLIKELY(over)) { /* an epoch past 2^32 - 1: dst becomes 64-bit, then the join again */
      clk_widen(dst);
      (void)join_loop(rsan_clk_e(dst), rsan_clk_ce(src), n);
      changed = 1;
    }
  }
  if (changed || !dst->ver) dst->ver = rsan_clk_newver();
}

/* a location clock (marked inline, narrow, or shared): what sharing may replace */
static int is_loc_clock(const rsan_clk *c) {
  return c->cap == RSAN_CLK_INLINE_LOC || rsan_clk_narrow(c) || rsan_clk_shared(c);
}
/* dst (a location clock) := snapshot p and differences, the memory of dst's own dropped; nref:
 * the exporting thread's count of p's references (NULL: another holder's reference, counted
 * in refs). A dst that holds p already keeps its reference. */
static void share(rsan_clk *dst, rsan_snap *p, const uint32_t *slot, const uint32_t *ep, uint32_t n,
                  uint64_t ver, uint64_t *nref) {
  if (!rsan_clk_shared(dst) || dst->u.s.snap != p) {
    if (nref) ++*nref;
    else snap_ref(p);
    if (rsan_clk_shared(dst)) snap_unref(dst->u.s.snap);
    else if (dst->cap > RSAN_CLK_INLINE) rsan_free(dst->u.x.ext);
  }
  dst->cap = RSAN_CLK_SHARED;
  dst->u.s.snap = p;
  for (int i = 0; i < RSAN_CLK_DELTA; i++) {
    dst->u.s.slot[i] = slot[i];
    dst->u.s.ep[i] = ep[i];
  }
  dst->n = n;
  dst->ver = ver;
}

/* dst := src, any widths (rsan_clk_assign when a clock is not inline) */
__attribute__((no_builtin("memcpy"))) void rsan_clk_assign_slow(rsan_clk *dst, const rsan_clk *src) {
  if (rsan_clk_shared(src)) {
    if (is_loc_clock(dst)) { /* Msc(x) := Wsc(x): one more holder of the snapshot */
      share(dst, src->u.s.snap, src->u.s.slot, src->u.s.ep, src->n, src->ver, NULL);
      return;
    }
    rsan_clk_clear(dst); /* (not reached by the rules: only location clocks are shared) */
    rsan_clk_join_slow(dst, src);
    dst->ver = src->ver;
    return;
  }
  if (rsan_clk_shared(dst)) rsan_clk_unshare(dst); /* := another content: its own entries */
  uint32_t n = src->n;
  if (RSAN_UNLIKELY(n > (dst->cap > RSAN_CLK_INLINE ? dst->cap : RSAN_CLK_INLINE))) rsan_clk_grow(dst, n);
  int sn = rsan_clk_narrow(src);
  if (rsan_clk_narrow(dst)) {
    uint32_t *d = (uint32_t *)dst->u.x.ext;
    if (sn) {
      const uint32_t *s = (const uint32_t *)src->u.x.ext;
      for (uint32_t i = 0; i < n; i++) d[i] = s[i];
    } else {
      const uint64_t *s = rsan_clk_ce(src);
      uint64_t high = 0;
      for (uint32_t i = 0; i < n; i++) {
        high |= s[i] >> 32;
        d[i] = (uint32_t)s[i];
      }
      if (RSAN_UNLIKELY(high)) { /* an epoch past 2^32 - 1: dst becomes 64-bit */
        dst->n = 0; /* nothing of it to keep */
        clk_widen(dst);
      }
    }
  }
  if (!rsan_clk_narrow(dst)) {
    uint64_t *d = rsan_clk_e(dst);
    if (sn) {
      const uint32_t *s = (const uint32_t *)src->u.x.ext;
      for (uint32_t i = 0; i < n; i++) d[i] = s[i];
    } else {
      const uint64_t *s = rsan_clk_ce(src);
      for (uint32_t i = 0; i < n; i++) d[i] = s[i]; /* short: a call to memcpy costs more */
    }
    if (dst->cap <= RSAN_CLK_INLINE) /* inline entries >= n stay 0 */
      for (uint32_t i = n; i < RSAN_CLK_INLINE; i++) d[i] = 0;
  }
  dst->n = n;
  dst->ver = src->ver; /* the same content */
}

/* The entries u < n in which e differs from s (s[u] = 0 for u >= ns), into slot/ep: their
 * count, or -1 when there are more than RSAN_CLK_DELTA, or one is below s's or beyond 32
 * bits. Blocks of 8 equal entries are passed at once (most are, for a thread's own
 * snapshot). */
RSAN_JOIN_CLONES static int diff_scan(const uint64_t *e, const uint32_t *s, uint32_t ns, uint32_t n,
                                      uint32_t *slot, uint32_t *ep) {
  int k = 0;
  for (uint32_t b = 0; b < n; b += 8) {
    if (b + 8 <= ns) {
      uint64_t d = 0;
      for (uint32_t i = 0; i < 8; i++) d |= e[b + i] ^ s[b + i];
      if (!d) continue;
    }
    for (uint32_t u = b; u < b + 8 && u < n; u++) {
      uint64_t a = u < ns ? s[u] : 0;
      if (a == e[u]) continue;
      if (a > e[u] || e[u] > NARROW_MAX || k == RSAN_CLK_DELTA) return -1;
      slot[k] = u;
      ep[k++] = (uint32_t)e[u];
    }
  }
  return k;
}

/* narrow a[0, n) ⊑ 64-bit b[0, n) */
RSAN_JOIN_CLONES static int leq_nw(const uint32_t *a, const uint64_t *b, uint32_t n) {
  uint64_t bad = 0;
  for (uint32_t i = 0; i < n; i++) bad |= (uint64_t)(a[i] > b[i]);
  return !bad;
}
/* a narrow array of na entries ⊑ 64-bit b */
static int narrow_leq(const uint32_t *a, uint32_t na, const uint64_t *b, uint32_t nb) {
  uint32_t m = na < nb ? na : nb;
  if (!leq_nw(a, b, m)) return 0;
  for (uint32_t u = m; u < na; u++)
    if (a[u]) return 0;
  return 1;
}
/* a location clock's entries ⊑ a 64-bit clock's */
static int loc_leq(const rsan_clk *a, const rsan_clk *b) {
  const uint64_t *e = rsan_clk_ce(b);
  uint32_t nb = b->n;
  if (rsan_clk_shared(a)) {
    const rsan_snap *p = a->u.s.snap;
    if (!narrow_leq(p->e, p->n, e, nb)) return 0;
    for (int i = 0; i < RSAN_CLK_DELTA; i++) {
      uint32_t u = a->u.s.slot[i];
      if (a->u.s.ep[i] > (u < nb ? e[u] : 0)) return 0;
    }
    return 1;
  }
  if (rsan_clk_narrow(a)) return narrow_leq((const uint32_t *)a->u.x.ext, a->n, e, nb);
  return rsan_clk_leq(a, b);
}

int rsan_clk_leq(const rsan_clk *a, const rsan_clk *b) {
  for (uint32_t i = 0; i < a->n; i++)
    if (rsan_clk_get(a, i) > rsan_clk_get(b, i)) return 0;
  return 1;
}

/* ---- joins and exports of a thread's clocks with what it knows of shared snapshots
 * (docs/design/clocks.md §16; rsan_internal.h rsan_memo, rsan_xclk) ---- */
/* memo m remembers p (its lineage up to p's seq) */
static int memo_has(const rsan_memo *m, const rsan_snap *p) {
  return p->lin && m->lin == p->lin && m->seq >= p->seq;
}
/* the single writer of t's memos: it notes that they hold something, so that
 * rsan_thread_snaps_release empties them only then (6 KiB, at every restore of a closure state) */
static void memo_put(rsan_thread *t, rsan_memo *m, const rsan_snap *p) {
  if (m->lin != p->lin || m->seq < p->seq) m->lin = p->lin, m->seq = p->seq, t->memo_used = 1;
}

/* debug builds: how often each shortcut was taken (testsuite/runtime/test_clock_memo.py:
 * the programs that check them must reach them) */
#ifdef RSAN_DEBUG
static uint64_t dbg_counts[3]; /* memo joins, delta exports, memo containment tests */
#define DBG_COUNT(i) __atomic_fetch_add(&dbg_counts[i], 1, __ATOMIC_RELAXED)
RSAN_EXPORT void __rsan_test_memo_counts(uint64_t out[3]) {
  for (int i = 0; i < 3; i++) out[i] = __atomic_load_n(&dbg_counts[i], __ATOMIC_RELAXED);
}
/* t's memo entries that hold something, and its memo_used (testsuite/runtime/
 * test_clock_memo_release.py: a release must leave none, and a narrow thread writes none) */
RSAN_EXPORT uint64_t __rsan_test_memo_entries(const rsan_thread *t, uint64_t *used) {
  uint64_t n = 0;
  for (int i = 0; i < RSAN_MEMO; i++) n += !!t->memo_c[i].lin + !!t->memo_a[i].lin + !!t->memo_sc[i].lin;
  *used = t->memo_used;
  return n;
}
RSAN_EXPORT void __rsan_test_snaps_release(rsan_thread *t) { rsan_thread_snaps_release(t); }
#else
#define DBG_COUNT(i) ((void)0)
#endif

void rsan_thread_snaps_release(rsan_thread *t) {
  snap_let_go(&t->snap_c, t->xc.nref);
  snap_let_go(&t->snap_r, t->xr.nref);
  snap_let_go(&t->snap_sc, t->xsc.nref);
  memset(&t->xc, 0, sizeof t->xc);
  memset(&t->xr, 0, sizeof t->xr);
  memset(&t->xsc, 0, sizeof t->xsc);
  if (!t->memo_used) return; /* none written since they were last emptied: empty */
  memset(t->memo_c, 0, sizeof t->memo_c);
  memset(t->memo_a, 0, sizeof t->memo_a);
  memset(t->memo_sc, 0, sizeof t->memo_sc);
  t->memo_used = 0;
}

/* t's record was overwritten with a copy taken earlier (sched_closure_state.c): its snapshots
 * are its own again, each with the bias and no reference given yet (the location clocks the
 * copy restored hold theirs atomically). The copy keeps its own references meanwhile, so the
 * snapshots live from the release of the record's previous claims to this one. */
void rsan_thread_snaps_claim(rsan_thread *t) {
  rsan_snap *snaps[3] = {t->snap_c, t->snap_r, t->snap_sc};
  for (int k = 0; k < 3; k++)
    if (snaps[k]) __atomic_add_fetch(&snaps[k]->refs, RSAN_SNAP_BIAS, __ATOMIC_RELAXED);
  t->xc.nref = t->xr.nref = t->xsc.nref = 0;
}

/* the pairs of src raise entries of dst (or dst is ⊥): applied, each raised slot noted in X's
 * export delta (which stays on only while it held before and every slot fits) */
static RSAN_NOINLINE void join_pairs(rsan_thread *t, rsan_clk *dst, const rsan_clk *src, rsan_xclk *x) {
  uint64_t *d = rsan_clk_e(dst);
  int changed = 0, track = x && x->dver && x->dver == dst->ver;
  for (int i = 0; i < RSAN_CLK_DELTA; i++) {
    uint32_t u = src->u.s.slot[i], v = src->u.s.ep[i];
    if (v > d[u]) {
      d[u] = v, changed = 1;
      if (track) track = rsan_xclk_note(x, t->slot, u);
    }
  }
  if (changed || !dst->ver) {
    dst->ver = rsan_clk_newver();
    if (x) x->dver = track ? dst->ver : 0;
  }
}
/* the whole join, after which S ⊑ X is remembered */
static RSAN_NOINLINE void join_whole(rsan_thread *t, rsan_clk *dst, const rsan_clk *src, rsan_memo *m) {
  rsan_clk_join_slow(dst, src);
  memo_put(t, m, src->u.s.snap);
}
/* X ⊔= L. When L shares a snapshot S that X's memo remembers, S ⊑ X (rsan_internal.h: S's
 * lineage only grows with seq, X only grows in its thread's life), so X ⊔ L = X ⊔ L's pairs:
 * the same entries and the same "changed" as the whole join, so the same version. A pair that
 * raises an entry is noted in X's export delta (kept only while it held before). Otherwise
 * the whole join, after which S ⊑ X is remembered. */
void rsan_clk_join_t_slow(rsan_thread *t, rsan_clk *dst, const rsan_clk *src, rsan_memo *memo, rsan_xclk *x) {
  if (!rsan_clk_shared(src) || !memo) {
    rsan_clk_join_slow(dst, src);
    return;
  }
  const rsan_snap *p = src->u.s.snap;
  rsan_memo *m = &memo[p->mix];
  if (!memo_has(m, p) || dst->cap <= RSAN_CLK_INLINE || src->n > dst->n) {
    join_whole(t, dst, src, m);
    return;
  }
  const uint64_t *d = rsan_clk_ce(dst);
  RSAN_ASSERT(narrow_leq(p->e, p->n, d, dst->n)); /* the join skipped adds nothing */
  DBG_COUNT(0);
  uint32_t raise = 0; /* most often none: the join changes nothing, dst keeps its version */
  for (int i = 0; i < RSAN_CLK_DELTA; i++) raise |= src->u.s.ep[i] > d[src->u.s.slot[i]];
  if (raise || !dst->ver) join_pairs(t, dst, src, x);
}

#ifdef RSAN_DEBUG
/* the delta's pairs are the entries diff_scan finds (as a set; debug builds) */
static int same_pairs(const uint64_t *e, const rsan_snap *p, uint32_t n, int k, const uint32_t *slot,
                      const uint32_t *ep) {
  uint32_t s2[RSAN_CLK_DELTA] = {0}, e2[RSAN_CLK_DELTA] = {0};
  int k2 = diff_scan(e, p->e, p->n, n, s2, e2);
  if (k2 != k) return 0;
  for (int i = 0; i < k; i++) {
    int found = 0;
    for (int j = 0; j < k; j++) found |= s2[j] == slot[i] && e2[j] == ep[i];
    if (!found) return 0;
  }
  return 1;
}
#endif

/* the entries in which X differs from its snapshot p, from X's delta (valid: x->dver is X's
 * version): the listed slots and the own slot when it differs. The same set and the same
 * verdict as diff_scan: every listed entry was raised above p's, nothing else differs. */
static int delta_pairs(const uint64_t *e, uint32_t n, const rsan_snap *p, const rsan_xclk *x, uint32_t own,
                       uint32_t *slot, uint32_t *ep) {
  int k = 0;
  for (uint32_t i = 0; i < x->dk; i++) {
    uint32_t u = x->dslot[i];
    if (e[u] > NARROW_MAX) return -1;
    slot[k] = u;
    ep[k++] = (uint32_t)e[u];
  }
  uint64_t a = own < p->n ? p->e[own] : 0, v = own < n ? e[own] : 0;
  if (v != a) {
    if (k == RSAN_CLK_DELTA || v > NARROW_MAX) return -1;
    slot[k] = own;
    ep[k++] = (uint32_t)v;
  }
  return k;
}

/* L := X (rsan_clk_export_slow with X's delta): the differences from X's snapshot come from
 * the delta when it holds, else from comparing every entry (which sets the delta). A new
 * snapshot joins X's lineage and is remembered by the memos of the clocks that contain X:
 * Tc's by Tc's and Ta's (Tc ⊑ Ta), Tr's by those too (Tr ⊑ Tc), Tsc's by Tsc's. */
void rsan_clk_export_t_slow(rsan_clk *dst, rsan_thread *t, const rsan_clk *src, rsan_snap **snap,
                            rsan_xclk *x, int which) {
  uint32_t n = src->n;
  if (!is_loc_clock(dst) || src->cap <= RSAN_CLK_INLINE || n <= RSAN_CLK_INLINE) {
    rsan_clk_assign_slow(dst, src);
    return;
  }
  const uint64_t *e = rsan_clk_ce(src);
  uint32_t slot[RSAN_CLK_DELTA] = {0}, ep[RSAN_CLK_DELTA] = {0};
  rsan_snap *p = *snap;
  int k = -1;
  if (p && p->n <= n && x->dver && x->dver == src->ver) {
    k = delta_pairs(e, n, p, x, t->slot, slot, ep);
    RSAN_ASSERT(same_pairs(e, p, n, k, slot, ep));
    DBG_COUNT(1);
  } else if (p && p->n <= n) {
    k = diff_scan(e, p->e, p->n, n, slot, ep);
    if (k >= 0) { /* the delta, from here on */
      x->dver = src->ver;
      x->dk = 0;
      for (int i = 0; i < k; i++)
        if (slot[i] != t->slot) x->dslot[x->dk++] = slot[i];
    }
  }
  if (k < 0) { /* a new snapshot of src */
    for (uint32_t u = 0; u < n; u++)
      if (e[u] > NARROW_MAX) {
        rsan_clk_assign_slow(dst, src);
        return;
      }
    p = snap_alloc(n);
    p->refs = RSAN_SNAP_BIAS;
    p->n = n;
    if (!x->lin) x->lin = rsan_clk_newver(); /* unique in the process */
    p->lin = x->lin;
    p->seq = ++t->snap_seq;
    p->mix = (which == RSAN_X_SC ? t->slot : 2 * t->slot + (which == RSAN_X_R)) & (RSAN_MEMO - 1);
    for (uint32_t u = 0; u < n; u++) p->e[u] = (uint32_t)e[u];
    snap_let_go(snap, x->nref);
    x->nref = 0;
    *snap = p;
    for (int i = 0; i < RSAN_CLK_DELTA; i++) slot[i] = ep[i] = 0;
    x->dver = src->ver; /* X = p: no difference */
    x->dk = 0;
    if (which == RSAN_X_SC) {
      memo_put(t, &t->memo_sc[p->mix], p);
    } else {
      memo_put(t, &t->memo_c[p->mix], p);
      memo_put(t, &t->memo_a[p->mix], p);
    }
  }
  share(dst, p, slot, ep, n, src->ver, &x->nref);
}

/* L ⊔= X (rsan_clk_join_loc_slow with X's memo): L ⊑ X needs only L's pairs when X's memo
 * remembers L's snapshot; a whole comparison that finds the snapshot ⊑ X remembers it. */
void rsan_clk_join_loc_t_slow(rsan_clk *dst, rsan_thread *t, const rsan_clk *src, rsan_memo *memo,
                              rsan_snap **snap, rsan_xclk *x, int which) {
  int leq = 0;
  if (is_loc_clock(dst) && src->cap > RSAN_CLK_INLINE) {
    if (rsan_clk_shared(dst) && memo) {
      const rsan_snap *p = dst->u.s.snap;
      rsan_memo *m = &memo[p->mix];
      const uint64_t *e = rsan_clk_ce(src);
      uint32_t nb = src->n;
      leq = memo_has(m, p);
      if (leq) DBG_COUNT(2);
      else leq = narrow_leq(p->e, p->n, e, nb);
      RSAN_ASSERT(!leq || narrow_leq(p->e, p->n, e, nb));
      if (leq) {
        memo_put(t, m, p);
        for (int i = 0; i < RSAN_CLK_DELTA; i++) {
          uint32_t u = dst->u.s.slot[i];
          if (dst->u.s.ep[i] > (u < nb ? e[u] : 0)) leq = 0;
        }
      }
    } else {
      leq = loc_leq(dst, src);
    }
  }
  if (leq) rsan_clk_export_t_slow(dst, t, src, snap, x, which);
  else rsan_clk_join_slow(dst, src);
}
