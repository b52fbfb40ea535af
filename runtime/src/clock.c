/* Location clocks: sorted arrays of (location id, timestamp) (paper §5, algorithm.md §2).
 * A missing id means timestamp 0. Lookup is linear for small clocks and binary for large
 * ones; join merges in place (from the back, so no temporary array is needed). */
#include <string.h>

#include "rsan_internal.h"

#define RSAN_LC_LINEAR 16

static void lc_reserve(rsan_lc *c, uint32_t need) {
  if (need <= c->cap) return;
  uint32_t cap = c->cap ? c->cap : 4;
  while (cap < need) cap *= 2;
  c->e = rsan_realloc(c->e, (size_t)cap * sizeof(rsan_lce));
  c->cap = cap;
}

/* Index of the first entry with id >= id. */
static uint32_t lc_lower_bound(const rsan_lc *c, uint64_t id) {
  if (c->n <= RSAN_LC_LINEAR) {
    uint32_t i = 0;
    while (i < c->n && c->e[i].id < id) i++;
    return i;
  }
  uint32_t lo = 0, hi = c->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (c->e[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

uint64_t rsan_lc_get(const rsan_lc *c, uint64_t id) {
  uint32_t i = lc_lower_bound(c, id);
  return (i < c->n && c->e[i].id == id) ? c->e[i].ts : 0;
}

void rsan_lc_set_max(rsan_lc *c, uint64_t id, uint64_t ts) {
  if (ts == 0) return;
  uint32_t i = lc_lower_bound(c, id);
  if (i < c->n && c->e[i].id == id) {
    if (c->e[i].ts < ts) c->e[i].ts = ts;
    return;
  }
  lc_reserve(c, c->n + 1);
  memmove(&c->e[i + 1], &c->e[i], (size_t)(c->n - i) * sizeof(rsan_lce));
  c->e[i].id = id;
  c->e[i].ts = ts;
  c->n++;
}

int rsan_lc_join(rsan_lc *dst, const rsan_lc *src) {
  if (dst == src || src->n == 0) return 0;
  int changed = 0;
  if (src->n <= 2 && dst->n > 8) { /* tiny src (e.g. W(x) = x@t): point updates */
    for (uint32_t k = 0; k < src->n; k++) {
      uint64_t before = rsan_lc_get(dst, src->e[k].id);
      if (before < src->e[k].ts) {
        rsan_lc_set_max(dst, src->e[k].id, src->e[k].ts);
        changed = 1;
      }
    }
    return changed;
  }
  /* Pass 1: update the common ids in place, count the ids only src has. The common case
   * of identical id sets is a straight, branch-predictable loop. */
  uint32_t i = 0, j = 0, extra = 0;
  if (dst->n == src->n) {
    while (i < dst->n && dst->e[i].id == src->e[i].id) {
      if (dst->e[i].ts < src->e[i].ts) {
        dst->e[i].ts = src->e[i].ts;
        changed = 1;
      }
      i++;
    }
    if (i == dst->n) return changed;
    j = i;
  }
  while (j < src->n) {
    if (i == dst->n) {
      extra += src->n - j;
      break;
    }
    if (dst->e[i].id < src->e[j].id) {
      i++;
    } else if (dst->e[i].id > src->e[j].id) {
      extra++;
      j++;
    } else {
      if (dst->e[i].ts < src->e[j].ts) {
        dst->e[i].ts = src->e[j].ts;
        changed = 1;
      }
      i++;
      j++;
    }
  }
  if (extra == 0) return changed;
  /* Pass 2: merge from the back into the grown array. */
  lc_reserve(dst, dst->n + extra);
  int64_t a = (int64_t)dst->n - 1, b = (int64_t)src->n - 1, out = (int64_t)dst->n + extra - 1;
  while (b >= 0) {
    if (a >= 0 && dst->e[a].id > src->e[b].id) {
      dst->e[out--] = dst->e[a--];
    } else if (a >= 0 && dst->e[a].id == src->e[b].id) {
      dst->e[out--] = dst->e[a--]; /* already maxed in pass 1 */
      b--;
    } else {
      dst->e[out--] = src->e[b--];
    }
  }
  /* the remaining dst prefix is already in place (out == a) */
  dst->n += extra;
  return 1;
}

void rsan_lc_join_restricted(rsan_lc *dst, const rsan_lc *src, uint64_t id) {
  rsan_lc_set_max(dst, id, rsan_lc_get(src, id));
}

void rsan_lc_copy(rsan_lc *dst, const rsan_lc *src) {
  if (dst == src) return;
  lc_reserve(dst, src->n);
  if (src->n) memcpy(dst->e, src->e, (size_t)src->n * sizeof(rsan_lce));
  dst->n = src->n;
}

void rsan_lc_singleton(rsan_lc *c, uint64_t id, uint64_t ts) {
  c->n = 0;
  rsan_lc_set_max(c, id, ts);
}

void rsan_lc_clear(rsan_lc *c) { c->n = 0; }

void rsan_lc_free(rsan_lc *c) {
  rsan_free(c->e);
  c->e = NULL;
  c->n = c->cap = 0;
}

int rsan_lc_leq(const rsan_lc *a, const rsan_lc *b) {
  uint32_t j = 0;
  for (uint32_t i = 0; i < a->n; i++) {
    while (j < b->n && b->e[j].id < a->e[i].id) j++;
    if (j == b->n || b->e[j].id != a->e[i].id || b->e[j].ts < a->e[i].ts) return 0;
  }
  return 1;
}

int rsan_lc_eq(const rsan_lc *a, const rsan_lc *b) {
  return a->n == b->n && (a->n == 0 || memcmp(a->e, b->e, (size_t)a->n * sizeof(rsan_lce)) == 0);
}
