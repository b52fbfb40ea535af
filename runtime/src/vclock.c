/* Vector clocks of the race detector (algorithm.md §5): one entry per thread id (small,
 * dense, never reused: thread.c), grown on demand. A clock with n entries holds 0 for every
 * thread id >= n. Memory comes from rsan_alloc/rsan_free (never the interposed malloc). */
#include <string.h>

#include "rsan_internal.h"

static void vc_grow(rsan_vc *v, uint32_t n) {
  if (n <= v->cap) return;
  uint32_t cap = v->cap ? v->cap : 4;
  while (cap < n) cap *= 2;
  uint64_t *e = rsan_alloc(cap * sizeof(uint64_t));
  if (v->n) memcpy(e, v->e, v->n * sizeof(uint64_t));
  rsan_free(v->e);
  v->e = e;
  v->cap = cap;
}

void rsan_vc_set(rsan_vc *v, uint32_t tid, uint64_t c) {
  if (tid >= v->n) {
    vc_grow(v, tid + 1);
    memset(v->e + v->n, 0, (tid + 1 - v->n) * sizeof(uint64_t));
    v->n = tid + 1;
  }
  v->e[tid] = c;
}

/* dst ⊔= src */
void rsan_vc_join(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src || !src->n) return;
  if (src->n > dst->n) {
    vc_grow(dst, src->n);
    memset(dst->e + dst->n, 0, (src->n - dst->n) * sizeof(uint64_t));
    dst->n = src->n;
  }
  for (uint32_t i = 0; i < src->n; i++)
    if (src->e[i] > dst->e[i]) dst->e[i] = src->e[i];
}

/* dst := src */
void rsan_vc_assign(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src) return;
  vc_grow(dst, src->n);
  if (src->n) memcpy(dst->e, src->e, src->n * sizeof(uint64_t));
  dst->n = src->n;
}

/* a ⊑ b */
int rsan_vc_leq(const rsan_vc *a, const rsan_vc *b) {
  for (uint32_t i = 0; i < a->n; i++)
    if (a->e[i] > rsan_vc_get(b, i)) return 0;
  return 1;
}

void rsan_vc_free(rsan_vc *v) {
  rsan_free(v->e);
  v->e = NULL;
  v->n = v->cap = 0;
}
