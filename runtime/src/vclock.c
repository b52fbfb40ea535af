/* Vector clocks of the race detector (algorithm.md §5): one entry per thread slot (small,
 * dense, reused only exactly: thread.c), grown on demand. A clock with n entries holds 0 for
 * every slot >= n. Memory never comes from the interposed malloc (below).
 *
 * Threads' C clocks are also read by other threads (race_floor.c, the floor of a full
 * granule) while their owners grow them. So every clock publishes its array and size with
 * release stores, a C clock's entries are written with relaxed atomic stores (rsan_vc_set and
 * the _published variants: a reader sees, per entry, an old or a new value, never a torn one;
 * entries only grow, so a value read is a lower bound of the owner's later values), and an
 * array or clock is freed only after it was unpublished under shared_lock, which the readers
 * hold while they read (rsan_vc_read_lock). Grows and
 * frees are rare (doubling; thread join; location retire), the lock is a leaf.
 * A dense array of cap entries comes from alloc.c's size classes (vc_arr, vc_arr_free: up to
 * 64 entries without malloc), so a young location's S_x costs no malloc either
 * (docs/design/clocks.md §20); a coded S_x's block and the shared bases stay on malloc. */
#include <malloc.h>
#include <string.h>

#include "rsan_race.h"

static rsan_spin shared_lock;

static inline uint64_t *vc_arr(uint32_t cap) { return rsan_slab_alloc(cap * sizeof(uint64_t)); } /* zeroed */
static inline void vc_arr_free(uint64_t *e, uint32_t cap) { rsan_slab_free(e, cap * sizeof(uint64_t)); }

static void vc_grow(rsan_vc *v, uint32_t n) {
  if (n <= v->cap) return;
  uint32_t cap = v->cap ? v->cap : 4;
  while (cap < n) cap *= 2;
  uint64_t *e = vc_arr(cap), *old = v->e;
  uint32_t ocap = v->cap;
  if (v->n) memcpy(e, old, v->n * sizeof(uint64_t));
  if (old) rsan_spin_lock(&shared_lock); /* a reader may hold the old array */
  __atomic_store_n(&v->e, e, __ATOMIC_RELEASE);
  v->cap = cap;
  if (old) rsan_spin_unlock(&shared_lock);
  vc_arr_free(old, ocap); /* no reader can still hold it: they read under shared_lock */
}

/* the entries from v->n to n (fresh zeros; published by the release store of the size); out
 * of line, so that a join that does not grow (nearly all) needs no frame */
static RSAN_NOINLINE void vc_extend(rsan_vc *v, uint32_t n) {
  vc_grow(v, n);
  memset(v->e + v->n, 0, (n - v->n) * sizeof(uint64_t));
  __atomic_store_n(&v->n, n, __ATOMIC_RELEASE);
}

void rsan_vc_set(rsan_vc *v, uint32_t tid, uint64_t c) {
  if (tid >= v->n) vc_extend(v, tid + 1);
  __atomic_store_n(&v->e[tid], c, __ATOMIC_RELAXED);
}

/* ---- a location's S_x, coded (docs/design/races.md §8) ----
 * With RSAN_VC_DENSE entries or more, S_x (rsan_vc.cap == RSAN_VC_CODED) is an immutable,
 * reference-counted 64-bit base clock B shared with other locations and the exporting slot,
 * plus one 16-bit offset per entry: S_x[u] = B[u] + off[u] for u < n (B[u] = 0 beyond B's n).
 * Each S_x owns its offsets; bases are never written after they are made. Exact: a value is
 * coded only when every one of its entries u satisfies B[u] <= v[u] <= B[u] + 0xffff (checked
 * entry by entry while the offsets are written: code_on), so decoding gives every entry back;
 * otherwise the value is kept as a dense array of its own, or coded on a new base (offsets 0). */
struct rsan_vbase {
  /* atomic: the S_x clocks coded on it, the bases over it, and the slot that exports on it. On
   * a line of its own: every coding and every overwrite of an S_x changes it, while n and e are
   * read by every decoding join (on one line, each change took the entries from the readers'
   * caches) */
  uint32_t refs;
  char pad[60];
  uint32_t n;
  /* NULL: a full base, e[] holds its n entries. Else a base *over* a full one (docs/design/races.md §18):
   * e[] holds n 16-bit offsets (base_off), B[u] = over[u] + off[u]; it holds a reference to over */
  rsan_vbase *over;
  uint64_t e[]; /* never changed once made */
};

static inline const uint16_t *base_off(const rsan_vbase *b) { return (const uint16_t *)(const void *)b->e; }
static inline uint64_t full_at(const rsan_vbase *b, uint32_t u) { return u < b->n ? b->e[u] : 0; }
static inline uint64_t base_at(const rsan_vbase *b, uint32_t u) {
  if (u >= b->n) return 0;
  return b->over ? full_at(b->over, u) + base_off(b)[u] : b->e[u];
}
/* entry u < n of a coded clock, thin, sparse or with offsets */
static inline uint64_t coded_at(const rsan_vcoded *c, uint32_t u) {
  if (c->thin) return u == c->thin - 1 ? c->val : base_at(c->base, u);
  if (c->sp) {
    uint64_t d = 0;
    for (uint64_t i = 0; i < c->sp && c->off[2 * i] <= u; i++)
      if (c->off[2 * i] == u) d = c->off[2 * i + 1];
    return base_at(c->base, u) + d;
  }
  return base_at(c->base, u) + c->off[u];
}
/* the entries of a thin or sparse clock c over its base's: max(d[u], S_x[u]) for the replaced
 * ones (B[u] <= S_x[u], so after d ⊔= B this is d ⊔= S_x); published: relaxed stores; moved
 * as vc_join_coded's */
static inline int coded_patch(uint64_t *d, const rsan_vcoded *c, int published, int moved) {
  if (c->thin) {
    uint32_t u = c->thin - 1;
    if (c->val > d[u]) {
      if (published) __atomic_store_n(&d[u], c->val, __ATOMIC_RELAXED);
      else d[u] = c->val;
      moved = 1;
    }
    return moved;
  }
  for (uint64_t i = 0; i < c->sp; i++) {
    uint32_t u = c->off[2 * i];
    uint64_t v = base_at(c->base, u) + c->off[2 * i + 1];
    if (v > d[u]) {
      if (published) __atomic_store_n(&d[u], v, __ATOMIC_RELAXED);
      else d[u] = v;
      moved = 1;
    }
  }
  return moved;
}
/* out := the n entries of the coded clock c (O(n + sp), where n calls of coded_at would be
 * O(n * sp) for a sparse one) */
static void coded_decode(const rsan_vcoded *c, uint32_t n, uint64_t *out) {
  if (!c->thin && !c->sp) {
    for (uint32_t u = 0; u < n; u++) out[u] = base_at(c->base, u) + c->off[u];
    return;
  }
  for (uint32_t u = 0; u < n; u++) out[u] = base_at(c->base, u);
  coded_patch(out, c, 0, 0);
}

uint64_t rsan_vc_at(const rsan_vc *v, uint32_t u) {
  if (u >= v->n) return 0;
  if (v->cap != RSAN_VC_CODED) return v->e[u];
  return coded_at((const rsan_vcoded *)(const void *)v->e, u);
}

/* the bases live and their bytes (the census, race_census.c; a base is made and freed rarely) */
static uint64_t bases_live, bases_bytes, bases_unfit, bases_rebase; /* made: offsets did not fit; rebase */
static uint64_t bases_over,
    bases_over_nz; /* of the rebased: over the slot's full base; their offsets not 0 */
/* the bytes of coded blocks and bases live, and their highest value (the census) */
static uint64_t coded_now, coded_peak, bases_now, bases_at_peak; /* and the bases' share */
static inline void census_add(int64_t d, int base) {
  if (base) __atomic_add_fetch(&bases_now, (uint64_t)d, __ATOMIC_RELAXED);
  uint64_t now = __atomic_add_fetch(&coded_now, (uint64_t)d, __ATOMIC_RELAXED);
  uint64_t p = __atomic_load_n(&coded_peak, __ATOMIC_RELAXED);
  while (d > 0 && now > p) {
    if (__atomic_compare_exchange_n(&coded_peak, &p, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      __atomic_store_n(&bases_at_peak, __atomic_load_n(&bases_now, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
      break;
    }
  }
}
static inline void *coded_alloc(size_t n) {
  void *p = rsan_alloc_raw(n);
  census_add((int64_t)malloc_usable_size(p), 0);
  return p;
}
static inline void coded_free(void *p) {
  census_add(-(int64_t)malloc_usable_size(p), 0);
  rsan_free(p);
}
static inline size_t base_size(uint32_t n, int over) {
  return sizeof(rsan_vbase) + n * (over ? sizeof(uint16_t) : sizeof(uint64_t));
}

void rsan_vbase_drop(rsan_vbase *b) {
  while (b && __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    rsan_vbase *over = b->over;
    __atomic_sub_fetch(&bases_live, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&bases_bytes, base_size(b->n, over != NULL), __ATOMIC_RELAXED);
    census_add(-(int64_t)malloc_usable_size(b), 1);
    rsan_free(b);
    b = over; /* its reference dropped too */
  }
}

/* v := ⊥ for a coded v (its offsets freed, its base reference dropped) */
static void vc_uncode_free(rsan_vc *v) {
  rsan_vcoded *c = (rsan_vcoded *)(void *)v->e;
  rsan_vbase_drop(c->base);
  coded_free(c);
  v->e = NULL;
  v->n = v->cap = 0;
}

/* a coded v made a dense array with the same entries (exact size) */
static RSAN_NOINLINE void vc_uncode(rsan_vc *v) {
  uint32_t n = v->n;
  uint64_t *e = vc_arr(n);
  coded_decode((const rsan_vcoded *)(const void *)v->e, n, e);
  vc_uncode_free(v);
  v->e = e;
  v->cap = n;
  v->n = n;
}

/* d[i] := max(d[i], be[i] + off[i]) for i < m, max(d[i], off[i]) for m <= i < n: the decoding join of a clock nobody else
 * reads, built for AVX2 too (4 entries at once; 64-bit max as compare and blend), picked at
 * load time, as clock.c's join loops */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
__attribute__((target_clones("avx2", "default")))
#endif
#endif
static void coded_max(uint64_t *restrict d, const uint64_t *restrict be, const uint16_t *restrict off,
                      uint32_t m, uint32_t n) {
  for (uint32_t i = 0; i < m; i++) {
    uint64_t v = be[i] + off[i];
    d[i] = v > d[i] ? v : d[i];
  }
  for (uint32_t i = m; i < n; i++) d[i] = off[i] > d[i] ? off[i] : d[i]; /* beyond the base: 0 */
}
/* d[i] := max(d[i], be[i]) for i < m: a thin clock's base, as coded_max */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
__attribute__((target_clones("avx2", "default")))
#endif
#endif
static void base_max(uint64_t *restrict d, const uint64_t *restrict be, uint32_t m) {
  for (uint32_t i = 0; i < m; i++) d[i] = be[i] > d[i] ? be[i] : d[i];
}

/* d ⊔= the thin or sparse clock c of n entries on a base over a full one (docs/design/races.md §18):
 * B = F + B's offsets, decoded as a clock with offsets on F is (coded_max), then the replaced
 * entries (B's are no larger). moved as vc_join_coded's */
static RSAN_NOINLINE int join_thin_over(uint64_t *d, const rsan_vcoded *c, uint32_t n, int published,
                                        int moved) {
  const rsan_vbase *b = c->base, *f = b->over;
  const uint16_t *bo = base_off(b);
  uint32_t u = c->thin ? c->thin - 1 : UINT32_MAX;
  n = b->n; /* (a sparse clock may have more entries: B's are 0 there) */
  uint32_t m = n < f->n ? n : f->n;
  if (!published) {
    coded_max(d, f->e, bo, m, n);
    coded_patch(d, c, 0, 0);
    return 1;
  }
  for (uint32_t i = 0; i < n; i++) {
    uint64_t v = (i < m ? f->e[i] : 0) + bo[i];
    if (i != u && v > d[i]) __atomic_store_n(&d[i], v, __ATOMIC_RELAXED), moved = 1;
  }
  return coded_patch(d, c, 1, moved);
}

/* dst ⊔= src where either is coded: src's entries decoded (dst, a thread's C when published,
 * written as rsan_vc_join_published does, which returns whether an entry changed; a plain join
 * returns 1); a coded dst is made dense first */
static RSAN_NOINLINE int vc_join_coded(rsan_vc *dst, const rsan_vc *src, int published) {
  if (dst->cap == RSAN_VC_CODED) vc_uncode(dst);
  int moved = src->n > dst->n;
  if (moved) vc_extend(dst, src->n);
  if (src->cap != RSAN_VC_CODED) {
    for (uint32_t i = 0; i < src->n; i++)
      if (src->e[i] > dst->e[i]) dst->e[i] = src->e[i];
    return 1;
  }
  const rsan_vcoded *c = (const rsan_vcoded *)(const void *)src->e;
  const rsan_vbase *b = c->base;
  uint32_t n = src->n, m = n < b->n ? n : b->n;
  uint64_t *d = dst->e;
  const uint64_t *be = b->e;
  const uint16_t *off = c->off;
  if (c->thin || c->sp) { /* B, then the replaced entries (B's are no larger: entries only grow) */
    uint32_t u = c->thin ? c->thin - 1 : UINT32_MAX;
    RSAN_ASSERT(c->thin ? b->n == n && u < n && base_at(b, u) <= c->val : b->n <= n);
    if (b->over) return join_thin_over(d, c, n, published, moved);
    if (!published) {
      base_max(d, be, m);
      coded_patch(d, c, 0, 0);
      return 1;
    }
    for (uint32_t i = 0; i < m; i++)
      if (i != u && be[i] > d[i]) __atomic_store_n(&d[i], be[i], __ATOMIC_RELAXED), moved = 1;
    return coded_patch(d, c, 1, moved);
  }
  RSAN_ASSERT(!b->over); /* offsets are coded on full bases only (code_on) */
  if (!published) { /* plain stores: vectorised (coded_max) */
    coded_max(d, be, off, m, n);
    return 1;
  }
  for (uint32_t i = 0; i < m; i++) {
    uint64_t v = be[i] + off[i];
    if (v > d[i]) __atomic_store_n(&d[i], v, __ATOMIC_RELAXED), moved = 1;
  }
  for (uint32_t i = m; i < n; i++)
    if (off[i] > d[i]) __atomic_store_n(&d[i], (uint64_t)off[i], __ATOMIC_RELAXED), moved = 1;
  return moved;
}

/* dst := the n entries v coded on b, when each fits (B[u] <= v[u] <= B[u] + 0xffff): 1, and dst
 * holds a reference to b; else 0. One pass: the offsets are written while the fit is checked,
 * into dst's own offsets when it is coded with n entries (no allocation per export: a
 * location rewritten by the same threads keeps its size), else into a new block. So after a
 * 0 a coded dst of n entries has unspecified offsets (its base reference intact): both
 * callers then replace it (code: on a new base, which always fits; rsan_vc_join_export: by a
 * dense array computed before). */
static int code_on(rsan_vc *dst, const uint64_t *v, uint32_t n, rsan_vbase *b, uint64_t own) {
  RSAN_ASSERT(!b->over); /* offsets over a full base only: a decoding adds two terms, not three */
  int reuse = dst->cap == RSAN_VC_CODED && ((rsan_vcoded *)(void *)dst->e)->noff >= n;
  rsan_vcoded *c = reuse ? (rsan_vcoded *)(void *)dst->e : coded_alloc(sizeof *c + n * sizeof(uint16_t));
  uint32_t m = n < b->n ? n : b->n;
  uint64_t bad = 0;
  for (uint32_t u = 0; u < m; u++) {
    uint64_t d = v[u] - b->e[u]; /* v[u] < B[u] wraps to a huge value: does not fit */
    bad |= d >> 16;
    c->off[u] = (uint16_t)d;
  }
  for (uint32_t u = m; u < n; u++) {
    bad |= v[u] >> 16;
    c->off[u] = (uint16_t)v[u];
  }
  if (bad) {
    if (!reuse) coded_free(c);
    return 0;
  }
  c->own = own;
  c->thin = 0;
  c->sp = 0;
  if (reuse) {
    dst->n = n;
    rsan_vbase *old = c->base;
    if (old == b) return 1; /* recoded on the base it holds: its reference stays */
    __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
    c->base = b;
    rsan_vbase_drop(old);
    return 1;
  }
  __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
  c->base = b;
  c->noff = n;
  if (dst->cap == RSAN_VC_CODED) vc_uncode_free(dst);
  else vc_arr_free(dst->e, dst->cap);
  dst->e = (uint64_t *)(void *)c;
  dst->n = n;
  dst->cap = RSAN_VC_CODED;
  return 1;
}

static rsan_vbase *base_alloc(uint32_t n, rsan_vbase *over) {
  rsan_vbase *b = rsan_alloc_line(base_size(n, over != NULL)); /* refs alone on its line */
  census_add((int64_t)malloc_usable_size(b), 1);
  __atomic_add_fetch(&bases_live, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&bases_bytes, base_size(n, over != NULL), __ATOMIC_RELAXED);
  b->refs = 1;
  b->n = n;
  b->over = over;
  return b;
}
static rsan_vbase *base_new(const uint64_t *v, uint32_t n) {
  rsan_vbase *b = base_alloc(n, NULL);
  memcpy(b->e, v, n * sizeof(uint64_t));
  return b;
}
/* the n entries v as a base over the full base f (docs/design/races.md §18), when every one fits
 * (F[u] <= v[u] <= F[u] + 0xffff, as code_on's test): it holds a reference to f; else NULL */
static rsan_vbase *base_over(const uint64_t *v, uint32_t n, rsan_vbase *f) {
  RSAN_ASSERT(!f->over);
  uint32_t m = n < f->n ? n : f->n;
  uint64_t bad = 0;
  for (uint32_t u = 0; u < m; u++) bad |= (v[u] - f->e[u]) >> 16; /* below F wraps: does not fit */
  for (uint32_t u = m; u < n; u++) bad |= v[u] >> 16;
  if (bad) return NULL;
  rsan_vbase *b = base_alloc(n, f);
  uint16_t *o = (uint16_t *)(void *)b->e;
  uint64_t nz = 0;
  for (uint32_t u = 0; u < m; u++) o[u] = (uint16_t)(v[u] - f->e[u]), nz += o[u] != 0;
  for (uint32_t u = m; u < n; u++) o[u] = (uint16_t)v[u], nz += o[u] != 0;
  __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&bases_over, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&bases_over_nz, nz, __ATOMIC_RELAXED);
  return b;
}
/* slot s's new full base b (one reference, which becomes s->full's): s->cur := s->full := b */
static void slot_full(rsan_vslot *s, rsan_vbase *b) {
  __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED); /* s->cur's */
  rsan_vbase_drop(s->cur);
  rsan_vbase_drop(s->full);
  s->cur = s->full = b;
}

/* dst := the n entries v (n >= RSAN_VC_DENSE), coded on s->full (the exporting slot's full base
 * for this clock; s NULL: none) or, when they do not fit there, on a new base, which becomes
 * s's full and current base; own: the owner epoch word it records (rsan_race.h rsan_vcoded) */
static int code(rsan_vc *dst, const uint64_t *v, uint32_t n, rsan_vslot *s, uint64_t own) {
  if (s && s->full && code_on(dst, v, n, s->full, own)) return 0;
  __atomic_add_fetch(&bases_unfit, 1, __ATOMIC_RELAXED);
  rsan_vbase *b = base_new(v, n);
  int ok = code_on(dst, v, n, b, own); /* offsets 0: always fits */
  RSAN_ASSERT(ok);
  (void)ok;
  if (s) {
    slot_full(s, b); /* the slot keeps the reference base_new made */
    return 1;
  }
  rsan_vbase_drop(b);
  return 0;
}

/* dst's block for a thin or sparse clock of w 16-bit words: its own when it is coded with room
 * for w words and at most SMALL_ROOM more (a block of a clock's offsets is not kept for a few
 * words), else a new one, which takes over the old block's base reference (none for a dense
 * dst, whose array is freed). The caller sets the rest. */
#define SMALL_ROOM 16
#define RSAN_SPARSE_MAX 64 /* pairs of a sparse clock, at most (and n / 4) */
#define RSAN_SPARSE_SAME 8 /* the same when C did not move since the slot's last export */
static rsan_vcoded *small_block(rsan_vc *dst, uint32_t w) {
  rsan_vbase *base = NULL;
  if (dst->cap == RSAN_VC_CODED) {
    rsan_vcoded *c = (rsan_vcoded *)(void *)dst->e;
    if (c->noff >= w && c->noff <= w + SMALL_ROOM) return c;
    base = c->base;
    coded_free(c);
  } else {
    vc_arr_free(dst->e, dst->cap);
  }
  uint32_t room = (w + 3) & ~3u; /* malloc's blocks grow by 8 bytes at least */
  rsan_vcoded *c = coded_alloc(sizeof *c + room * sizeof(uint16_t));
  c->base = base;
  c->noff = room;
  dst->e = (uint64_t *)(void *)c;
  dst->cap = RSAN_VC_CODED;
  return c;
}
/* c's base := b (a reference taken, the old one dropped) */
static inline void block_base(rsan_vcoded *c, rsan_vbase *b) {
  if (c->base == b) return;
  __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
  rsan_vbase_drop(c->base);
  c->base = b;
}

/* dst := b with entry u replaced by val, thin (no offsets: O(1)), for a clock v that equals b
 * but for v[u] = val (asserted in debug builds: decoding then gives every entry of v back) */
static void code_thin(rsan_vc *dst, rsan_vbase *b, uint32_t u, uint64_t val, uint64_t own) {
  rsan_vcoded *c = small_block(dst, 0);
  block_base(c, b);
  c->own = own;
  c->val = val;
  c->thin = u + 1;
  dst->n = b->n;
}

/* dst := the n entries v as a sparse clock over b (docs/design/races.md §20) when b.n <= n (B is 0
 * beyond its n) and at most `most` and n / 4 entries differ from b's, each with B[u] <= v[u] <= B[u] + 0xffff: 1; else 0
 * and dst unchanged. Exact: an entry is left out of the pairs only when it equals b's, and a
 * pair's difference is kept only when the 64-bit subtraction (which wraps to 2^16 or more when
 * v[u] < B[u]) fits 16 bits. */
static uint64_t sparse_made; /* the census */
static int code_sparse(rsan_vc *dst, const uint64_t *v, uint32_t n, rsan_vbase *b, uint64_t own,
                       uint32_t most) {
  if (b->n > n || n > 0x10000) return 0;
  uint32_t k = 0;
  if (most > n / 4) most = n / 4;
  uint16_t pairs[2 * (RSAN_SPARSE_MAX)];
  if (most > RSAN_SPARSE_MAX) most = RSAN_SPARSE_MAX;
  for (uint32_t u = 0; u < n; u++) {
    uint64_t d = v[u] - base_at(b, u);
    if (!d) continue;
    if (d >> 16 || k == most) return 0;
    pairs[2 * k] = (uint16_t)u;
    pairs[2 * k + 1] = (uint16_t)d;
    k++;
  }
  if (!k) return 0; /* (never for an export: its own entry was bumped since b) */
  rsan_vcoded *c = small_block(dst, 2 * k);
  block_base(c, b);
  memcpy(c->off, pairs, 2 * k * sizeof(uint16_t));
  c->own = own;
  c->thin = 0;
  c->sp = k;
  dst->n = n;
  __atomic_add_fetch(&sparse_made, 1, __ATOMIC_RELAXED);
  return 1;
}

#ifdef RSAN_DEBUG
/* the coded d decodes to exactly v's entries */
static int sparse_equal(const rsan_vc *d, const rsan_vc *v) {
  if (d->n != v->n) return 0;
  for (uint32_t i = 0; i < v->n; i++)
    if (rsan_vc_at(d, i) != v->e[i]) return 0;
  return 1;
}
/* b equals v but for v[u], which is no smaller: a thin export of v on b is exact */
static int thin_fits(const rsan_vbase *b, const rsan_vc *v, uint32_t u) {
  if (b->n != v->n || u >= v->n || base_at(b, u) > v->e[u]) return 0;
  for (uint32_t i = 0; i < v->n; i++)
    if (i != u && base_at(b, i) != v->e[i]) return 0;
  return 1;
}
#endif

/* rsan_race.h. src is the clock slot exported at its epoch src[slot] (a thread's C at a
 * release, its R): S_x := src is that export, the owner epoch (slot + 1, src[slot]) */
int rsan_vc_export(rsan_vc *dst, const rsan_vc *src, rsan_vslot *s, uint32_t slot, int how) {
  if (src->n < RSAN_VC_DENSE) { /* frees a coded dst first */
    rsan_vc_assign(dst, src);
    return 0;
  }
  uint64_t own = rsan_vc_own(slot, rsan_vc_get(src, slot));
  if (!s || slot >= src->n) return code(dst, src->e, src->n, s, own);
  /* sparse over the slot's current base (§20) when few entries differ: up to RSAN_SPARSE_MAX
   * after C moved (a new base would cost more than the pairs), up to RSAN_SPARSE_SAME when it
   * did not (then a new base makes every later export thin until C moves) */
  if ((how == RSAN_EXPORT_CODE || how == RSAN_EXPORT_SAME) && s->cur &&
      code_sparse(dst, src->e, src->n, s->cur, own,
                  how == RSAN_EXPORT_CODE ? RSAN_SPARSE_MAX : RSAN_SPARSE_SAME)) {
    RSAN_ASSERT(sparse_equal(dst, src));
    return how == RSAN_EXPORT_SAME ? 2 : 0;
  }
  if (how != RSAN_EXPORT_THIN || !s->cur) { /* over the slot's full base when it fits (§18) */
    __atomic_add_fetch(&bases_rebase, 1, __ATOMIC_RELAXED);
    rsan_vbase *b = s->full ? base_over(src->e, src->n, s->full) : NULL;
    if (b) {
      rsan_vbase_drop(s->cur);
      s->cur = b; /* the slot keeps the reference base_alloc made */
    } else {
      slot_full(s, base_new(src->e, src->n));
    }
  }
  RSAN_ASSERT(thin_fits(s->cur, src, slot));
  code_thin(dst, s->cur, slot, src->e[slot], own);
  return 1;
}

/* a ⊑ t for a location's S_x a (coded or dense) and a thread's clock t (dense) */
static int leq_thread(const rsan_vc *a, const rsan_vc *t) {
  uint32_t n = a->n, tn = t->n;
  if (a->cap != RSAN_VC_CODED) {
    for (uint32_t u = 0; u < n; u++)
      if (a->e[u] > (u < tn ? t->e[u] : 0)) return 0;
    return 1;
  }
  const rsan_vcoded *c = (const rsan_vcoded *)(const void *)a->e;
  if (!c->thin && !c->sp) {
    for (uint32_t u = 0; u < n; u++)
      if (coded_at(c, u) > (u < tn ? t->e[u] : 0)) return 0;
    return 1;
  }
  /* thin or sparse: B <= S_x entry by entry, so S_x ⊑ t iff B ⊑ t and each replaced entry is */
  for (uint32_t u = 0; u < n; u++)
    if (base_at(c->base, u) > (u < tn ? t->e[u] : 0)) return 0;
  if (c->thin) return c->thin - 1 >= tn ? !c->val : c->val <= t->e[c->thin - 1];
  for (uint64_t i = 0; i < c->sp; i++) {
    uint32_t u = c->off[2 * i];
    if (base_at(c->base, u) + c->off[2 * i + 1] > (u < tn ? t->e[u] : 0)) return 0;
  }
  return 1;
}

int rsan_vc_join_export(rsan_vc *dst, const rsan_vc *src, rsan_vslot *s, uint32_t slot, int how) {
  if (!src->n) return how == RSAN_EXPORT_THIN;
  if ((src->n | dst->n) < RSAN_VC_DENSE) { /* both dense: a coded clock has n >= RSAN_VC_DENSE */
    rsan_vc_join(dst, src);
    return how == RSAN_EXPORT_THIN;
  }
  /* dst ⊑ src (an acq_rel RMW: its read part joined dst into C first; or dst's owner epoch in
   * src): dst ⊔ src = src */
  if (rsan_vc_sx_in(dst, src) || leq_thread(dst, src)) {
    RSAN_ASSERT(leq_thread(dst, src));
    return rsan_vc_export(dst, src, s, slot, how);
  }
  uint32_t n = dst->n > src->n ? dst->n : src->n;
  uint64_t *m = vc_arr(n); /* zeroed */
  if (dst->cap == RSAN_VC_CODED) coded_decode((const rsan_vcoded *)(const void *)dst->e, dst->n, m);
  else memcpy(m, dst->e, dst->n * sizeof(uint64_t));
  for (uint32_t u = 0; u < src->n; u++)
    if (src->e[u] > m[u]) m[u] = src->e[u];
  if (n >= RSAN_VC_DENSE && s && s->full && code_on(dst, m, n, s->full, 0)) { /* a join: no owner epoch */
    vc_arr_free(m, n);
    return how == RSAN_EXPORT_THIN;
  }
  /* kept dense, exact size */
  if (dst->cap == RSAN_VC_CODED) vc_uncode_free(dst);
  else vc_arr_free(dst->e, dst->cap);
  dst->e = m;
  dst->n = dst->cap = n;
  return how == RSAN_EXPORT_THIN;
}

/* dst ⊔= src. A clock that other threads read (a thread's C) is written by the _published
 * variants below, entry by entry with relaxed atomic stores; the others (R, A, a location's S,
 * read only by their owner or under the location lock) keep the plain loop the compiler
 * vectorises (a join is on the path of every acquire and release). */
void rsan_vc_join(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src || !src->n) return;
  /* only S_x is ever coded, and S_x ⊔= is rsan_vc_join_export's unless both are dense */
  RSAN_ASSERT(dst->cap != RSAN_VC_CODED);
  if (RSAN_UNLIKELY(src->cap == RSAN_VC_CODED)) {
    vc_join_coded(dst, src, 0);
    return;
  }
  if (src->n > dst->n) vc_extend(dst, src->n);
  for (uint32_t i = 0; i < src->n; i++)
    if (src->e[i] > dst->e[i]) dst->e[i] = src->e[i];
}

/* dst := src */
void rsan_vc_assign(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src) return;
  RSAN_ASSERT(src->cap != RSAN_VC_CODED); /* a coded clock is only ever a location's S_x */
  if (RSAN_UNLIKELY(dst->cap == RSAN_VC_CODED)) vc_uncode_free(dst); /* overwritten: nothing kept */
  vc_grow(dst, src->n);
  if (src->n) memcpy(dst->e, src->e, src->n * sizeof(uint64_t));
  __atomic_store_n(&dst->n, src->n, __ATOMIC_RELEASE);
}

/* rsan_race.h: the same for a clock other threads read (rsan_vc_read) */
/* rsan_vc_join_published's loop: 1 when an entry changed (tracked only when track) */
static inline __attribute__((always_inline)) int join_published_loop(uint64_t *d, const uint64_t *e,
                                                                     uint32_t n, int track) {
  int moved = 0;
  for (uint32_t i = 0; i < n; i++)
    if (e[i] > d[i]) {
      __atomic_store_n(&d[i], e[i], __ATOMIC_RELAXED);
      if (track) moved = 1;
    }
  return moved;
}
/* the join into a dst with fewer entries than src: out of line, so that the common join keeps
 * no registers across a call */
static RSAN_NOINLINE int join_published_grow(rsan_vc *dst, const rsan_vc *src) {
  vc_extend(dst, src->n);
  join_published_loop(dst->e, src->e, src->n, 0);
  return 1;
}
int rsan_vc_join_published(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src || !src->n) return 0;
  if (RSAN_UNLIKELY(src->cap == RSAN_VC_CODED)) return vc_join_coded(dst, src, 1);
  if (RSAN_UNLIKELY(src->n > dst->n)) return join_published_grow(dst, src);
  /* a clock this small is never exported thin: its changes are not tracked */
  if (dst->n < RSAN_VC_DENSE) return join_published_loop(dst->e, src->e, src->n, 0);
  return join_published_loop(dst->e, src->e, src->n, 1);
}
void rsan_vc_assign_published(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src) return;
  vc_grow(dst, src->n);
  for (uint32_t i = 0; i < src->n; i++) __atomic_store_n(&dst->e[i], src->e[i], __ATOMIC_RELAXED);
  __atomic_store_n(&dst->n, src->n, __ATOMIC_RELEASE);
}

/* a ⊑ b */
int rsan_vc_leq(const rsan_vc *a, const rsan_vc *b) {
  for (uint32_t i = 0; i < a->n; i++)
    if (rsan_vc_at(a, i) > rsan_vc_at(b, i)) return 0;
  return 1;
}

void rsan_vc_free(rsan_vc *v) {
  if (RSAN_UNLIKELY(v->cap == RSAN_VC_CODED)) { /* a location's S_x: nobody else reads it */
    vc_uncode_free(v);
    return;
  }
  uint64_t *e = v->e;
  uint32_t cap = v->cap;
  if (e) rsan_spin_lock(&shared_lock);
  __atomic_store_n(&v->n, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&v->e, NULL, __ATOMIC_RELEASE);
  v->cap = 0;
  if (e) rsan_spin_unlock(&shared_lock);
  vc_arr_free(e, cap);
}

void rsan_vc_census_peak(uint64_t *now, uint64_t *peak, uint64_t *peak_bases) {
  *peak_bases = __atomic_load_n(&bases_at_peak, __ATOMIC_RELAXED);
  *now = __atomic_load_n(&coded_now, __ATOMIC_RELAXED);
  *peak = __atomic_load_n(&coded_peak, __ATOMIC_RELAXED);
}
void rsan_vc_census_made(uint64_t *unfit, uint64_t *rebase, uint64_t *over, uint64_t *over_nz,
                         uint64_t *sparse) {
  *sparse = __atomic_load_n(&sparse_made, __ATOMIC_RELAXED);
  *over_nz = __atomic_load_n(&bases_over_nz, __ATOMIC_RELAXED);
  *unfit = __atomic_load_n(&bases_unfit, __ATOMIC_RELAXED);
  *rebase = __atomic_load_n(&bases_rebase, __ATOMIC_RELAXED);
  *over = __atomic_load_n(&bases_over, __ATOMIC_RELAXED);
}
void rsan_vc_census(uint64_t *bases, uint64_t *bytes) {
  *bases = __atomic_load_n(&bases_live, __ATOMIC_RELAXED);
  *bytes = __atomic_load_n(&bases_bytes, __ATOMIC_RELAXED);
}

/* rsan_race.h: reading another thread's clock */
void rsan_vc_read_lock(void) { rsan_spin_lock(&shared_lock); }
void rsan_vc_read_unlock(void) { rsan_spin_unlock(&shared_lock); }
uint64_t rsan_vc_read(const rsan_vc *v, uint32_t tid) {
  uint32_t n = __atomic_load_n(&v->n, __ATOMIC_ACQUIRE); /* the array is at least this long */
  const uint64_t *e = __atomic_load_n(&v->e, __ATOMIC_ACQUIRE);
  return tid < n && e ? __atomic_load_n(&e[tid], __ATOMIC_RELAXED) : 0;
}
