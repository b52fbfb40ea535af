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
  if (c->cap > RSAN_CLK_INLINE) rsan_free(c->u.ext);
  rsan_clk_init(c);
}

void rsan_clk_grow(rsan_clk *c, uint32_t n) {
  if (n <= c->n) return;
  uint32_t have = c->cap > RSAN_CLK_INLINE ? c->cap : RSAN_CLK_INLINE;
  if (n > have) {
    uint32_t cap = (n + 3) & ~3u; /* exact (a multiple of 4): slot counts grow rarely */
    uint64_t *e = rsan_alloc(cap * sizeof(uint64_t));
    if (c->n) memcpy(e, rsan_clk_e(c), c->n * sizeof(uint64_t));
    if (c->cap > RSAN_CLK_INLINE) rsan_free(c->u.ext);
    c->u.ext = e;
    c->cap = cap;
  }
  memset(rsan_clk_e(c) + c->n, 0, (n - c->n) * sizeof(uint64_t));
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
/* the max loop of rsan_clk_join_slow: 1 when an entry of d changed */
RSAN_JOIN_CLONES static int join_loop(uint64_t *d, const uint64_t *s, uint32_t n) {
  uint64_t changed = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t m = d[i] > s[i] ? d[i] : s[i];
    changed |= m ^ d[i];
    d[i] = m;
  }
  return changed != 0;
}

/* rsan_clk_join when a clock is not inline */
void rsan_clk_join_slow(rsan_clk *dst, const rsan_clk *src) {
  uint32_t n = src->n;
  if (RSAN_UNLIKELY(n > dst->n)) rsan_clk_grow(dst, n);
  if (join_loop(rsan_clk_e(dst), rsan_clk_ce(src), n) || !dst->ver) dst->ver = rsan_clk_newver();
}

/* rsan_clk_assign when a clock is not inline */
__attribute__((no_builtin("memcpy"))) void rsan_clk_assign_slow(rsan_clk *dst, const rsan_clk *src) {
  if (RSAN_UNLIKELY(src->n > (dst->cap > RSAN_CLK_INLINE ? dst->cap : RSAN_CLK_INLINE)))
    rsan_clk_grow(dst, src->n);
  uint64_t *d = rsan_clk_e(dst);
  const uint64_t *s = rsan_clk_ce(src);
  for (uint32_t i = 0; i < src->n; i++) d[i] = s[i]; /* short: a call to memcpy costs more */
  if (dst->cap <= RSAN_CLK_INLINE) /* inline entries >= n stay 0 */
    for (uint32_t i = src->n; i < RSAN_CLK_INLINE; i++) d[i] = 0;
  dst->n = src->n;
  dst->ver = src->ver; /* the same content */
}

int rsan_clk_leq(const rsan_clk *a, const rsan_clk *b) {
  const uint64_t *e = rsan_clk_ce(a);
  for (uint32_t i = 0; i < a->n; i++)
    if (e[i] > rsan_clk_at(b, i)) return 0;
  return 1;
}
