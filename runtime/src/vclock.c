/* Vector clocks of the race detector (algorithm.md §5): one entry per thread slot (small,
 * dense, reused only exactly: thread.c), grown on demand. A clock with n entries holds 0 for
 * every slot >= n. Memory comes from rsan_alloc/rsan_free (never the interposed malloc).
 *
 * Threads' C clocks are also read by other threads (race_floor.c, the floor of a full
 * granule) while their owners grow them. So every clock publishes its array and size with
 * release stores, a C clock's entries are written with relaxed atomic stores (rsan_vc_set and
 * the _published variants: a reader sees, per entry, an old or a new value, never a torn one;
 * entries only grow, so a value read is a lower bound of the owner's later values), and an
 * array or clock is freed only after it was unpublished under shared_lock, which the readers
 * hold while they read (rsan_vc_read_lock). Grows and
 * frees are rare (doubling; thread join; location retire), the lock is a leaf. */
#include <string.h>

#include "rsan_race.h"

static rsan_spin shared_lock;

static void vc_grow(rsan_vc *v, uint32_t n) {
  if (n <= v->cap) return;
  uint32_t cap = v->cap ? v->cap : 4;
  while (cap < n) cap *= 2;
  uint64_t *e = rsan_alloc(cap * sizeof(uint64_t)), *old = v->e;
  if (v->n) memcpy(e, old, v->n * sizeof(uint64_t));
  if (old) rsan_spin_lock(&shared_lock); /* a reader may hold the old array */
  __atomic_store_n(&v->e, e, __ATOMIC_RELEASE);
  v->cap = cap;
  if (old) rsan_spin_unlock(&shared_lock);
  rsan_free(old); /* no reader can still hold it: they read under shared_lock */
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

/* dst ⊔= src. A clock that other threads read (a thread's C) is written by the _published
 * variants below, entry by entry with relaxed atomic stores; the others (R, A, a location's S,
 * read only by their owner or under the location lock) keep the plain loop the compiler
 * vectorises (a join is on the path of every acquire and release). */
void rsan_vc_join(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src || !src->n) return;
  if (src->n > dst->n) vc_extend(dst, src->n);
  for (uint32_t i = 0; i < src->n; i++)
    if (src->e[i] > dst->e[i]) dst->e[i] = src->e[i];
}

/* dst := src */
void rsan_vc_assign(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src) return;
  vc_grow(dst, src->n);
  if (src->n) memcpy(dst->e, src->e, src->n * sizeof(uint64_t));
  __atomic_store_n(&dst->n, src->n, __ATOMIC_RELEASE);
}

/* rsan_race.h: the same for a clock other threads read (rsan_vc_read) */
void rsan_vc_join_published(rsan_vc *dst, const rsan_vc *src) {
  if (dst == src || !src->n) return;
  if (src->n > dst->n) vc_extend(dst, src->n);
  uint64_t *d = dst->e;
  const uint64_t *e = src->e;
  for (uint32_t i = 0, n = src->n; i < n; i++)
    if (e[i] > d[i]) __atomic_store_n(&d[i], e[i], __ATOMIC_RELAXED);
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
    if (a->e[i] > rsan_vc_get(b, i)) return 0;
  return 1;
}

void rsan_vc_free(rsan_vc *v) {
  uint64_t *e = v->e;
  if (e) rsan_spin_lock(&shared_lock);
  __atomic_store_n(&v->n, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&v->e, NULL, __ATOMIC_RELEASE);
  v->cap = 0;
  if (e) rsan_spin_unlock(&shared_lock);
  rsan_free(e);
}

/* rsan_race.h: reading another thread's clock */
void rsan_vc_read_lock(void) { rsan_spin_lock(&shared_lock); }
void rsan_vc_read_unlock(void) { rsan_spin_unlock(&shared_lock); }
uint64_t rsan_vc_read(const rsan_vc *v, uint32_t tid) {
  uint32_t n = __atomic_load_n(&v->n, __ATOMIC_ACQUIRE); /* the array is at least this long */
  const uint64_t *e = __atomic_load_n(&v->e, __ATOMIC_ACQUIRE);
  return tid < n && e ? __atomic_load_n(&e[tid], __ATOMIC_RELAXED) : 0;
}
