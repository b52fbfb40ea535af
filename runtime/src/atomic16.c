/* 16-byte atomics and libatomic calls (passes/wide.py): the lock-based fallback of
 * atomic_wide.h. The real memory operation is a plain copy made under the location lock of
 * the object's address, which every instrumented access to that address takes too; the clock
 * rules are those of the C11 operation that happened (a CAS that failed is a load).
 *   i128 entry points: values as (lo, hi) halves, results as { lo, hi } (RAX:RDX);
 *   __rsan_atomic_<libatomic name>: libatomic's own C signature plus the site id. */
#include <stdbool.h>
#include <string.h>

#include "atomic_wide.h"
#include "rsan_signal.h"

typedef unsigned __int128 u128;
typedef struct {
  uint64_t lo, hi;
} rsan_u128_ret;

static inline u128 mk(uint64_t lo, uint64_t hi) { return ((u128)hi << 64) | lo; }
static inline rsan_u128_ret ret(u128 v) {
  rsan_u128_ret r = {(uint64_t)v, (uint64_t)(v >> 64)};
  return r;
}
#define FA ((uintptr_t)__builtin_frame_address(0))

/* generic n-byte operations (n >= 1); buffers are the caller's */
static void wide_load(void *obj, void *out, size_t n, int order, uint64_t site, uintptr_t fa) {
  rsan_wide_op w;
  rsan_wide_begin(&w, obj, (int)n, order, 0);
  memcpy(out, obj, n);
  rsan_wide_end(&w, RSAN_WIDE_LOAD, rsan_wide_fold(out, n), 0, 0, RSAN_OP_LOAD, 0, order, site, fa);
}
static void wide_store(void *obj, const void *in, size_t n, int order, uint64_t site, uintptr_t fa) {
  rsan_wide_op w;
  rsan_wide_begin(&w, obj, (int)n, order, 1);
  memmove(obj, in, n);
  rsan_wide_end(&w, RSAN_WIDE_STORE, rsan_wide_fold(obj, n), 0, 0, RSAN_OP_STORE, 0, order, site, fa);
}
/* old value to out, then new value in; out may alias nothing of obj */
static void wide_exchange(void *obj, const void *in, void *out, size_t n, int order, uint64_t site,
                          uintptr_t fa) {
  rsan_wide_op w;
  rsan_wide_begin(&w, obj, (int)n, order, 1);
  unsigned char tmp[64];
  unsigned char *old = n <= sizeof tmp ? tmp : rsan_alloc(n);
  memcpy(old, obj, n);
  memmove(obj, in, n);
  memcpy(out, old, n);
  if (old != tmp) rsan_free(old);
  rsan_wide_end(&w, RSAN_WIDE_RMW, rsan_wide_fold(obj, n), 0, 0, RSAN_OP_RMW, RSAN_RMW_XCHG, order, site, fa);
}
static bool wide_cas(void *obj, void *expected, const void *desired, size_t n, int succ, int fail,
                     uint64_t site, uintptr_t fa) {
  rsan_wide_op w;
  int order = succ;
  rsan_wide_begin(&w, obj, (int)n, order == RSAN_SEQ_CST || fail == RSAN_SEQ_CST ? RSAN_SEQ_CST : order, 1);
  w.order = succ;
  uint64_t e = rsan_wide_fold(expected, n);
  bool ok = memcmp(obj, expected, n) == 0;
  if (ok) {
    memmove(obj, desired, n);
    rsan_wide_end(&w, RSAN_WIDE_CAS_OK, rsan_wide_fold(obj, n), e, 1, RSAN_OP_CAS_STRONG, 0, fail, site, fa);
  } else {
    memcpy(expected, obj, n);
    rsan_wide_end(&w, RSAN_WIDE_CAS_FAIL, rsan_wide_fold(obj, n), e, 1, RSAN_OP_CAS_STRONG, 0, fail, site,
                  fa);
  }
  return ok;
}

static u128 apply_op(int op, u128 old, u128 v) {
  switch (op) {
  case RSAN_RMW_XCHG: return v;
  case RSAN_RMW_ADD: return old + v;
  case RSAN_RMW_SUB: return old - v;
  case RSAN_RMW_AND: return old & v;
  case RSAN_RMW_NAND: return ~(old & v);
  case RSAN_RMW_OR: return old | v;
  case RSAN_RMW_XOR: return old ^ v;
  case RSAN_RMW_MAX: return (__int128)old > (__int128)v ? old : v;
  case RSAN_RMW_MIN: return (__int128)old < (__int128)v ? old : v;
  case RSAN_RMW_UMAX: return old > v ? old : v;
  case RSAN_RMW_UMIN: return old < v ? old : v;
  default: return v;
  }
}

/* n <= 16: an RMW op; returns the old value, *newv the new one */
static u128 wide_rmw(void *obj, size_t n, int op, u128 v, int order, uint64_t site, uintptr_t fa,
                     u128 *newv) {
  rsan_wide_op w;
  rsan_wide_begin(&w, obj, (int)n, order, 1);
  u128 old = 0, nv;
  memcpy(&old, obj, n);
  nv = apply_op(op, old, v);
  memcpy(obj, &nv, n);
  rsan_wide_end(&w, RSAN_WIDE_RMW, rsan_wide_fold(obj, n), 0, 0, RSAN_OP_RMW, op, order, site, fa);
  if (newv) *newv = nv;
  return old;
}

/* ---- i128 (load atomic i128, store, atomicrmw, cmpxchg) ---- */
RSAN_EXPORT RSAN_NOINLINE rsan_u128_ret __rsan_load_16(void *p, int32_t order, uint64_t site) {
  RSAN_RT_GUARD;
  u128 v;
  wide_load(p, &v, 16, order, site, FA);
  return ret(v);
}
RSAN_EXPORT RSAN_NOINLINE void __rsan_store_16(void *p, uint64_t lo, uint64_t hi, int32_t order,
                                               uint64_t site) {
  RSAN_RT_GUARD;
  u128 v = mk(lo, hi);
  wide_store(p, &v, 16, order, site, FA);
}
RSAN_EXPORT RSAN_NOINLINE rsan_u128_ret __rsan_rmw_16(void *p, uint64_t lo, uint64_t hi, int32_t op,
                                                      int32_t order, uint64_t site) {
  RSAN_RT_GUARD;
  return ret(wide_rmw(p, 16, op, mk(lo, hi), order, site, FA, NULL));
}
/* Returns the old value; the CAS succeeded iff it equals the expected one (never spuriously
 * failing under the lock), which the instrumented code compares itself. */
RSAN_EXPORT RSAN_NOINLINE rsan_u128_ret __rsan_cas_16(void *p, uint64_t elo, uint64_t ehi, uint64_t dlo,
                                                      uint64_t dhi, int32_t succ, int32_t fail, int32_t weak,
                                                      uint64_t site) {
  RSAN_RT_GUARD;
  (void)weak;
  u128 e = mk(elo, ehi), d = mk(dlo, dhi);
  wide_cas(p, &e, &d, 16, succ, fail, site, FA);
  return ret(e); /* on failure wide_cas stored the value read into e; on success it is e */
}

/* ---- libatomic's generic functions ---- */
RSAN_EXPORT RSAN_NOINLINE void __rsan_atomic_load(size_t n, void *obj, void *out, int order, uint64_t site) {
  RSAN_RT_GUARD;
  wide_load(obj, out, n, order, site, FA);
}
RSAN_EXPORT RSAN_NOINLINE void __rsan_atomic_store(size_t n, void *obj, void *in, int order, uint64_t site) {
  RSAN_RT_GUARD;
  wide_store(obj, in, n, order, site, FA);
}
RSAN_EXPORT RSAN_NOINLINE void __rsan_atomic_exchange(size_t n, void *obj, void *in, void *out, int order,
                                                      uint64_t site) {
  RSAN_RT_GUARD;
  wide_exchange(obj, in, out, n, order, site, FA);
}
RSAN_EXPORT RSAN_NOINLINE bool __rsan_atomic_compare_exchange(size_t n, void *obj, void *expected,
                                                              void *desired, int succ, int fail,
                                                              uint64_t site) {
  RSAN_RT_GUARD;
  return wide_cas(obj, expected, desired, n, succ, fail, site, FA);
}

/* ---- libatomic's sized functions: __atomic_<op>_N ---- */
#define RSAN_SIZED(N, T) \
  RSAN_EXPORT RSAN_NOINLINE T __rsan_atomic_load_##N(void *p, int order, uint64_t site) { \
    RSAN_RT_GUARD; \
    T v; \
    wide_load(p, &v, N, order, site, FA); \
    return v; \
  } \
  RSAN_EXPORT RSAN_NOINLINE void __rsan_atomic_store_##N(void *p, T v, int order, uint64_t site) { \
    RSAN_RT_GUARD; \
    wide_store(p, &v, N, order, site, FA); \
  } \
  RSAN_EXPORT RSAN_NOINLINE T __rsan_atomic_exchange_##N(void *p, T v, int order, uint64_t site) { \
    RSAN_RT_GUARD; \
    T old; \
    wide_exchange(p, &v, &old, N, order, site, FA); \
    return old; \
  } \
  RSAN_EXPORT RSAN_NOINLINE bool __rsan_atomic_compare_exchange_##N(void *p, T *e, T d, int succ, int fail, \
                                                                    uint64_t site) { \
    RSAN_RT_GUARD; \
    return wide_cas(p, e, &d, N, succ, fail, site, FA); \
  } \
  RSAN_SIZED_OP(N, T, add, RSAN_RMW_ADD) \
  RSAN_SIZED_OP(N, T, sub, RSAN_RMW_SUB) \
  RSAN_SIZED_OP(N, T, and, RSAN_RMW_AND) \
  RSAN_SIZED_OP(N, T, or, RSAN_RMW_OR) \
  RSAN_SIZED_OP(N, T, xor, RSAN_RMW_XOR) \
  RSAN_SIZED_OP(N, T, nand, RSAN_RMW_NAND)

#define RSAN_SIZED_OP(N, T, name, op) \
  RSAN_EXPORT RSAN_NOINLINE T __rsan_atomic_fetch_##name##_##N(void *p, T v, int order, uint64_t site) { \
    RSAN_RT_GUARD; \
    return (T)wide_rmw(p, N, op, (u128)v, order, site, FA, NULL); \
  } \
  RSAN_EXPORT RSAN_NOINLINE T __rsan_atomic_##name##_fetch_##N(void *p, T v, int order, uint64_t site) { \
    RSAN_RT_GUARD; \
    u128 nv; \
    wide_rmw(p, N, op, (u128)v, order, site, FA, &nv); \
    return (T)nv; \
  }

RSAN_SIZED(1, uint8_t)
RSAN_SIZED(2, uint16_t)
RSAN_SIZED(4, uint32_t)
RSAN_SIZED(8, uint64_t)
RSAN_SIZED(16, u128)
