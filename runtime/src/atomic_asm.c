/* Inline asm that is an atomic (passes/asm.py): `lock`-prefixed RMWs, xchg with memory,
 * cmpxchg / cmpxchg8b / cmpxchg16b, all seq_cst; a lone x86 mov to or from memory (release
 * store / acquire load, what TSO gives it). The pass brackets the asm statement:
 *   __rsan_asm_begin(p, size, op, site); <the asm>; __rsan_asm_end();
 * begin takes the location lock of p (atomic_wide.h) and keeps the bytes at p; the asm runs
 * under the lock; end compares the bytes after with those before and applies the rules of
 * what happened: an RMW, or for cmpxchg a successful CAS (memory changed) or a failed one
 * (unchanged: a load; a cmpxchg that wrote back the value it read is indistinguishable and
 * is taken as the failure, whose rules are weaker, so nothing false is reported). The state
 * between the two calls is the calling thread's own: nothing runs between them but the asm
 * (signals arriving meanwhile are deferred, intercept_signal.c). */
#include <string.h>

#include "atomic_wide.h"

/* passes/asm.py: op is an RMW op (enum rsan_rmw_op) or one of these */
#define ASM_CAS_OP (-1)
#define ASM_LOAD_OP (-2)  /* x86 mov from memory: an acquire load */
#define ASM_STORE_OP (-3) /* x86 mov to memory: a release store */

typedef struct asm_state {
  rsan_wide_op w;
  int active, op;
  uint64_t site;
  uintptr_t fa;
  unsigned char before[RSAN_WIDE_MAX];
} asm_state;

static __thread asm_state cur __attribute__((tls_model("initial-exec")));

RSAN_EXPORT RSAN_NOINLINE void __rsan_asm_begin(void *p, int32_t size, int32_t op, uint64_t site) {
  if (size < 1 || size > RSAN_WIDE_MAX) size = 8;
  if (cur.active) return; /* cannot happen (one asm at a time per thread); stay safe */
  int order = op == ASM_LOAD_OP ? RSAN_ACQUIRE : op == ASM_STORE_OP ? RSAN_RELEASE : RSAN_SEQ_CST;
  rsan_wide_begin(&cur.w, p, size, order, op != ASM_LOAD_OP);
  memcpy(cur.before, p, (size_t)size);
  cur.op = op;
  cur.site = site;
  cur.fa = (uintptr_t)__builtin_frame_address(0);
  cur.active = 1;
}

RSAN_EXPORT RSAN_NOINLINE void __rsan_asm_end(void) {
  if (!cur.active) return;
  cur.active = 0;
  int size = cur.w.size;
  unsigned char after[RSAN_WIDE_MAX];
  memcpy(after, cur.w.p, (size_t)size);
  uint64_t written = rsan_wide_fold(after, (size_t)size);
  if (cur.op == ASM_LOAD_OP) {
    rsan_wide_end(&cur.w, RSAN_WIDE_LOAD, written, 0, 0, RSAN_OP_LOAD, 0, RSAN_ACQUIRE, cur.site, cur.fa);
  } else if (cur.op == ASM_STORE_OP) {
    rsan_wide_end(&cur.w, RSAN_WIDE_STORE, written, 0, 0, RSAN_OP_STORE, 0, RSAN_RELEASE, cur.site, cur.fa);
  } else if (cur.op == ASM_CAS_OP) {
    int changed = memcmp(after, cur.before, (size_t)size) != 0;
    /* success: the expected value was the one read before */
    uint64_t expected = rsan_wide_fold(cur.before, (size_t)size);
    rsan_wide_end(&cur.w, changed ? RSAN_WIDE_CAS_OK : RSAN_WIDE_CAS_FAIL, written, expected, changed,
                  RSAN_OP_CAS_STRONG, 0, RSAN_SEQ_CST, cur.site, cur.fa);
  } else {
    rsan_wide_end(&cur.w, RSAN_WIDE_RMW, written, 0, 0, RSAN_OP_RMW, cur.op, RSAN_SEQ_CST, cur.site, cur.fa);
  }
}
