/* The new value of an atomic read-modify-write (integer and floating-point operations of
 * LLVM's atomicrmw), performed on memory with a compare-and-swap loop. */
#include <string.h>

#include "rsan_engine.h"

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

/* The floating-point operations, out of line: inlined, the compiler may evaluate the
 * (side-effect free, but slow: soft-float half conversions raise exceptions through x87
 * instructions) conversions speculatively for every RMW, integer ones too. */
RSAN_NOINLINE uint64_t rsan_rmw_apply_fp(int op, uint64_t old, uint64_t v, int size) {
  double a = bits_to_fp(old, size), b = bits_to_fp(v, size), r;
  switch (op) {
  case RSAN_RMW_FADD: r = a + b; break;
  case RSAN_RMW_FSUB: r = a - b; break;
  case RSAN_RMW_FMAX: r = fmaxnum(a, b); break;
  case RSAN_RMW_FMIN: r = fminnum(a, b); break;
  case RSAN_RMW_FMAXIMUM: r = fmaximum(a, b); break;
  default: r = fminimum(a, b); break; /* RSAN_RMW_FMINIMUM */
  }
  return fp_to_bits(r, size);
}

/* rsan_mem_rmw (rsan_engine.h) for the operations without one atomic instruction: a CAS loop
 * (correct even against uninstrumented writers). */
uint64_t rsan_mem_rmw_loop(void *p, int op, uint64_t v, int size, uint64_t *newv) {
  uint64_t old = mem_load(p, size);
  for (;;) {
    uint64_t n = rsan_rmw_apply(op, old, v, size);
    if (mem_cas(p, &old, n, 0, size)) {
      *newv = n;
      return old;
    }
  }
}
