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

void rsan_clk_release(rsan_clk *c) {
  if (c->cap > RSAN_CLK_INLINE) rsan_free(c->u.x.ext);
  rsan_clk_init(c);
}

/* ---- width (rsan_internal.h): a location clock's array is narrow (32-bit entries) while
 * every entry it holds fits; exact, since an entry is converted to 64 bits before a value
 * that does not fit is stored. ---- */
#define NARROW_MAX 0xFFFFFFFFull

uint64_t rsan_clk_get(const rsan_clk *c, uint32_t slot) {
  if (slot >= c->n) return 0;
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
    if (narrow)
      ((uint32_t *)e)[i] = (uint32_t)v;
    else
      ((uint64_t *)e)[i] = v;
  }
  if (c->cap > RSAN_CLK_INLINE) rsan_free(c->u.x.ext);
  c->u.x.ext = e;
  c->u.x.narrow = (uint32_t)narrow;
  c->cap = cap;
}

/* a narrow clock made 64-bit (an entry that does not fit is about to be stored) */
static void clk_widen(rsan_clk *c) {
  if (rsan_clk_narrow(c)) clk_move(c, c->cap, 0);
}

void rsan_clk_grow(rsan_clk *c, uint32_t n) {
  if (n <= c->n) return;
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
RSAN_JOIN_CLONES static int join_loop(uint64_t *d, const uint64_t *s, uint32_t n) {
  uint64_t changed = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t m = d[i] > s[i] ? d[i] : s[i];
    changed |= m ^ d[i];
    d[i] = m;
  }
  return changed != 0;
}
RSAN_JOIN_CLONES static int join_loop_wn(uint64_t *d, const uint32_t *s, uint32_t n) {
  uint64_t changed = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t m = d[i] > s[i] ? d[i] : s[i];
    changed |= m ^ d[i];
    d[i] = m;
  }
  return changed != 0;
}
RSAN_JOIN_CLONES static int join_loop_nn(uint32_t *d, const uint32_t *s, uint32_t n) {
  uint32_t changed = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t m = d[i] > s[i] ? d[i] : s[i];
    changed |= m ^ d[i];
    d[i] = m;
  }
  return changed != 0;
}
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
  uint32_t n = src->n;
  if (RSAN_UNLIKELY(n > dst->n)) rsan_clk_grow(dst, n);
  int changed, sn = rsan_clk_narrow(src);
  if (!rsan_clk_narrow(dst)) {
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

/* dst := src, any widths (rsan_clk_assign when a clock is not inline) */
__attribute__((no_builtin("memcpy"))) void rsan_clk_assign_slow(rsan_clk *dst, const rsan_clk *src) {
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

int rsan_clk_leq(const rsan_clk *a, const rsan_clk *b) {
  for (uint32_t i = 0; i < a->n; i++)
    if (rsan_clk_get(a, i) > rsan_clk_get(b, i)) return 0;
  return 1;
}
