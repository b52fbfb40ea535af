"""passes/primitives.py: how many innermost frames of an atomic site are atomic primitives
(function instances whose only memory operations are atomics on the site's address, fences and
their own stack slots), at every optimisation level."""
from __future__ import annotations

import platform

import pytest

from passes_helpers import compile_to_ir
from pyrsan.passes import instrument_ir

SOURCE = r"""
#include <stdatomic.h>
static inline long ld(const long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline long ld2(const long *p) { return ld(p); }
static inline long fmax(long *p, long v) {
  long old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {}
  return old;
}
static inline void st_fenced(long *p, long v) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
static inline long two(long *a, long *b) {   /* two addresses: an algorithm, not a primitive */
  __atomic_store_n(a, 1, __ATOMIC_RELEASE);
  return __atomic_load_n(b, __ATOMIC_ACQUIRE);
}
long plain_seen;
static inline long with_plain(long *p) {     /* touches program memory beside the atomic */
  plain_seen++;
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
long g1, g2, g3, g4, g5, g6;
#if defined(__x86_64__)
static inline unsigned asm_load(const unsigned *p) {   /* Concurrency Kit's default ck_pr_load */
  unsigned r;
  __asm__ __volatile__("movl %1, %0" : "=r"(r) : "m"(*(const unsigned *)p) : "memory");
  return r;
}
static inline unsigned asm_load_twice(const unsigned *p, const unsigned *q) {
  return asm_load(p) + asm_load(q);
}
unsigned u1, u2;
unsigned use_asm(void) { plain_seen = 7; return asm_load(&u1) + asm_load_twice(&u1, &u2); }
#endif
__attribute__((noinline)) long called(const long *p) { return ld(p); }
__attribute__((noinline)) long called2(const long *p) { return called(p); }
/* the users write plain memory too: they are not primitives themselves */
long use_ld(void) { plain_seen = 1; return ld(&g1); }
long use_ld2(void) { plain_seen = 2; return ld2(&g2); }
long use_fmax(void) { plain_seen = 3; return fmax(&g3, 5); }
void use_st(void) { plain_seen = 4; st_fenced(&g4, 1); }
long use_two(void) { plain_seen = 5; return two(&g5, &g6); }
long use_plain(void) { plain_seen = 6; return with_plain(&g1); }
long use_called(void) { plain_seen = 8; return called2(&g1); }
"""


def _depths(tmp_path, opt):
    r = instrument_ir(compile_to_ir(tmp_path, SOURCE, flags=(opt,)), str(tmp_path / "t.c"))
    out: dict[str, list[tuple[str, int]]] = {}
    for s in r.sites:
        if s.kind in ("load", "store", "rmw", "cas", "call"):
            out.setdefault(s.frames[0].function, []).append((s.kind, s.primitive))
    return out


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_wrappers_of_one_atomic_are_primitives_and_algorithms_are_not(tmp_path, opt):
    d = _depths(tmp_path, opt)
    nested = 1 if opt == "-O0" else 2          # at -O0 the site's frames are its own function's
    assert d["ld"] and {p for _, p in d["ld"]} == ({1} if opt == "-O0" else {1, nested}), d
    assert {k for k, _ in d["fmax"]} == {"load", "cas"} and {p for _, p in d["fmax"]} == {1}, d
    assert d["st_fenced"] == [("store", 1)], d
    assert d["two"] and {p for _, p in d["two"]} == {0}, d
    assert d["with_plain"] and {p for _, p in d["with_plain"]} == {0}, d


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 inline asm")
@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_an_asm_atomic_is_a_primitive(tmp_path, opt):
    d = _depths(tmp_path, opt)
    # asm_load is a primitive: 1 frame called from use_asm, 1 inside asm_load_twice (two locations)
    assert d["asm_load"] and {p for _, p in d["asm_load"]} == {1}, d


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_a_call_of_a_wrapper_in_a_wrapper_is_a_primitive(tmp_path, opt):
    d = _depths(tmp_path, opt)
    # called2's call of called (a wrapper of ld) is one primitive frame; use_called's call is not
    assert ("call", 1) in d["called2"] and ("call", 0) in d["use_called"], d
