"""CAS retry loops that are atomic read-modify-writes (passes/casloops.py, issue 19 item 1):
the first read becomes __rsan_casloop_load_N and every attempt __rsan_casloop_cas_N only
when the IR proves the loop has no other effect; every other loop keeps its plain hooks."""
from __future__ import annotations

import re

import pytest

from passes_helpers import compile_to_ir, verify
from pyrsan.passes import instrument_ir

HEAD = ("#define _DEFAULT_SOURCE\n#include <stdatomic.h>\n#include <stdint.h>\n#include <sched.h>\n"
        "#include <unistd.h>\n"
        "typedef struct span { _Atomic(uintptr_t) bits; _Atomic(uintptr_t) aux; uintptr_t note; } span_t;\n"
        "_Atomic(long) live; span_t spans[4]; uintptr_t trace;\n")
CASLOOP_LOAD_RE = re.compile(r"call i64 @__rsan_casloop_load_(\d)\(")
CASLOOP_CAS_RE = re.compile(r"call \{ i64, i64 \} @__rsan_casloop_cas_(\d)\(")
PLAIN_LOAD_RE = re.compile(r"call i64 @__rsan_load_\d\(")
PLAIN_CAS_RE = re.compile(r"call \{ i64, i64 \} @__rsan_cas_\d\(")
OPTS = pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])


@pytest.fixture(autouse=True)
def _default_environment(monkeypatch):
    monkeypatch.delenv("PYRSAN_NO_SPIN_LOOPS", raising=False)


def instrument(tmp_path, body: str, opt: str, name: str = "t.c", head: str = HEAD):
    ir = compile_to_ir(tmp_path, head + body, name=name, flags=(opt,))
    result = instrument_ir(ir, "casloop")
    verify(result.ir_text)
    return result


RMW_LOOPS = [
    # the classic shape: relaxed first read, release CAS, computed new value
    "void set_bits(span_t *s, uintptr_t b) { uintptr_t old = atomic_load_explicit(&s->bits,"
    " memory_order_relaxed); uintptr_t nw; do { nw = (old & ~(uintptr_t)3) | b; } while"
    " (!atomic_compare_exchange_weak_explicit(&s->bits, &old, nw, memory_order_release,"
    " memory_order_relaxed)); }",
    # default (seq_cst) orders, strong CAS, a branch in the body
    "long add_clamped(long d) { long old = atomic_load(&live), nw; do { nw = old + d;"
    " if (nw < 0) nw = 0; } while (!atomic_compare_exchange_strong(&live, &old, nw)); return old; }",
    # while form, a yield between attempts
    "void take(span_t *s, uintptr_t b) { uintptr_t old = atomic_load_explicit(&s->bits,"
    " memory_order_relaxed); while (!atomic_compare_exchange_weak_explicit(&s->bits, &old,"
    " old & ~b, memory_order_acq_rel, memory_order_relaxed)) sched_yield(); }",
    # a back-off counter of the loop's own (never used after it)
    "void inc(span_t *s) { uintptr_t old = atomic_load_explicit(&s->aux, memory_order_relaxed);"
    " unsigned spins = 0; while (!atomic_compare_exchange_weak_explicit(&s->aux, &old, old + 2,"
    " memory_order_relaxed, memory_order_relaxed)) { if (++spins > 8) usleep(1); } }",
    # a pointer-sized word reached through an array index
    "uintptr_t mark(int i) { span_t *s = &spans[i & 3]; uintptr_t old = atomic_load_explicit("
    "&s->bits, memory_order_acquire); while (!atomic_compare_exchange_weak_explicit(&s->bits,"
    " &old, old | 1, memory_order_acq_rel, memory_order_acquire)); return old; }",
]


FP_HEAD = "#include <stdatomic.h>\n#include <stdint.h>\n#include <string.h>\n_Atomic(uint64_t) acc;\n"
# a double kept in an atomic 64-bit word, added to with a CAS loop (what libstdc++'s
# std::atomic<double>::fetch_add does once inlined): fadd and bitcasts are pure, a bitcast
# round trip is the value itself, and the expected value handed on by select(success, ...)
FP_LOOP = ("void add(double d) { uint64_t old = atomic_load_explicit(&acc, memory_order_relaxed), nw;"
           " double v; do { memcpy(&v, &old, 8); v += d; memcpy(&nw, &v, 8); } while"
           " (!atomic_compare_exchange_weak_explicit(&acc, &old, nw, memory_order_relaxed,"
           " memory_order_relaxed)); }")


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_floating_point_cas_loop_becomes_one_rmw(tmp_path, opt):
    result = instrument(tmp_path, FP_LOOP, opt, head=FP_HEAD)
    assert [loop.kind for loop in result.loops] == ["rmw"], result.ir_text
    assert len(CASLOOP_LOAD_RE.findall(result.ir_text)) == 1


def test_cpp_atomic_double_cas_loop_with_a_select_of_expected_becomes_one_rmw(tmp_path):
    body = ("#include <atomic>\nstd::atomic<double> d{0.0};\n"
            "void add(double x) {\n"
            "  double old = d.load(std::memory_order_relaxed);\n"
            "  while (!d.compare_exchange_weak(old, old + x, std::memory_order_relaxed,\n"
            "                                  std::memory_order_relaxed)) {\n  }\n"
            "}\n")
    result = instrument(tmp_path, body, "-O1", name="t.cpp", head="")
    assert [loop.describe() for loop in result.loops] == ["CAS retry loop at t.cpp:5 (read-modify-write of d)"]


@OPTS
@pytest.mark.parametrize("body", RMW_LOOPS)
def test_a_cas_loop_without_other_effects_becomes_one_rmw(tmp_path, body, opt):
    result = instrument(tmp_path, body, opt)
    out = result.ir_text
    assert len(CASLOOP_LOAD_RE.findall(out)) == 1, out
    assert CASLOOP_CAS_RE.findall(out)
    assert not PLAIN_LOAD_RE.findall(out) and not PLAIN_CAS_RE.findall(out)
    assert [loop.kind for loop in result.loops] == ["rmw"]
    assert result.loops[0].describe().startswith("CAS retry loop at t.c:")


def test_cpp_loops_with_yield_are_recognised(tmp_path):
    body = ("#include <atomic>\n#include <thread>\n#include <cstdint>\n"
            "struct Span { std::atomic<uintptr_t> bits; };\n"
            "void set(Span &s, uintptr_t b) {\n"
            "  uintptr_t old = s.bits.load(std::memory_order_relaxed);\n"
            "  while (!s.bits.compare_exchange_weak(old, old | b, std::memory_order_acq_rel,\n"
            "                                       std::memory_order_relaxed))\n"
            "    std::this_thread::yield();\n"
            "}\n")
    for opt in ("-O1", "-O2"):
        result = instrument(tmp_path, body, opt, name="t.cpp", head="")
        assert [loop.describe() for loop in result.loops] == [
            "CAS retry loop at t.cpp:7 (read-modify-write of s.bits)"]


NOT_RMW_LOOPS = [
    # an effect in the body: every attempt (stale or not) records the value it saw
    "void f(span_t *s) { uintptr_t old = atomic_load_explicit(&s->bits, memory_order_relaxed);"
    " do { s->note = old; } while (!atomic_compare_exchange_weak_explicit(&s->bits, &old, old | 1,"
    " memory_order_release, memory_order_relaxed)); }",
    "void f(span_t *s) { uintptr_t old = atomic_load_explicit(&s->bits, memory_order_relaxed);"
    " do { atomic_store_explicit(&s->aux, old, memory_order_relaxed); } while"
    " (!atomic_compare_exchange_weak_explicit(&s->bits, &old, old | 1, memory_order_release,"
    " memory_order_relaxed)); }",
    # leaves on the value read (not only on success)
    "int f(span_t *s) { uintptr_t old = atomic_load_explicit(&s->bits, memory_order_relaxed);"
    " do { if (old & 1) return 0; } while (!atomic_compare_exchange_weak_explicit(&s->bits, &old,"
    " old | 1, memory_order_acquire, memory_order_relaxed)); return 1; }",
    # the first read is used after the loop (a stale value flows on)
    "uintptr_t f(span_t *s) { uintptr_t first = atomic_load_explicit(&s->bits, memory_order_relaxed);"
    " uintptr_t old = first; while (!atomic_compare_exchange_weak_explicit(&s->bits, &old, old + 1,"
    " memory_order_relaxed, memory_order_relaxed)); return first; }",
    # a value computed from the first read is used after the loop: the stale read flows on
    # through an operation (the checks looked at every argument of an operation but its first)
    "uintptr_t f(span_t *s) { uintptr_t first = atomic_load_explicit(&s->bits, memory_order_relaxed);"
    " uintptr_t keep = first * 3; uintptr_t old = first; while (!atomic_compare_exchange_weak_explicit("
    "&s->bits, &old, old + 1, memory_order_relaxed, memory_order_relaxed)); return keep; }",
    # a retry counter used after the loop
    "unsigned f(span_t *s) { uintptr_t old = atomic_load_explicit(&s->bits, memory_order_relaxed);"
    " unsigned n = 0; while (!atomic_compare_exchange_weak_explicit(&s->bits, &old, old + 1,"
    " memory_order_relaxed, memory_order_relaxed)) n++; return n; }",
    # the attempt expects something else than the value read
    "void f(span_t *s) { uintptr_t old = atomic_load_explicit(&s->bits, memory_order_relaxed);"
    " uintptr_t e = old & ~(uintptr_t)1; while (!atomic_compare_exchange_weak_explicit(&s->bits, &e,"
    " e | 1, memory_order_relaxed, memory_order_relaxed)) e &= ~(uintptr_t)1; }",
    # another location
    "void f(span_t *s) { uintptr_t old = atomic_load_explicit(&s->bits, memory_order_relaxed);"
    " while (!atomic_compare_exchange_weak_explicit(&s->aux, &old, old + 1, memory_order_relaxed,"
    " memory_order_relaxed)); }",
    # the first read is acquire, the CAS relaxed: the read orders more than the RMW would
    "void f(span_t *s) { uintptr_t old = atomic_load_explicit(&s->bits, memory_order_acquire);"
    " while (!atomic_compare_exchange_weak_explicit(&s->bits, &old, old + 1, memory_order_relaxed,"
    " memory_order_relaxed)); }",
    # a call with unknown effects between attempts
    "void g(void); void f(span_t *s) { uintptr_t old = atomic_load_explicit(&s->bits,"
    " memory_order_relaxed); while (!atomic_compare_exchange_weak_explicit(&s->bits, &old, old + 1,"
    " memory_order_relaxed, memory_order_relaxed)) g(); }",
]


@OPTS
@pytest.mark.parametrize("body", NOT_RMW_LOOPS)
def test_other_cas_loops_are_analysed_as_written(tmp_path, body, opt):
    result = instrument(tmp_path, body, opt)
    out = result.ir_text
    assert not CASLOOP_LOAD_RE.findall(out) and not CASLOOP_CAS_RE.findall(out)
    assert PLAIN_LOAD_RE.findall(out) and PLAIN_CAS_RE.findall(out)
    assert not [loop for loop in result.loops if loop.kind == "rmw"]


def test_recognition_off_keeps_plain_hooks(tmp_path):
    ir = compile_to_ir(tmp_path, HEAD + RMW_LOOPS[0], flags=("-O1",))
    out = instrument_ir(ir, "casloop", spin_loops=False).ir_text
    assert not CASLOOP_LOAD_RE.findall(out) and PLAIN_LOAD_RE.findall(out)


WAIT_WITH_YIELD = [
    "void w(void) { while (atomic_load_explicit(&live, memory_order_acquire) != 1) sched_yield(); }",
    "void w(void) { while (!atomic_load_explicit(&live, memory_order_acquire)) usleep(10); }",
]


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
@pytest.mark.parametrize("body", WAIT_WITH_YIELD)
def test_wait_loops_may_yield_between_attempts(tmp_path, body, opt):
    result = instrument(tmp_path, body, opt)
    assert [loop.kind for loop in result.loops] == ["wait"]
    assert "@__rsan_spin_load_" in result.ir_text


def test_cpp_wait_loop_with_this_thread_yield(tmp_path):
    body = ("#include <atomic>\n#include <thread>\nstd::atomic<unsigned> rd;\n"
            "void w(unsigned want) { while (rd.load(std::memory_order_acquire) != 3) std::this_thread::yield(); }\n")
    result = instrument(tmp_path, body, "-O1", name="t.cpp", head="")
    assert [loop.describe() for loop in result.loops] == ["spin loop at t.cpp:4 (wait for rd == 3)"]


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_a_wait_for_a_value_fixed_before_the_loop_and_its_peeled_first_read(tmp_path, opt):
    """`while (pos.load(acquire) != rd) yield();` (a bounded queue's turn wait): a wait for
    rd; at -O1 the loop is rotated and its first read peeled off: that read is an attempt of
    the same wait too. No plain load of the location is left."""
    body = ("#include <atomic>\n#include <thread>\nstd::atomic<unsigned> m_read;\n"
            "void wait_turn(unsigned rd) {\n"
            "  while (m_read.load(std::memory_order_acquire) != rd) std::this_thread::yield();\n}\n")
    name, head = ("t.cpp", "") if opt != "-O0" else ("t.c", HEAD)
    if opt == "-O0":   # C++ std::atomic is a call at -O0: the C spelling
        body = ("atomic_uint m_read;\nvoid wait_turn(unsigned rd) {\n"
                "  while (atomic_load_explicit(&m_read, memory_order_acquire) != rd) sched_yield();\n}\n")
    result = instrument(tmp_path, body, opt, name=name, head=head)
    out = result.ir_text
    assert [loop.describe().split(" at ")[0] for loop in result.loops] == ["spin loop"]
    assert "a value fixed before the loop" in result.loops[0].describe()
    assert len(re.findall(r"call i64 @__rsan_spin_load_4\(", out)) == (1 if opt == "-O0" else 2)
    assert not re.findall(r"call i64 @__rsan_load_4\(", out)


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_peeled_first_read_before_a_back_off_body_is_an_attempt_too(tmp_path, opt):
    """`while (load(a, acquire) != want) if (++spins % 32 == 0) sched_yield();` rotated at -O1:
    the peeled read enters the loop at its header, the back-off block, not at the block of the
    loop's own read. It is an attempt of the same wait (before: left a plain acquire load, and
    its stale read in the first, failed attempt was reported: benchmarks/programs/
    message_passing.c's wait_for)."""
    body = ("void wait_for(atomic_long *a, long want) {\n  int spins = 0;\n"
            "  while (atomic_load_explicit(a, memory_order_acquire) != want)\n"
            "    if (++spins % 32 == 0) sched_yield();\n}\n")
    result = instrument(tmp_path, body, opt)
    assert [loop.kind for loop in result.loops] == ["wait"]
    assert len(re.findall(r"call i64 @__rsan_spin_load_8\(", result.ir_text)) == 2
    assert not re.findall(r"call i64 @__rsan_load_8\(", result.ir_text)


def test_a_wait_for_a_variable_that_is_also_compared_with_a_constant_is_left_alone(tmp_path):
    body = ("void w(unsigned rd) { unsigned v; while ((v = atomic_load(&live)) != rd && v != 7)"
            " sched_yield(); }")
    result = instrument(tmp_path, body, "-O1")
    assert not [loop for loop in result.loops if loop.kind == "wait"]
