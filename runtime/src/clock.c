/* Location clocks (paper §5, algorithm.md §2). A missing id means timestamp 0.
 * Each clock is fused with its U twin and stored as shared copy-on-write chunks under a
 * shared copy-on-write spine, with cheap containment tests (see rsan_internal.h for the
 * representation and why each shortcut is exact). */
#include <string.h>

#include "rsan_internal.h"

#define RSAN_LC_LINEAR 16
/* ==== Fused, copy-on-write clocks (rsan_clk; see rsan_internal.h) ==== */

/* Buffer versions: unique, never 0, handed out in per-thread blocks (no shared counter on the
 * hot path). */
#define VER_BLOCK (1u << 16)
static uint64_t ver_global;
static __thread uint64_t ver_next, ver_end;

static inline uint64_t new_ver(void) {
  if (RSAN_UNLIKELY(ver_next == ver_end)) {
    uint64_t base = __atomic_fetch_add(&ver_global, VER_BLOCK, __ATOMIC_RELAXED);
    ver_next = base + 1;
    ver_end = base + VER_BLOCK;
  }
  return ver_next++;
}

/* Chunks: RSAN_CH_SLOTS consecutive ids, dense (ts and tsU by id % RSAN_CH_SLOTS), shared
 * between spines with their own reference count; immutable when shared. */
static rsan_chunk *chunk_new(void) {
  rsan_chunk *c = rsan_alloc(sizeof *c); /* zeroed */
  c->ref = 1;
  return c;
}
static inline void chunk_ref(rsan_chunk *c) { __atomic_add_fetch(&c->ref, 1, __ATOMIC_RELAXED); }
static inline void chunk_unref(rsan_chunk *c) {
  if (__atomic_sub_fetch(&c->ref, 1, __ATOMIC_ACQ_REL) == 0) rsan_free(c);
}
/* a ⊑ b on the sides selected by which */
static inline int chunk_leq(const rsan_chunk *a, const rsan_chunk *b, int which) {
  uint64_t bad = 0;
  if (which & 1)
    for (int k = 0; k < RSAN_CH_SLOTS; k++) bad |= a->ts[k] > b->ts[k];
  if (which & 2)
    for (int k = 0; k < RSAN_CH_SLOTS; k++) bad |= a->tsU[k] > b->tsU[k];
  return !bad;
}
static inline int chunk_zero(const rsan_chunk *a, int which) {
  uint64_t any = 0;
  for (int k = 0; k < RSAN_CH_SLOTS; k++) any |= ((which & 1) ? a->ts[k] : 0) | ((which & 2) ? a->tsU[k] : 0);
  return !any;
}
static inline void chunk_max(rsan_chunk *d, const rsan_chunk *s) {
  for (int k = 0; k < RSAN_CH_SLOTS; k++) d->ts[k] = d->ts[k] > s->ts[k] ? d->ts[k] : s->ts[k];
  for (int k = 0; k < RSAN_CH_SLOTS; k++) d->tsU[k] = d->tsU[k] > s->tsU[k] ? d->tsU[k] : s->tsU[k];
}

/* Spines (rsan_cbuf): sorted (key, chunk) arrays, key = id / RSAN_CH_SLOTS. */
static inline size_t buf_size(uint32_t cap) { return sizeof(rsan_cbuf) + (size_t)cap * sizeof(rsan_slot); }

static rsan_cbuf *buf_alloc(uint32_t cap) {
  if (cap < 4) cap = 4;
  rsan_cbuf *b = rsan_alloc_raw(buf_size(cap));
  b->ref = 1;
  b->n = 0;
  b->cap = cap;
  b->ver = 0;
  b->origin = 0;
  b->oseq = 0;
  return b;
}

static inline void buf_unref(rsan_cbuf *b) {
  if (b && __atomic_sub_fetch(&b->ref, 1, __ATOMIC_ACQ_REL) == 0) {
    for (uint32_t i = 0; i < b->n; i++) chunk_unref(b->e[i].c);
    rsan_free(b);
  }
}

/* Only the holder asking can hold a reference: then nobody else can take one (references are
 * taken from a holder, under the holder's protection), so the spine may be written; a chunk
 * may be written when, in addition, this spine is its only holder. */
static inline int buf_exclusive(const rsan_cbuf *b) { return __atomic_load_n(&b->ref, __ATOMIC_ACQUIRE) == 1; }

static inline uint32_t slot_lower_bound(const rsan_cbuf *b, uint64_t key) {
  uint32_t lo = 0, hi = b->n;
  if (hi <= RSAN_LC_LINEAR) {
    while (lo < hi && b->e[lo].key < key) lo++;
    return lo;
  }
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (b->e[mid].key < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* a ⊑ b on the sides selected by which (1 plain, 2 U); NULL is ⊥. */
static int buf_leq(const rsan_cbuf *a, const rsan_cbuf *b, int which) {
  if (!a) return 1;
  uint32_t j = 0, bn = b ? b->n : 0;
  for (uint32_t i = 0; i < a->n; i++) {
    while (j < bn && b->e[j].key < a->e[i].key) j++;
    if (j < bn && b->e[j].key == a->e[i].key) {
      if (b->e[j].c != a->e[i].c && !chunk_leq(a->e[i].c, b->e[j].c, which)) return 0;
    } else if (!chunk_zero(a->e[i].c, which)) {
      return 0;
    }
  }
  return 1;
}


/* c contains buffer s: remember it */
static inline void memo_add(rsan_clk *c, const rsan_cbuf *s) {
  if (s->origin) {
    int k;
    for (k = 0; k < RSAN_MEMO_PAIR; k++) {
      if (c->memo[k].origin == s->origin) {
        if (c->memo[k].seq < s->oseq) c->memo[k].seq = s->oseq;
        return;
      }
    }
    k = (int)(c->memo_next++ % RSAN_MEMO_PAIR);
    c->memo[k].origin = s->origin;
    c->memo[k].seq = s->oseq;
    return;
  }
  for (int k = 0; k < RSAN_MEMO_VER; k++)
    if (c->memo_ver[k] == s->ver) return;
  c->memo_ver[c->memo_ver_next++ % RSAN_MEMO_VER] = s->ver;
}

/* c contains everything src's memo says src contains (c ⊒ src) */
static inline void memo_inherit(rsan_clk *c, const rsan_clk *src) {
  uint32_t filled = src->memo_next < RSAN_MEMO_PAIR ? src->memo_next : RSAN_MEMO_PAIR;
  for (uint32_t k = 0; k < filled; k++) {
    const rsan_memo_pair *p = &src->memo[k];
    if (!p->origin) continue;
    int j;
    for (j = 0; j < RSAN_MEMO_PAIR; j++) {
      if (c->memo[j].origin == p->origin) {
        if (c->memo[j].seq < p->seq) c->memo[j].seq = p->seq;
        break;
      }
    }
    if (j == RSAN_MEMO_PAIR) {
      j = (int)(c->memo_next++ % RSAN_MEMO_PAIR);
      c->memo[j] = *p;
    }
  }
}

static inline void memo_clear(rsan_clk *c) {
  memset(c->memo_ver, 0, sizeof c->memo_ver);
  memset(c->memo, 0, sizeof c->memo);
  c->memo_ver_next = c->memo_next = 0;
}

/* Is buffer s known, without looking at entries, to be contained in clock c? */
static inline int buf_known_leq(const rsan_cbuf *s, const rsan_clk *c) {
  if (!s || s == c->b) return 1;
  if (s->origin) {
    /* a state of one of this thread's clocks of the same or a lower rank */
    if (c->self && (s->origin >> 2) == (c->self >> 2) && (s->origin & 3) <= (c->self & 3)) return 1;
    for (int k = 0; k < RSAN_MEMO_PAIR; k++)
      if (c->memo[k].origin == s->origin && c->memo[k].seq >= s->oseq) return 1;
    return 0;
  }
  for (int k = 0; k < RSAN_MEMO_VER; k++)
    if (c->memo_ver[k] == s->ver) return 1;
  return 0;
}

/* Is chunk ch known, without looking at it, to be contained in clock c? */
static inline int chunk_known_leq(const rsan_chunk *ch, const rsan_clk *c) {
  if (!ch->origin) return 0;
  if (c->self && (ch->origin >> 2) == (c->self >> 2) && (ch->origin & 3) <= (c->self & 3)) return 1;
  for (int k = 0; k < RSAN_MEMO_PAIR; k++)
    if (c->memo[k].origin == ch->origin && c->memo[k].seq >= ch->oseq) return 1;
  return 0;
}

/* A chunk written as part of c's current state (after mark_new_state). */
static inline void chunk_stamp(rsan_chunk *ch, const rsan_clk *c) {
  ch->origin = c->self;
  ch->oseq = c->self ? c->seq : 0;
}

/* A new content state of c's (exclusive) buffer b. */
static inline void mark_new_state(rsan_clk *c, rsan_cbuf *b) {
  b->ver = new_ver();
  b->origin = c->self;
  b->oseq = c->self ? ++c->seq : 0;
}

/* c's spine, referenced by c alone, with room for need slots, marked as a new content state
 * of c (copies a shared spine: copy-on-write; the chunks stay shared). */
static rsan_cbuf *clk_writable(rsan_clk *c, uint32_t need) {
  rsan_cbuf *b = c->b;
  if (b && buf_exclusive(b)) {
    if (need > b->cap) {
      uint32_t cap = b->cap * 2;
      while (cap < need) cap *= 2;
      b = rsan_realloc(b, buf_size(cap));
      b->cap = cap;
      c->b = b;
    }
  } else {
    uint32_t n = b ? b->n : 0;
    uint32_t cap = need > n ? need : n;
    rsan_cbuf *nb = buf_alloc(cap + cap / 8 + 2);
    for (uint32_t i = 0; i < n; i++) {
      nb->e[i] = b->e[i];
      chunk_ref(nb->e[i].c);
    }
    nb->n = n;
    buf_unref(b);
    c->b = b = nb;
  }
  mark_new_state(c, b);
  return b;
}

/* Chunk i of c's exclusive spine b, made writable (copy-on-write) and stamped as part of c's
 * current state. */
static inline rsan_chunk *chunk_writable(const rsan_clk *c, rsan_cbuf *b, uint32_t i) {
  rsan_chunk *ch = b->e[i].c;
  if (__atomic_load_n(&ch->ref, __ATOMIC_ACQUIRE) != 1) {
    rsan_chunk *nc = rsan_alloc_raw(sizeof *nc);
    memcpy(nc, ch, sizeof *nc);
    nc->ref = 1;
    chunk_unref(ch);
    b->e[i].c = ch = nc;
  }
  chunk_stamp(ch, c);
  return ch;
}

/* dst's spine := s (a reference), keeping dst's memo. */
static inline void clk_share(rsan_clk *dst, rsan_cbuf *s) {
  if (dst->b == s) return;
  if (s) __atomic_add_fetch(&s->ref, 1, __ATOMIC_RELAXED);
  buf_unref(dst->b);
  dst->b = s;
}


void rsan_clk_init(rsan_clk *c, uint64_t self) {
  memset(c, 0, sizeof *c);
  c->self = self;
}

void rsan_clk_release(rsan_clk *c) {
  buf_unref(c->b);
  c->b = NULL;
  c->f = c->fU = 0;
  memo_clear(c);
}

uint32_t rsan_clk_refs(const rsan_clk *c) { return c->b ? __atomic_load_n(&c->b->ref, __ATOMIC_RELAXED) : 0; }

void rsan_clk_get2(const rsan_clk *c, uint64_t id, uint64_t *ts, uint64_t *tsU) {
  if (id == 0) {
    *ts = c->f;
    *tsU = c->fU;
    return;
  }
  const rsan_cbuf *b = c->b;
  if (b) {
    uint64_t key = id / RSAN_CH_SLOTS;
    uint32_t i = slot_lower_bound(b, key);
    if (i < b->n && b->e[i].key == key) {
      *ts = b->e[i].c->ts[id % RSAN_CH_SLOTS];
      *tsU = b->e[i].c->tsU[id % RSAN_CH_SLOTS];
      return;
    }
  }
  *ts = *tsU = 0;
}

void rsan_clk_set_max(rsan_clk *c, uint64_t id, uint64_t ts, uint64_t tsU) {
  if (id == 0) {
    if (c->f < ts) c->f = ts;
    if (c->fU < tsU) c->fU = tsU;
    return;
  }
  if (!ts && !tsU) return;
  uint64_t key = id / RSAN_CH_SLOTS;
  uint32_t k = (uint32_t)(id % RSAN_CH_SLOTS);
  rsan_cbuf *b = c->b;
  uint32_t i = 0, n = 0;
  if (b) {
    n = b->n;
    i = slot_lower_bound(b, key);
    if (i < n && b->e[i].key == key) {
      const rsan_chunk *ch = b->e[i].c;
      if (ch->ts[k] >= ts && ch->tsU[k] >= tsU) return; /* no change: no copy */
      b = clk_writable(c, n);
      rsan_chunk *w = chunk_writable(c, b, i);
      if (w->ts[k] < ts) w->ts[k] = ts;
      if (w->tsU[k] < tsU) w->tsU[k] = tsU;
      return;
    }
  }
  b = clk_writable(c, n + 1);
  memmove(&b->e[i + 1], &b->e[i], (size_t)(n - i) * sizeof(rsan_slot));
  rsan_chunk *w = chunk_new();
  chunk_stamp(w, c);
  w->ts[k] = ts;
  w->tsU[k] = tsU;
  b->e[i].key = key;
  b->e[i].c = w;
  b->n = n + 1;
}

/* dst ⊔= s chunk by chunk: equal chunk pointers are skipped, a contained chunk is kept, a
 * containing one is shared, only the others are merged. Changes nothing (and copies
 * nothing) when s ⊑ dst. */
/* chunk sc (of src) ⊑ chunk dc (of dst), by pointer, by stamp, or by looking */
static inline int chunk_in(const rsan_chunk *sc, const rsan_chunk *dc, const rsan_clk *dst) {
  if (sc == dc) return 1;
  if (chunk_known_leq(sc, dst)) {
    RSAN_ASSERT(chunk_leq(sc, dc, 3));
    return 1;
  }
  return chunk_leq(sc, dc, 3);
}

static void join_spines(rsan_clk *dst, const rsan_clk *src) {
  const rsan_cbuf *s = src->b;
  rsan_cbuf *d = dst->b;
  uint32_t i = 0, j = 0, dn = d->n, sn = s->n, extra = 0;
  int changed = 0;
  while (j < sn) {
    if (i == dn) {
      extra += sn - j;
      break;
    }
    if (d->e[i].key < s->e[j].key) {
      i++;
    } else if (d->e[i].key > s->e[j].key) {
      extra++;
      j++;
    } else {
      if (!chunk_in(s->e[j].c, d->e[i].c, dst)) changed = 1;
      i++;
      j++;
    }
  }
  if (!changed && !extra) return;
  if (!extra && buf_exclusive(d)) { /* same keys: update the chunks in place */
    mark_new_state(dst, d);
    for (i = 0, j = 0; j < sn; j++) {
      while (d->e[i].key < s->e[j].key) i++;
      rsan_chunk *dc = d->e[i].c, *sc = s->e[j].c;
      if (chunk_in(sc, dc, dst)) continue;
      if (chunk_in(dc, sc, src)) {
        chunk_ref(sc);
        chunk_unref(dc);
        d->e[i].c = sc;
      } else {
        chunk_max(chunk_writable(dst, d, i), sc);
      }
    }
    return;
  }
  rsan_cbuf *nb = buf_alloc(dn + extra + 2);
  mark_new_state(dst, nb);
  uint32_t o = 0;
  i = j = 0;
  while (i < dn || j < sn) {
    rsan_slot x;
    if (j == sn || (i < dn && d->e[i].key < s->e[j].key)) {
      x = d->e[i++];
      chunk_ref(x.c);
    } else if (i == dn || d->e[i].key > s->e[j].key) {
      x = s->e[j++];
      chunk_ref(x.c);
    } else {
      rsan_chunk *dc = d->e[i++].c, *sc = s->e[j++].c;
      x.key = s->e[j - 1].key;
      if (chunk_in(sc, dc, dst)) {
        x.c = dc;
        chunk_ref(dc);
      } else if (chunk_in(dc, sc, src)) {
        x.c = sc;
        chunk_ref(sc);
      } else {
        x.c = rsan_alloc_raw(sizeof *x.c);
        memcpy(x.c, dc, sizeof *x.c);
        x.c->ref = 1;
        chunk_max(x.c, sc);
        chunk_stamp(x.c, dst);
      }
    }
    nb->e[o++] = x;
  }
  nb->n = o;
  buf_unref(d);
  dst->b = nb;
}

void rsan_clk_join(rsan_clk *dst, const rsan_clk *src) {
  if (dst == src) return;
  if (dst->f < src->f) dst->f = src->f;
  if (dst->fU < src->fU) dst->fU = src->fU;
  rsan_cbuf *s = src->b;
  if (buf_known_leq(s, dst)) {
    RSAN_ASSERT(buf_leq(s, dst->b, 3));
    return;
  }
  if (buf_known_leq(dst->b, src)) { /* dst ⊑ src: the join is src's spine */
    RSAN_ASSERT(buf_leq(dst->b, s, 3));
    clk_share(dst, s);
    memo_add(dst, s);
    memo_inherit(dst, src);
    return;
  }
  rsan_cbuf sh = *s; /* header: origin, oseq, version of what is joined */
  join_spines(dst, src);
  memo_add(dst, &sh);
  memo_inherit(dst, src); /* dst ⊒ src now */
}


void rsan_clk_join_restricted(rsan_clk *dst, const rsan_clk *src, uint64_t id) {
  uint64_t ts, tsU;
  rsan_clk_get2(src, id, &ts, &tsU);
  rsan_clk_set_max(dst, id, ts, tsU);
}

void rsan_clk_assign(rsan_clk *dst, const rsan_clk *src) {
  if (dst == src) return;
  /* a thread clock keeps its memo: it only grows (algorithm.md §3.4), so src ⊒ dst */
  RSAN_ASSERT(!dst->self || rsan_clk_leq(dst, src, 3));
  dst->f = src->f;
  dst->fU = src->fU;
  clk_share(dst, src->b);
  if (!dst->self) { /* a location clock: now equal to src, so src's memo is exact for it */
    memcpy(dst->memo_ver, src->memo_ver, sizeof dst->memo_ver);
    memcpy(dst->memo, src->memo, sizeof dst->memo);
    dst->memo_ver_next = src->memo_ver_next;
    dst->memo_next = src->memo_next;
  } else {
    memo_inherit(dst, src);
  }
  if (src->b) memo_add(dst, src->b);
}

int rsan_clk_leq(const rsan_clk *a, const rsan_clk *b, int which) {
  if ((which & 1) && a->f > b->f) return 0;
  if ((which & 2) && a->fU > b->fU) return 0;
  return buf_leq(a->b, b->b, which);
}

/* tests (testsuite/runtime/test_snapshots.py): clocks as opaque heap objects */
RSAN_EXPORT rsan_clk *rsan_clk_test_new(uint64_t self) {
  rsan_clk *c = rsan_alloc(sizeof *c);
  rsan_clk_init(c, self);
  return c;
}

RSAN_EXPORT void rsan_clk_test_free(rsan_clk *c) {
  rsan_clk_release(c);
  rsan_free(c);
}
