/* Helpers for the interceptor test programs (testsuite/runtime/test_intercept.py).
 *
 * The programs are NOT instrumented: only the explicit __rsan_* calls below are seen by the
 * runtime, through the ABI, plus the interposed pthread / C11 / free functions. Everything
 * else (the handshakes that force an order between threads) uses plain __atomic builtins,
 * which the runtime never sees, so they add no happens-before of their own.
 *
 * Site ids: a registered module whose site i (< 1000) is a relaxed 4-byte load at source
 * line i and 1000 + i a relaxed 4-byte store at line i, so that a report's "line" is the
 * __LINE__ of the LD / ST that made it.
 */
#ifndef INTERCEPT_TEST_COMMON_H
#define INTERCEPT_TEST_COMMON_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rsan_interface.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TEST_PREFIX 0x7e57000000000000ull
#define TEST_NSITES 2000

static rsan_site test_sites[TEST_NSITES];
static rsan_frame test_frames[TEST_NSITES];
static rsan_module test_module;

__attribute__((constructor(101))) static void test_register_sites(void) {
  for (int i = 0; i < TEST_NSITES; i++) {
    test_frames[i].file = __BASE_FILE__;
    test_frames[i].function = "test";
    test_frames[i].line = (uint32_t)(i % 1000);
    test_frames[i].column = 1;
    test_sites[i].kind = i < 1000 ? RSAN_SITE_LOAD : RSAN_SITE_STORE;
    test_sites[i].order = RSAN_RELAXED;
    test_sites[i].size = 4;
    test_sites[i].nframes = 1;
    test_sites[i].frames = &test_frames[i];
  }
  test_module.abi_version = RSAN_ABI_VERSION;
  test_module.nsites = TEST_NSITES;
  test_module.id_prefix = TEST_PREFIX;
  test_module.sites = test_sites;
  test_module.name = __BASE_FILE__;
  __rsan_register_module(&test_module);
}

/* Relaxed atomic load / store through the runtime, tagged with the source line. */
#define LD(p) ((uint32_t)__rsan_load_4((p), RSAN_RELAXED, TEST_PREFIX | (uint64_t)__LINE__))
#define ST(p, v) __rsan_store_4((p), (uint64_t)(v), RSAN_RELAXED, TEST_PREFIX | (uint64_t)(1000 + __LINE__))

/* Handshakes invisible to the runtime. */
static inline void flag_set(int *f) { __atomic_store_n(f, 1, __ATOMIC_SEQ_CST); }
static inline void flag_wait(int *f) {
  while (!__atomic_load_n(f, __ATOMIC_SEQ_CST)) sched_yield();
}
static inline void counter_wait(int *c, int v) {
  while (__atomic_load_n(c, __ATOMIC_SEQ_CST) != v) sched_yield();
}

/* argv[1]: "sync" (the synchronisation under test is there) or "nosync" (the same program
 * without it); other words are program-specific. */
static inline const char *test_mode(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODE\n", argv[0]);
    exit(2);
  }
  return argv[1];
}
#define MODE_IS(m) (strcmp(mode, (m)) == 0)

#define CHECK(c)                                                         \
  do {                                                                   \
    if (!(c)) {                                                          \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
      exit(3);                                                           \
    }                                                                    \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif
