/* pyrsan runtime ABI, version 1.
 *
 * The contract between the instrumentation passes (passes/, which emit calls to these
 * functions and the module description below) and the C runtime (runtime/src/).
 * Everything here is C; compile the runtime as C, never C++ (mangling).
 *
 * Conventions
 *  - Values cross the ABI zero-extended to uint64_t (i8/i16/i32 `zext`, ptr `ptrtoint`,
 *    float/double `bitcast` to i32/i64 then `zext`). No signext/zeroext attributes needed.
 *  - `order` is the C11 memory_order number (enum rsan_order). LLVM `unordered` and
 *    `monotonic` are RSAN_RELAXED; `consume` arrives from clang as acquire.
 *  - `site` is a 64-bit site id: (module id_prefix) | (index into that module's site table).
 *    id_prefix has its low 32 bits clear. Site id 0 means "unknown".
 */
#ifndef RSAN_INTERFACE_H
#define RSAN_INTERFACE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RSAN_ABI_VERSION 1

enum rsan_order {
  RSAN_RELAXED = 0,
  RSAN_CONSUME = 1,
  RSAN_ACQUIRE = 2,
  RSAN_RELEASE = 3,
  RSAN_ACQ_REL = 4,
  RSAN_SEQ_CST = 5,
};

/* Operation codes of __rsan_rmw_N, one per LLVM atomicrmw operation. Float operations
 * interpret the bits as float (N = 4) or double (N = 8). */
enum rsan_rmw_op {
  RSAN_RMW_XCHG = 0,
  RSAN_RMW_ADD,
  RSAN_RMW_SUB,
  RSAN_RMW_AND,
  RSAN_RMW_NAND,
  RSAN_RMW_OR,
  RSAN_RMW_XOR,
  RSAN_RMW_MAX,  /* signed, at the access size */
  RSAN_RMW_MIN,  /* signed, at the access size */
  RSAN_RMW_UMAX,
  RSAN_RMW_UMIN,
  RSAN_RMW_FADD,
  RSAN_RMW_FSUB,
  RSAN_RMW_FMAX,     /* llvm `fmax`: maxnum semantics */
  RSAN_RMW_FMIN,     /* llvm `fmin`: minnum semantics */
  RSAN_RMW_FMAXIMUM, /* llvm `fmaximum`: NaN-propagating */
  RSAN_RMW_FMINIMUM,
  RSAN_RMW_UINC_WRAP, /* old >= v ? 0 : old + 1 */
  RSAN_RMW_UDEC_WRAP, /* (old == 0 || old > v) ? v : old - 1 */
  RSAN_RMW_USUB_COND, /* old >= v ? old - v : old */
  RSAN_RMW_USUB_SAT,  /* old >= v ? old - v : 0 */
  RSAN_RMW_OP_COUNT
};

enum rsan_site_kind {
  RSAN_SITE_LOAD = 0,
  RSAN_SITE_STORE = 1,
  RSAN_SITE_RMW = 2,
  RSAN_SITE_CAS = 3,
  RSAN_SITE_FENCE = 4,
  RSAN_SITE_CALL = 5, /* a call instruction, for the shadow call stack */
  RSAN_SITE_READ = 6, /* plain (non-atomic) accesses, for race detection */
  RSAN_SITE_WRITE = 7,
};

/* One source frame. file is "directory/filename" joined (absolute when clang gave a
 * directory), function is the source-level name (DISubprogram name, not the mangled one). */
typedef struct rsan_frame {
  const char *file;
  const char *function;
  uint32_t line;
  uint32_t column;
} rsan_frame; /* IR: { ptr, ptr, i32, i32 } = 24 bytes */

typedef struct rsan_site {
  uint32_t kind;       /* enum rsan_site_kind */
  uint32_t order;      /* enum rsan_order (success order for CAS) */
  uint32_t order_fail; /* CAS failure order, else 0 */
  uint32_t size;       /* access size in bytes, 0 for fences and calls */
  uint32_t op;         /* enum rsan_rmw_op for RMW; for CAS the RSAN_SITE_CAS_* bits; else 0 */
  uint32_t nframes;    /* >= 1 when debug info exists, may be 0 */
  const rsan_frame *frames; /* frames[0] = innermost (the access), then the inline chain outwards */
} rsan_site; /* IR: { i32, i32, i32, i32, i32, i32, ptr } = 32 bytes */
/* rsan_site.op of a CAS site (passes/abi.py CAS_WEAK, CAS_RETRY): weak; its failure only
 * feeds a retry of the same location (passes/casloops.py find_retry_cas) */
#define RSAN_SITE_CAS_WEAK 1u
#define RSAN_SITE_CAS_RETRY 2u
/* A frame whose file starts with one of these is in a system header: a report (and the
 * driver) names the innermost frame outside them, the primary frame (docs/interfaces.md §2).
 * An initialiser for an array of strings; passes/abi.py reads it. */
#define RSAN_SYSTEM_PREFIXES {"/usr/include/", "/usr/lib/", "/usr/local/include/"}
/* rsan_site.op of a store site (passes/sites.py WRITE_ONLY): its location is a global that no
 * code of the program image reads (passes/writeonly.py) */
#define RSAN_SITE_WRITE_ONLY 4u
/* rsan_site.op bits 8-15 of any site (passes/primitives.py): how many of its innermost frames
 * are atomic primitives, function instances whose only memory operations are atomics on the
 * site's own address (and fences): `AO_load_acquire`, `ck_pr_load_int`, a CAS-loop fetch_max.
 * A report looks through them for the code that uses the atomic (docs/reports.md §2). */
#define RSAN_SITE_PRIMITIVE_SHIFT 8u
#define RSAN_SITE_PRIMITIVE_MASK 0xffu

/* A global variable defined in the instrumented module, to name objects in reports. */
typedef struct rsan_global {
  const void *addr;
  uint64_t size;
  const char *name; /* source name (DIGlobalVariable) or the IR name */
} rsan_global; /* IR: { ptr, i64, ptr } = 24 bytes */

typedef struct rsan_module {
  uint32_t abi_version; /* RSAN_ABI_VERSION */
  uint32_t nsites;
  uint32_t nglobals;
  uint32_t reserved;
  uint64_t id_prefix; /* site id = id_prefix | index; low 32 bits zero */
  const rsan_site *sites;
  const rsan_global *globals;
  const char *name; /* the translation unit's source file */
} rsan_module; /* IR: { i32, i32, i32, i32, i64, ptr, ptr, ptr } = 48 bytes */

/* Called from a constructor each instrumented module appends to @llvm.global_ctors
 * (priority 0, so it runs before user constructors). May run before main and before any
 * other runtime call: the runtime initialises lazily. */
void __rsan_register_module(const rsan_module *m);

/* Atomic accesses. The runtime performs the memory operation itself, under the
 * location's lock, after the check and the clock update (docs/algorithm.md §3). */
uint64_t __rsan_load_1(void *p, int32_t order, uint64_t site);
uint64_t __rsan_load_2(void *p, int32_t order, uint64_t site);
uint64_t __rsan_load_4(void *p, int32_t order, uint64_t site);
uint64_t __rsan_load_8(void *p, int32_t order, uint64_t site);
void __rsan_store_1(void *p, uint64_t v, int32_t order, uint64_t site);
void __rsan_store_2(void *p, uint64_t v, int32_t order, uint64_t site);
void __rsan_store_4(void *p, uint64_t v, int32_t order, uint64_t site);
void __rsan_store_8(void *p, uint64_t v, int32_t order, uint64_t site);
/* Returns the old value. */
uint64_t __rsan_rmw_1(void *p, uint64_t v, int32_t op, int32_t order, uint64_t site);
uint64_t __rsan_rmw_2(void *p, uint64_t v, int32_t op, int32_t order, uint64_t site);
uint64_t __rsan_rmw_4(void *p, uint64_t v, int32_t op, int32_t order, uint64_t site);
uint64_t __rsan_rmw_8(void *p, uint64_t v, int32_t op, int32_t order, uint64_t site);

/* Returned in RAX:RDX on x86-64 SysV, i.e. IR `{ i64, i64 }`. ok is 1 or 0. A weak CAS
 * (weak != 0) may fail spuriously. */
typedef struct rsan_cas_ret {
  uint64_t old;
  uint64_t ok;
} rsan_cas_ret;
rsan_cas_ret __rsan_cas_1(void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail,
                          int32_t weak, uint64_t site);
rsan_cas_ret __rsan_cas_2(void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail,
                          int32_t weak, uint64_t site);
rsan_cas_ret __rsan_cas_4(void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail,
                          int32_t weak, uint64_t site);
rsan_cas_ret __rsan_cas_8(void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail,
                          int32_t weak, uint64_t site);

/* Value tracking (RSAN paper §4.3, docs/algorithm.md §4), called by runtime/include/pyrsan.h
 * (additions to ABI version 1: a module that does not call them is unaffected).
 *  - wait: blocks until *p (N bytes) holds v, re-reading under the location lock and yielding
 *    between attempts; failed attempts create no events; checked once before blocking (a
 *    stale write of v is a violation); the read that succeeds is a load with `order`.
 *  - bcas: retries a strong compare-exchange expected -> desired until it succeeds; failed
 *    attempts create no events; success is one RMW with `order`; checked once before the
 *    first attempt (a stale write of expected that an RMW may read is a violation).
 *  - track: declares (p, v) critical. Every value is tracked (within each location's
 *    bounded history of writes), so this only notes the location; kept for the public API.
 * site: a site id (0: unknown; reports then name the caller from the shadow call stack). */
void __rsan_wait_1(void *p, uint64_t v, int32_t order, uint64_t site);
void __rsan_wait_2(void *p, uint64_t v, int32_t order, uint64_t site);
void __rsan_wait_4(void *p, uint64_t v, int32_t order, uint64_t site);
void __rsan_wait_8(void *p, uint64_t v, int32_t order, uint64_t site);
void __rsan_bcas_1(void *p, uint64_t expected, uint64_t desired, int32_t order, uint64_t site);
void __rsan_bcas_2(void *p, uint64_t expected, uint64_t desired, int32_t order, uint64_t site);
void __rsan_bcas_4(void *p, uint64_t expected, uint64_t desired, int32_t order, uint64_t site);
void __rsan_bcas_8(void *p, uint64_t expected, uint64_t desired, int32_t order, uint64_t site);
/* The load of a spin loop recognised by the passes (`while (atomic_load(p) != expected);`):
 * one attempt of wait(p = expected). Returns the value read; makes no event and no check
 * unless it reads expected, when it is the wait's successful read (checked as wait). */
uint64_t __rsan_spin_load_1(void *p, uint64_t expected, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_2(void *p, uint64_t expected, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_4(void *p, uint64_t expected, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_8(void *p, uint64_t expected, int32_t order, uint64_t site);
/* The load of a recognised loop that leaves on any value but one (`while (!atomic_load(p));`):
 * one attempt of wait(p != unexpected). Returns the value read; makes no event and no check
 * unless it reads another value, when it is the wait's successful read (checked: stale iff a
 * write of another value may still be read). */
uint64_t __rsan_spin_load_ne_1(void *p, uint64_t unexpected, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_ne_2(void *p, uint64_t unexpected, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_ne_4(void *p, uint64_t unexpected, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_ne_8(void *p, uint64_t unexpected, int32_t order, uint64_t site);
/* The load of a recognised loop that compares some bits of the value read with a fixed value
 * (`while ((atomic_load(p) & 0xffff) != t);`, `(v >> 16) == t` as mask 0xffff0000 and t << 16):
 * one attempt of wait((p & mask) = expected) (_ne_: != unexpected). Returns the value read; as
 * __rsan_spin_load_N with the value read and the writes compared through the mask. */
uint64_t __rsan_spin_load_mask_1(void *p, uint64_t expected, uint64_t mask, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_mask_2(void *p, uint64_t expected, uint64_t mask, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_mask_4(void *p, uint64_t expected, uint64_t mask, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_mask_8(void *p, uint64_t expected, uint64_t mask, int32_t order, uint64_t site);
uint64_t __rsan_spin_load_mask_ne_1(void *p, uint64_t unexpected, uint64_t mask, int32_t order,
                                    uint64_t site);
uint64_t __rsan_spin_load_mask_ne_2(void *p, uint64_t unexpected, uint64_t mask, int32_t order,
                                    uint64_t site);
uint64_t __rsan_spin_load_mask_ne_4(void *p, uint64_t unexpected, uint64_t mask, int32_t order,
                                    uint64_t site);
uint64_t __rsan_spin_load_mask_ne_8(void *p, uint64_t unexpected, uint64_t mask, int32_t order,
                                    uint64_t site);
/* A CAS retry loop recognised by the passes as an atomic read-modify-write (passes/casloops.py,
 * docs/reports.md §1): `old = load(p); do { new = f(old); } while (!CAS(p, &old, new));`
 * with no other effect. casloop_load is its first read: the real load, no event, no check.
 * casloop_cas is one attempt (same arguments and result as __rsan_cas_N): a failed attempt
 * makes no event and no check; the successful one is one RMW with `succ`, checked as an RMW. */
uint64_t __rsan_casloop_load_1(void *p, int32_t order, uint64_t site);
uint64_t __rsan_casloop_load_2(void *p, int32_t order, uint64_t site);
uint64_t __rsan_casloop_load_4(void *p, int32_t order, uint64_t site);
uint64_t __rsan_casloop_load_8(void *p, int32_t order, uint64_t site);
rsan_cas_ret __rsan_casloop_cas_1(void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail,
                                  int32_t weak, uint64_t site);
rsan_cas_ret __rsan_casloop_cas_2(void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail,
                                  int32_t weak, uint64_t site);
rsan_cas_ret __rsan_casloop_cas_4(void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail,
                                  int32_t weak, uint64_t site);
rsan_cas_ret __rsan_casloop_cas_8(void *p, uint64_t expected, uint64_t desired, int32_t succ, int32_t fail,
                                  int32_t weak, uint64_t site);
void __rsan_track_1(void *p, uint64_t v, uint64_t site);
void __rsan_track_2(void *p, uint64_t v, uint64_t site);
void __rsan_track_4(void *p, uint64_t v, uint64_t site);
void __rsan_track_8(void *p, uint64_t v, uint64_t site);

/* singlethread != 0: syncscope("singlethread"), a compiler barrier only (no effect). */
void __rsan_fence(int32_t order, int32_t singlethread, uint64_t site);
/* A fence that `pyrsan fix` put right before or after the load of a recognised spin loop
 * (__rsan_spin_load_N), inside the loop: no effect while a failed attempt of the wait is
 * pending, so it acts once, as a fence before (after) the whole loop would. */
void __rsan_fence_spin(int32_t order, uint64_t site);

/* The header of an await loop (passes/awaitloops.py): a loop whose iterations only load
 * atomics and make SC fences. from_inside: 0 on the edges into the loop, 1 on its back edges;
 * s0..s2 the header's phis. Under sched=dfs the scheduler stops a thread whose iterations
 * repeat themselves until a location they read is written (runtime/src/sched_await.c,
 * docs/design/exploration.md §7); elsewhere it does nothing. */
void __rsan_await_head(uint64_t loop, uint32_t from_inside, uint64_t s0, uint64_t s1, uint64_t s2);

/* Shadow call stack. The pass brackets every call to a non-intrinsic function:
 *   call void @__rsan_func_entry(i64 <call site id>)   ; before the call
 *   call ...                                            ; the original call
 *   call void @__rsan_func_exit()                       ; after it
 * (`invoke` is bracketed on entry only; the runtime resynchronises the stack by frame
 * address, so frames skipped by exceptions or longjmp are dropped at the next entry/exit.) */
void __rsan_func_entry(uint64_t call_site);
void __rsan_func_exit(void);

/* Plain (non-atomic) accesses: race detection only, no robustness check.
 * Called before the access. N = 1, 2, 4, 8, 16; p need not be aligned (the runtime splits an
 * access that crosses a shadow granule). Ranges: llvm.memcpy/memmove/memset and the libc
 * memory functions, n bytes from p (n may be 0). */
void __rsan_read_1(void *p, uint64_t site);
void __rsan_read_2(void *p, uint64_t site);
void __rsan_read_4(void *p, uint64_t site);
void __rsan_read_8(void *p, uint64_t site);
void __rsan_read_16(void *p, uint64_t site);
void __rsan_write_1(void *p, uint64_t site);
void __rsan_write_2(void *p, uint64_t site);
void __rsan_write_4(void *p, uint64_t site);
void __rsan_write_8(void *p, uint64_t site);
void __rsan_write_16(void *p, uint64_t site);
void __rsan_read_range(void *p, uint64_t n, uint64_t site);
void __rsan_write_range(void *p, uint64_t n, uint64_t site);

/* Volatile accesses, for the controlled scheduler only (docs/scheduling.md "Volatile spin
 * loops"). Called after the access: a volatile load of an integer or pointer of at most 8
 * bytes in a loop, with the value it read (zero-extended); every volatile store. */
void __rsan_volatile_load(void *p, uint64_t value);
void __rsan_volatile_store(void *p);

#ifdef __cplusplus
}
#endif

#endif /* RSAN_INTERFACE_H */
