/* A stand-in for the pyrsan runtime, for the pass tests: performs each operation with
 * __atomic builtins, checks that the site id it is given describes the call (kind, order,
 * size, op) in a registered module, and prints per-kind counters to stderr at exit as
 *   rsan-stub: load=N store=N rmw=N cas=N fence=N entry=N exit=N modules=N sites=N bad=N ...
 *     read=N write=N rread=N rwrite=N   (plain accesses: fixed-size and range hooks)
 * With RSAN_STUB_TRACE=- (stderr) or =<file>, every plain-access hook writes a line
 * `read|write <address in hex> <size>` there (the address and the size the instrumentation
 * passed), unbuffered, so that it interleaves with the program's own stderr lines.
 * Unchecked in a real runtime sense: no clocks, no reports. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsan_interface.h"

static const rsan_module *modules[64];
static int nmodules;
static unsigned long c_load, c_store, c_rmw, c_cas, c_fence, c_entry, c_exit, c_bad, c_frames;
static unsigned long c_read, c_write, c_read_range, c_write_range;
static FILE *trace_out; /* RSAN_STUB_TRACE, opened at the first registration (before main) */
static unsigned long c_kind_op[RSAN_RMW_OP_COUNT];

static void report(void) {
  unsigned long sites = 0;
  for (int i = 0; i < nmodules; i++) sites += modules[i]->nsites;
  fprintf(stderr,
          "rsan-stub: load=%lu store=%lu rmw=%lu cas=%lu fence=%lu entry=%lu exit=%lu "
          "modules=%d sites=%lu bad=%lu noframes=%lu read=%lu write=%lu rread=%lu rwrite=%lu\n",
          c_load, c_store, c_rmw, c_cas, c_fence, c_entry, c_exit, nmodules, sites, c_bad,
          c_frames, c_read, c_write, c_read_range, c_write_range);
  fprintf(stderr, "rsan-stub-ops:");
  for (int i = 0; i < RSAN_RMW_OP_COUNT; i++) fprintf(stderr, " %lu", c_kind_op[i]);
  fprintf(stderr, "\n");
  if (!getenv("RSAN_STUB_DUMP")) return;
  /* the embedded tables, to check their layout against the passes' InstrumentResult */
  for (int i = 0; i < nmodules; i++) {
    const rsan_module *m = modules[i];
    fprintf(stderr, "module %s prefix=%llu sites=%u globals=%u\n", m->name,
            (unsigned long long)m->id_prefix, m->nsites, m->nglobals);
    for (uint32_t g = 0; g < m->nglobals; g++)
      fprintf(stderr, "global %s %llu\n", m->globals[g].name,
              (unsigned long long)m->globals[g].size);
    for (uint32_t s = 0; s < m->nsites; s++) {
      const rsan_site *st = &m->sites[s];
      fprintf(stderr, "site %u %u %u %u %u %u", s, st->kind, st->order, st->order_fail, st->size,
              st->op);
      for (uint32_t f = 0; f < st->nframes; f++)
        fprintf(stderr, " | %s:%u:%u:%s", st->frames[f].file, st->frames[f].line,
                st->frames[f].column, st->frames[f].function);
      fprintf(stderr, "\n");
    }
  }
}

void __rsan_register_module(const rsan_module *m) {
  if (nmodules == 0) {
    const char *path = getenv("RSAN_STUB_TRACE");
    if (path) trace_out = strcmp(path, "-") == 0 ? stderr : fopen(path, "w");
    if (trace_out) setvbuf(trace_out, NULL, _IONBF, 0);
    atexit(report);
  }
  if (m->abi_version != RSAN_ABI_VERSION || (m->id_prefix & 0xffffffffu) != 0 || nmodules >= 64) {
    __atomic_fetch_add(&c_bad, 1, __ATOMIC_RELAXED);
    return;
  }
  for (uint32_t i = 0; i < m->nglobals; i++)
    if (!m->globals[i].addr || !m->globals[i].name || !m->globals[i].size)
      __atomic_fetch_add(&c_bad, 1, __ATOMIC_RELAXED);
  modules[nmodules++] = m;
}

static const rsan_site *find(uint64_t id) {
  for (int i = 0; i < nmodules; i++)
    if ((id & ~(uint64_t)0xffffffffu) == modules[i]->id_prefix &&
        (id & 0xffffffffu) < modules[i]->nsites)
      return &modules[i]->sites[id & 0xffffffffu];
  return NULL;
}

static void check(uint64_t id, uint32_t kind, int order, int fail, uint32_t size, int op) {
  const rsan_site *s = find(id);
  if (!s || s->kind != kind || s->order != (uint32_t)order || s->order_fail != (uint32_t)fail ||
      s->size != size ||
      (op >= 0 && (s->op & ~(RSAN_SITE_PRIMITIVE_MASK << RSAN_SITE_PRIMITIVE_SHIFT)) != (uint32_t)op)) {
    __atomic_fetch_add(&c_bad, 1, __ATOMIC_RELAXED);
    return;
  }
  if (s->nframes == 0 || !s->frames[0].file || !s->frames[0].function)
    __atomic_fetch_add(&c_frames, 1, __ATOMIC_RELAXED);
}

#define COUNT(c) __atomic_fetch_add(&(c), 1, __ATOMIC_RELAXED)

static int64_t sext(uint64_t v, int size) {
  if (size == 8) return (int64_t)v;
  int shift = 64 - 8 * size;
  return (int64_t)(v << shift) >> shift;
}

static uint64_t apply(int op, uint64_t old, uint64_t v, int size) {
  uint64_t mask = size == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * size)) - 1);
  uint64_t r = 0;
  if (op >= RSAN_RMW_FADD && op <= RSAN_RMW_FMINIMUM) {
    double a, b, c;
    if (size == 4) {
      float fa, fb;
      uint32_t ia = (uint32_t)old, ib = (uint32_t)v;
      memcpy(&fa, &ia, 4); memcpy(&fb, &ib, 4);
      a = fa; b = fb;
    } else {
      memcpy(&a, &old, 8); memcpy(&b, &v, 8);
    }
    switch (op) {
      case RSAN_RMW_FADD: c = a + b; break;
      case RSAN_RMW_FSUB: c = a - b; break;
      case RSAN_RMW_FMAX: case RSAN_RMW_FMAXIMUM: c = a > b ? a : b; break;
      default: c = a < b ? a : b; break;
    }
    if (size == 4) {
      float fc = (float)c;
      uint32_t ic;
      memcpy(&ic, &fc, 4);
      return ic;
    }
    memcpy(&r, &c, 8);
    return r;
  }
  switch (op) {
    case RSAN_RMW_XCHG: r = v; break;
    case RSAN_RMW_ADD: r = old + v; break;
    case RSAN_RMW_SUB: r = old - v; break;
    case RSAN_RMW_AND: r = old & v; break;
    case RSAN_RMW_NAND: r = ~(old & v); break;
    case RSAN_RMW_OR: r = old | v; break;
    case RSAN_RMW_XOR: r = old ^ v; break;
    case RSAN_RMW_MAX: r = sext(old, size) > sext(v, size) ? old : v; break;
    case RSAN_RMW_MIN: r = sext(old, size) < sext(v, size) ? old : v; break;
    case RSAN_RMW_UMAX: r = old > v ? old : v; break;
    case RSAN_RMW_UMIN: r = old < v ? old : v; break;
    case RSAN_RMW_UINC_WRAP: r = old >= v ? 0 : old + 1; break;
    case RSAN_RMW_UDEC_WRAP: r = (old == 0 || old > v) ? v : old - 1; break;
    case RSAN_RMW_USUB_COND: r = old >= v ? old - v : old; break;
    case RSAN_RMW_USUB_SAT: r = old >= v ? old - v : 0; break;
    default: COUNT(c_bad); r = old; break;
  }
  return r & mask;
}

/* the CAS site's "failure only feeds a retry" bit (passes/casloops.py), kept as recorded */
static uint32_t retry_bit(uint64_t site) {
  const rsan_site *s = find(site);
  return s ? s->op & RSAN_SITE_CAS_RETRY : 0;
}

#define DEFINE_SIZE(N, T)                                                                     \
  uint64_t __rsan_load_##N(void *p, int32_t order, uint64_t site) {                           \
    COUNT(c_load); check(site, RSAN_SITE_LOAD, order, 0, N, 0);                                \
    return __atomic_load_n((T *)p, __ATOMIC_SEQ_CST);                                         \
  }                                                                                           \
  void __rsan_store_##N(void *p, uint64_t v, int32_t order, uint64_t site) {                  \
    COUNT(c_store); check(site, RSAN_SITE_STORE, order, 0, N, 0);                              \
    if (N < 8 && (v >> (8 * N % 64)) != 0) COUNT(c_bad); /* must arrive zero-extended */      \
    __atomic_store_n((T *)p, (T)v, __ATOMIC_SEQ_CST);                                         \
  }                                                                                           \
  uint64_t __rsan_rmw_##N(void *p, uint64_t v, int32_t op, int32_t order, uint64_t site) {    \
    COUNT(c_rmw); check(site, RSAN_SITE_RMW, order, 0, N, op);                                 \
    if (op >= 0 && op < RSAN_RMW_OP_COUNT) COUNT(c_kind_op[op]);                              \
    T old = __atomic_load_n((T *)p, __ATOMIC_SEQ_CST);                                        \
    while (!__atomic_compare_exchange_n((T *)p, &old, (T)apply(op, old, v, N), 0,             \
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {                \
    }                                                                                         \
    return (uint64_t)old;                                                                     \
  }                                                                                           \
  rsan_cas_ret __rsan_cas_##N(void *p, uint64_t e, uint64_t d, int32_t succ, int32_t fail,    \
                              int32_t weak, uint64_t site) {                                  \
    COUNT(c_cas); check(site, RSAN_SITE_CAS, succ, fail, N, weak | retry_bit(site));           \
    T expected = (T)e;                                                                        \
    rsan_cas_ret r;                                                                           \
    r.ok = __atomic_compare_exchange_n((T *)p, &expected, (T)d, 0, __ATOMIC_SEQ_CST,          \
                                       __ATOMIC_SEQ_CST);                                     \
    r.old = (uint64_t)expected;                                                               \
    return r;                                                                                 \
  }                                                                                           \
  uint64_t __rsan_casloop_load_##N(void *p, int32_t order, uint64_t site) {                   \
    COUNT(c_load); check(site, RSAN_SITE_LOAD, order, 0, N, 0);                                \
    return __atomic_load_n((T *)p, __ATOMIC_SEQ_CST);                                         \
  }                                                                                           \
  rsan_cas_ret __rsan_casloop_cas_##N(void *p, uint64_t e, uint64_t d, int32_t succ,          \
                                      int32_t fail, int32_t weak, uint64_t site) {            \
    return __rsan_cas_##N(p, e, d, succ, fail, weak, site);                                   \
  }

DEFINE_SIZE(1, uint8_t)
DEFINE_SIZE(2, uint16_t)
DEFINE_SIZE(4, uint32_t)
DEFINE_SIZE(8, uint64_t)

void __rsan_fence(int32_t order, int32_t singlethread, uint64_t site) {
  (void)singlethread;
  COUNT(c_fence); check(site, RSAN_SITE_FENCE, order, 0, 0, 0);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void __rsan_func_entry(uint64_t call_site) {
  COUNT(c_entry);
  check(call_site, RSAN_SITE_CALL, 0, 0, 0, 0);
}

void __rsan_func_exit(void) { COUNT(c_exit); }

/* Plain accesses (issue 4). */
static void trace(const char *kind, const void *p, uint64_t n) {
  if (trace_out) fprintf(trace_out, "%s %p %llu\n", kind, p, (unsigned long long)n);
}

static void check_range(uint64_t id, uint32_t kind, uint64_t n) {
  const rsan_site *s = find(id);
  /* a range site records its length when the pass saw a constant, else 0 */
  if (!s || s->kind != kind || s->order != 0 || (s->size != 0 && s->size != n)) {
    COUNT(c_bad);
    return;
  }
  if (s->nframes == 0 || !s->frames[0].file || !s->frames[0].function) COUNT(c_frames);
}

#define DEFINE_PLAIN(N)                                                                       \
  void __rsan_read_##N(void *p, uint64_t site) {                                             \
    COUNT(c_read); check(site, RSAN_SITE_READ, 0, 0, N, 0); trace("read", p, N);             \
  }                                                                                           \
  void __rsan_write_##N(void *p, uint64_t site) {                                            \
    COUNT(c_write); check(site, RSAN_SITE_WRITE, 0, 0, N, 0); trace("write", p, N);          \
  }

DEFINE_PLAIN(1)
DEFINE_PLAIN(2)
DEFINE_PLAIN(4)
DEFINE_PLAIN(8)
DEFINE_PLAIN(16)

void __rsan_read_range(void *p, uint64_t n, uint64_t site) {
  COUNT(c_read_range); check_range(site, RSAN_SITE_READ, n); trace("read", p, n);
}

void __rsan_write_range(void *p, uint64_t n, uint64_t site) {
  COUNT(c_write_range); check_range(site, RSAN_SITE_WRITE, n); trace("write", p, n);
}
