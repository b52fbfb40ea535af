/* Atomic operations the hardware-atomic entry points of atomic.c cannot perform themselves:
 * 16-byte and generic-size atomics (atomic16.c) and atomics written as inline asm
 * (atomic_asm.c). The runtime holds the location lock of the object's address across the
 * real memory operation (a lock-based fallback: every instrumented access to that address
 * is serialised by the same lock), then applies the clock rules of the operation that really
 * happened (rsan_engine.h), exactly as atomic.c does.
 *
 * Values wider than 8 bytes enter the value checks (history, wait, strong CAS) as a 64-bit
 * fold of their bytes (rsan_wide_fold); two different values with the same fold could only
 * make a value check miss or over-report with probability 2^-64 per comparison. */
#ifndef RSAN_ATOMIC_WIDE_H
#define RSAN_ATOMIC_WIDE_H

#include "rsan_engine.h"

#define RSAN_WIDE_MAX 16 /* bytes kept per operation for the asm bracket */

typedef struct rsan_wide_op {
  rsan_thread *t;
  rsan_loc *l;
  void *p;
  int size;   /* bytes */
  int order;  /* enum rsan_order */
  int fenced; /* seq_cst under sc_accesses=fenced: SC fence before and after */
} rsan_wide_op;

/* Fold of n bytes at p into the 64-bit value the engine records (n <= 8: the value itself,
 * little-endian, zero-extended). */
uint64_t rsan_wide_fold(const void *p, size_t n);

/* Before the memory operation: scheduling point, leading SC fence, location lock, initial
 * value. write: the operation may write (scheduling). */
void rsan_wide_begin(rsan_wide_op *w, void *p, int size, int order, int write);

enum rsan_wide_kind { RSAN_WIDE_LOAD, RSAN_WIDE_STORE, RSAN_WIDE_RMW, RSAN_WIDE_CAS_OK, RSAN_WIDE_CAS_FAIL };

/* After it, still under the lock: the check and clock rules of `kind` (the C11 operation that
 * really happened), the history record of `written` (the fold of the value written), then
 * unlock, report, trailing SC fence. expected: the CAS's expected value (fold);
 * check_expected 0 when it is unknown (an asm cmpxchg that failed: no check, a miss rather
 * than a false alarm). op: enum rsan_opkind of the report; rmw_op its RMW op. */
void rsan_wide_end(rsan_wide_op *w, int kind, uint64_t written, uint64_t expected, int check_expected, int op,
                   int rmw_op, int order_fail, uint64_t site, uintptr_t fa);

#endif /* RSAN_ATOMIC_WIDE_H */
