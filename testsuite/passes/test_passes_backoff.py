"""Wait loops and CAS retry loops with back-off between attempts (passes/backoff.py, issue 19
item 1): pause hints, yields, sleeps (`nanosleep` with a timespec on the stack, exponential
back-off), back-off counters of the loop's own; C at -O0..-O2 and C++ at -O1/-O2, through the
driver's pipeline (plain accesses hooked before optimisation, so a slot whose address went to a
call carries race hooks). Loops outside the shape keep their plain hooks."""
from __future__ import annotations

import re
import subprocess

import pytest

from passes_helpers import CC, CXX, canonical, verify
from pyrsan.passes import instrument_ir

C_HEAD = ("#define _DEFAULT_SOURCE\n#define _GNU_SOURCE\n#include <stdatomic.h>\n#include <sched.h>\n"
          "#include <unistd.h>\n#include <time.h>\n#include <threads.h>\n#include <pthread.h>\n"
          "extern int pthread_yield(void);\n"
          "atomic_long x; atomic_int f; long g_rem[2]; long spent; void unknown(void);\n")

# back-off statements between attempts, each recognised in both loop kinds
C_BACKOFF = {
    "pause": "__builtin_ia32_pause();",
    "asm_pause": '__asm__ __volatile__("pause" ::: "memory");',
    "sched_yield": "sched_yield();",
    "thrd_yield": "thrd_yield();",
    "pthread_yield": "pthread_yield();",
    "usleep": "usleep(10);",
    "nanosleep": "struct timespec ts = {0, 1000}; nanosleep(&ts, NULL);",
    "nanosleep_rem": "struct timespec ts = {0, 1000}, rem; nanosleep(&ts, &rem);",
    "thrd_sleep": "struct timespec ts = {0, 1000}; thrd_sleep(&ts, &ts);",
    "counter": "if (++spins > 8) { sched_yield(); spins = 0; }",
    "exponential": "struct timespec ts = {0, delay}; nanosleep(&ts, 0); if (delay < 100000) delay *= 2;",
}
# what takes a loop out of the shape: the value read, a counter or a sleep's result flows on,
# a sleep writes memory the program reads, an unknown call
C_NOT_BACKOFF = {
    "rem_global": "struct timespec ts = {0, 1000}; nanosleep(&ts, (struct timespec *)g_rem);",
    "rem_read": "struct timespec ts = {0, 1000}, rem = {0, 0}; nanosleep(&ts, &rem); spent += rem.tv_nsec;",
    "unknown_call": "unknown();",
    "global_counter": "spent++; sched_yield();",
}


def _c_cas(name: str, stmt: str) -> str:
    return ("long cas_%s(long d) { unsigned spins = 0; long delay = 1; (void)spins; (void)delay;"
            " long old = atomic_load_explicit(&x, memory_order_relaxed);"
            " while (!atomic_compare_exchange_weak_explicit(&x, &old, old + d, memory_order_acq_rel,"
            " memory_order_relaxed)) { %s } return old; }\n" % (name, stmt))


def _c_wait(name: str, stmt: str) -> str:
    return ("void wait_%s(void) { unsigned spins = 0; long delay = 1; (void)spins; (void)delay;"
            " while (atomic_load_explicit(&f, memory_order_acquire) != 1) { %s } }\n" % (name, stmt))


def driver_ir(tmp_path, source: str, name: str, opt: str) -> str:
    """The IR the driver hands to the passes: unoptimised (-Xclang -disable-llvm-passes)
    above -O0, optimised by instrument_ir after the plain accesses are hooked."""
    src = tmp_path / name
    src.write_text(source)
    cpp = name.endswith(".cpp")
    cmd = [CXX if cpp else CC, "-std=c++17" if cpp else "-std=c11", "-g", opt, "-S", "-emit-llvm",
           "-Wno-atomic-alignment", str(src), "-o", "-"]
    if opt != "-O0":
        cmd[-2:-2] = ["-Xclang", "-disable-llvm-passes"]
    return canonical(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def instrument(tmp_path, source: str, name: str, opt: str):
    level = int(opt[2:])
    result = instrument_ir(driver_ir(tmp_path, source, name, opt), "backoff", spin_loops=True,
                           optimise=level, optimiser=CC if level else None)
    verify(result.ir_text)
    return result


def _lines(result, kind: str) -> set[int]:
    return {int(re.search(r":(\d+) ", loop.describe()).group(1)) for loop in result.loops
            if loop.kind == kind}


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_c_wait_and_cas_loops_with_each_back_off_are_recognised(tmp_path, opt):
    names = list(C_BACKOFF) + list(C_NOT_BACKOFF)
    stmts = {**C_BACKOFF, **C_NOT_BACKOFF}
    body = "".join(_c_cas(n, stmts[n]) + _c_wait(n, stmts[n]) for n in names)
    result = instrument(tmp_path, C_HEAD + body, "t.c", opt)
    first = C_HEAD.count("\n") + 1
    line = {n: first + 2 * k for k, n in enumerate(names)}     # cas_n at line[n], wait_n after
    cas, wait = _lines(result, "rmw"), _lines(result, "wait")
    assert cas == {line[n] for n in C_BACKOFF}, (sorted(cas), line)
    assert wait == {line[n] + 1 for n in C_BACKOFF}, (sorted(wait), line)
    out = result.ir_text
    for n in C_NOT_BACKOFF:      # analysed as written: the plain hooks of the atomics stay
        fn = out[out.index("@cas_%s(" % n):]
        fn = fn[:fn.index("\n}\n")]
        assert "@__rsan_load_8(" in fn and "@__rsan_cas_8(" in fn and "casloop" not in fn
        fn = out[out.index("@wait_%s(" % n):]
        fn = fn[:fn.index("\n}\n")]
        assert "@__rsan_load_4(" in fn and "spin_load" not in fn


C_COUNTERS_OUT = [
    # the counter is what the function returns: how many attempts failed
    "unsigned w(void) { unsigned n = 0; while (atomic_load_explicit(&f, memory_order_acquire) != 1)"
    " { n++; sched_yield(); } return n; }",
    # the counter decides an exit: a bounded spin that gives up
    "int w(void) { unsigned n = 0; while (atomic_load_explicit(&f, memory_order_acquire) != 1)"
    " { if (++n > 100) return 0; sched_yield(); } return 1; }",
    # the values read accumulate into a local that the code after the loop uses
    "long w(void) { long acc = 0; int v; while ((v = atomic_load_explicit(&f, memory_order_acquire))"
    " != 1) { acc += v; sched_yield(); } return acc; }",
    # the value read is compared with a counter
    "void w(void) { int n = 0; while (atomic_load_explicit(&f, memory_order_acquire) != n) n++; }",
    # a counter chooses the location: not one location waited for
    "atomic_int fb; void w(void) { unsigned n = 0; while (atomic_load_explicit(n++ & 1 ? &f : &fb,"
    " memory_order_acquire) != 1) sched_yield(); }",
]


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("body", C_COUNTERS_OUT)
def test_wait_loops_whose_counter_or_reads_flow_on_are_analysed_as_written(tmp_path, body, opt):
    result = instrument(tmp_path, C_HEAD + body + "\n", "t.c", opt)
    assert not _lines(result, "wait")
    assert "@__rsan_load_4(" in result.ir_text


CPP_HEAD = ("#include <atomic>\n#include <thread>\n#include <chrono>\n#include <sched.h>\n"
            "std::atomic<long> x; std::atomic<int> f;\n")
CPP_BACKOFF = {
    "none": "",
    "pause": "__builtin_ia32_pause();",
    "yield": "std::this_thread::yield();",
    "sleep_for": "std::this_thread::sleep_for(std::chrono::microseconds(1));",
    "sched_yield": "sched_yield();",
    "counter": "if (++spins > 8) { std::this_thread::yield(); spins = 0; }",
}


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_cpp_loops_with_each_back_off_are_recognised(tmp_path, opt):
    """std::atomic's compare_exchange takes `old` by reference: before optimisation the
    slot's address goes to a call, so its accesses carry race hooks, which stay (inert)."""
    body = "".join(
        "long cas_%s(long d) { unsigned spins = 0; (void)spins; long old = x.load(std::memory_order_relaxed);"
        " while (!x.compare_exchange_weak(old, old + d, std::memory_order_acq_rel,"
        " std::memory_order_relaxed)) { %s } return old; }\n"
        "void wait_%s() { unsigned spins = 0; (void)spins; while (f.load(std::memory_order_acquire) != 1)"
        " { %s } }\n" % (n, s, n, s) for n, s in CPP_BACKOFF.items())
    result = instrument(tmp_path, CPP_HEAD + body, "t.cpp", opt)
    first = CPP_HEAD.count("\n") + 1
    assert _lines(result, "rmw") == {first + 2 * k for k in range(len(CPP_BACKOFF))}
    assert _lines(result, "wait") == {first + 2 * k + 1 for k in range(len(CPP_BACKOFF))}
    assert "@__rsan_read_8(" in result.ir_text      # the hooks of `old` are still there


TTAS = ("void lock(void) { long delay = 100; while (atomic_exchange_explicit(&f, 1, memory_order_acquire)) {"
        " while (atomic_load_explicit(&f, memory_order_relaxed) != 0) { struct timespec ts = {0, delay};"
        " nanosleep(&ts, NULL); if (delay < 10000) delay *= 2; } } %s}\n")


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("tail, recognised", [("", True), ("spent = delay; ", False)])
def test_a_delay_kept_for_the_next_wait_only_times_sleeps(tmp_path, opt, tail, recognised):
    """A test-and-test-and-set lock whose exponential delay outlives the inner wait (it is
    kept for the next one): still a wait while the delay only reaches sleeps; when the code
    after the loops stores it, the number of failed attempts shows, and the loop is left alone."""
    result = instrument(tmp_path, C_HEAD + TTAS % tail, "t.c", opt)
    assert bool(_lines(result, "wait")) == recognised


@pytest.mark.parametrize("stmt", [v for k, v in CPP_BACKOFF.items() if k != "sleep_for"])
def test_cpp_wait_loops_at_O0(tmp_path, stmt):
    """clang -O0 does not inline std::atomic's load into a plain atomic instruction: it calls
    std::operator&(memory_order, __memory_order_modifier) (an invoke) and switches over the
    order, with one atomic load per case, through `this` in a stack slot. The load the switch
    takes is the wait's; the other cases stay plain hooks (never executed)."""
    body = ("void wait_turn() { unsigned spins = 0; (void)spins;\n"
            " while (f.load(std::memory_order_acquire) != 1) { %s } }\n" % stmt)
    result = instrument(tmp_path, CPP_HEAD + body, "t.cpp", "-O0")
    assert _lines(result, "wait") == {CPP_HEAD.count("\n") + 2}
    assert [loop.describe().split(" (")[1] for loop in result.loops] == ["wait for f == 1)"]
    assert len(re.findall(r"call i64 @__rsan_spin_load_4\(", result.ir_text)) == 1


def test_cpp_O0_wait_whose_location_changes_is_left_alone(tmp_path):
    body = ("std::atomic<int> g; void wait_turn() { unsigned n = 0;\n"
            " while ((n++ & 1 ? f : g).load(std::memory_order_acquire) != 1) std::this_thread::yield(); }\n")
    result = instrument(tmp_path, CPP_HEAD + body, "t.cpp", "-O0")
    assert not _lines(result, "wait")


@pytest.mark.parametrize("stmt", [v for k, v in CPP_BACKOFF.items() if k != "sleep_for"])
def test_cpp_cas_loops_at_O0(tmp_path, stmt):
    """At -O0 std::atomic's compare_exchange_weak switches over both orders (15 compare-
    exchanges, one taken) and reaches `old` through a reference slot; the load of the first
    read is one of three (the relaxed case)."""
    body = ("long add(long d) { unsigned spins = 0; (void)spins; long old = x.load(std::memory_order_relaxed);\n"
            " while (!x.compare_exchange_weak(old, old + d, std::memory_order_acq_rel,"
            " std::memory_order_relaxed)) { %s } return old; }\n" % stmt)
    result = instrument(tmp_path, CPP_HEAD + body, "t.cpp", "-O0")
    assert _lines(result, "rmw") == {CPP_HEAD.count("\n") + 2}
    assert [loop.describe().split(" (")[1] for loop in result.loops] == ["read-modify-write of x)"]
    out = result.ir_text
    assert len(re.findall(r"@__rsan_casloop_load_8\(", out)) == 2      # the call and its declaration
    assert len(re.findall(r"call \{ i64, i64 \} @__rsan_casloop_cas_8\(", out)) == 1


CPP_NOT_RMW_O0 = [
    # the first read flows on after the loop
    "long h(long d) { long first = x.load(std::memory_order_relaxed); long old = first;"
    " while (!x.compare_exchange_weak(old, old + d, std::memory_order_relaxed,"
    " std::memory_order_relaxed)) {} return first; }",
    # an effect in the body
    "long seen; void h(long d) { long old = x.load(std::memory_order_relaxed);"
    " while (!x.compare_exchange_weak(old, old + d, std::memory_order_relaxed,"
    " std::memory_order_relaxed)) { seen = old; } }",
    # the reference to `old` escapes into a call
    "void g(long &); void h(long d) { long old = x.load(std::memory_order_relaxed);"
    " while (!x.compare_exchange_weak(old, old + d, std::memory_order_relaxed,"
    " std::memory_order_relaxed)) { g(old); } }",
    # the first read acquires, the CAS's success does not
    "void h(long d) { long old = x.load(std::memory_order_acquire);"
    " while (!x.compare_exchange_weak(old, old + d, std::memory_order_relaxed,"
    " std::memory_order_relaxed)) {} }",
]


@pytest.mark.parametrize("body", CPP_NOT_RMW_O0)
def test_cpp_O0_cas_loops_outside_the_shape_are_analysed_as_written(tmp_path, body):
    result = instrument(tmp_path, CPP_HEAD + body + "\n", "t.cpp", "-O0")
    assert not _lines(result, "rmw")
    assert "@__rsan_casloop_cas_8(" not in result.ir_text
