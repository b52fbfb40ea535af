"""Loops clang -O0 writes through a reference kept in a stack slot (passes/slot_refs.py), waits
for a value computed from locals, and a C++ spin lock at the default -O1 (passes/spinloops.py).

At -O0 `compare_exchange_weak(e, ...)` reads and writes `e` through a slot holding its address,
and `std::atomic<Enum>::load` returns its value through a buffer whose address sits in a slot:
such a loop was not recognised, so `--explore` could not prove a C++ spin lock at -O0. The
same lock at -O1 was not recognised either: the pipeline instruments plain accesses first, so
`e` stays a slot, the CAS is peeled, and the loop's phi carries the failed CAS's pair (and its
incoming block's name holds the word "atomic")."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from passes_helpers import CXX, compile_to_ir, recognised_loops
from pyrsan.passes import instrument_ir
from pyrsan.passes.model import parse_module
from pyrsan.passes.spinloops import find_spin_loops

ENUM = ("#include <atomic>\nenum class St { Idle, Ready };\nstd::atomic<St> s{St::Idle};\n"
        "void w() { while (s.load(std::memory_order_acquire) != St::Ready) {} }\n")
CAS_INT = ("#include <atomic>\nstd::atomic<int> f{0};\n"
           "void lock() { int e = 0; while (!f.compare_exchange_weak(e, 1, std::memory_order_acquire,"
           " std::memory_order_relaxed)) { e = 0; } }\n")
CAS_BOOL = ("#include <atomic>\nstd::atomic<bool> f{false};\n"
            "void lock() { bool e = false; while (!f.compare_exchange_weak(e, true, std::memory_order_acquire))"
            " { e = false; } }\n")
NEXT_C = ("#include <stdatomic.h>\natomic_int x;\n"
          "void w(int s) { while (atomic_load_explicit(&x, memory_order_acquire) != s + 1) {} }\n")
OWNER_PTR = ("#include <atomic>\nstruct N { int a; };\nstd::atomic<N *> p;\n"
             "void w(N *n) { N *e = nullptr; while (!p.compare_exchange_weak(e, n, std::memory_order_release))"
             " { e = nullptr; } }\n")
NEXT_CPP = ("#include <atomic>\nstd::atomic<int> x;\n"
            "void w(int s) { while (x.load(std::memory_order_acquire) != (s << 1) + 3) {} }\n")


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("source, name, found", [
    (ENUM, "t.cpp", "spin loop at t.cpp:4 (wait for s == 1)"),
    (CAS_INT, "t.cpp", "CAS retry loop at t.cpp:3 (bcas f: 0 -> 1)"),
    (CAS_BOOL, "t.cpp", "CAS retry loop at t.cpp:3 (bcas f: 0 -> 1)"),
    (OWNER_PTR, "t.cpp", "CAS retry loop at t.cpp:4 (bcas p: 0 -> a value fixed before the loop)"),
    (NEXT_C, "t.c", "spin loop at t.c:3 (wait for x == a value fixed before the loop)"),
    (NEXT_CPP, "t.cpp", "spin loop at t.cpp:3 (wait for x == a value fixed before the loop)"),
])
def test_each_level_recognises_the_loop(tmp_path, source, name, found, opt):
    """recognised_loops also verifies the instrumented module: a wait for `s + 1` computes
    the value again where the loop reads (atomics.py `fixed_value`)."""
    assert recognised_loops(tmp_path, source, name, (opt,)) == [found]


def test_the_default_pipeline_recognises_a_cpp_spin_lock(tmp_path):
    """pyrsan's -O1: plain accesses instrumented on clang's unoptimised IR, then -O1 (build.py)."""
    src = tmp_path / "t.cpp"
    src.write_text(CAS_BOOL)
    ir = subprocess.run([CXX, "-O1", "-g", "-Xclang", "-disable-llvm-passes", "-S", "-emit-llvm", "-o", "-",
                         str(src)], capture_output=True, text=True, check=True).stdout
    result = instrument_ir(ir, "t", spin_loops=True, optimise=1, optimiser=CXX)
    assert [loop.describe() for loop in result.loops] == ["CAS retry loop at t.cpp:3 (bcas f: 0 -> 1)"]


def test_a_reference_that_goes_elsewhere_keeps_its_slot_shared(tmp_path):
    """`r` also goes to g(): x's address escapes, its accesses keep their hooks (escape.py)."""
    source = ("void g(int *);\nint f(void) { int x = 0; int *r = &x; g(r); *r = 1; return *r; }\n"
              "int h(void) { int x = 0; int *r = &x; *r = 1; return *r; }\n")
    ir = instrument_ir(compile_to_ir(tmp_path, source, flags=("-O0",)), "t", spin_loops=True).ir_text
    f = ir[ir.index("define dso_local i32 @f"):]
    h = ir[ir.index("define dso_local i32 @h"):]
    assert "@__rsan_write_4" in f[:f.index("\n}\n")]
    assert "@__rsan_write_4" not in h[:h.index("\n}\n")] and "@__rsan_read_4" not in h[:h.index("\n}\n")]


_CARRIED = """@c = global i32 0

define i32 @w() {
  %s = alloca i32, align 4
  %a = cmpxchg ptr @c, i32 0, i32 1 acquire monotonic, align 4
  br label %1

1:
  %p = phi { i32, i1 } [ %a, %0 ], [ %2, %1 ]
  %v = extractvalue { i32, i1 } %p, 0
  store i32 %v, ptr %s, align 4
  DEAD
  %2 = cmpxchg weak ptr @c, i32 0, i32 1 acquire monotonic, align 4
  %3 = extractvalue { i32, i1 } %2, 1
  br i1 %3, label %4, label %1

4:
  %r = load i32, ptr %s, align 4
  ret i32 %r
}"""


@pytest.mark.parametrize("overwritten", [True, False])
def test_a_cas_loop_may_carry_its_failed_pair_only_where_nothing_after_reads_it(overwritten):
    """What a failed iteration read reaches the next one as a counter would: fine when the
    slot it went to is written again (the `e = false` of a lock); not when the code after the
    loop reads what the last iteration stored from it (the blocking CAS never fails: that
    value would be lost)."""
    text = _CARRIED.replace("DEAD", "store i32 0, ptr %s, align 4" if overwritten else "")
    found = find_spin_loops(parse_module(text).functions()[0])
    assert [loop.kind for loop in found.values()] == (["bcas"] if overwritten else []), found


_WAIT = """%"struct.std::atomic" = type { i32 }
@c = global %"struct.std::atomic" zeroinitializer

define i32 @w() {
  %s = alloca i32, align 4
  %this = alloca ptr, align 8
  store ptr @c, ptr %this, align 8
  br label %LOOP

LOOP:
  %p = phi i32 [ 0, %0 ], [ %v, %LOOP ]
  store i32 %p, ptr %s, align 4
  KEEP
  %o = load ptr, ptr %this, align 8
  %m = getelementptr inbounds %"struct.std::atomic", ptr %o, i32 0, i32 0
  %v = load atomic i32, ptr %m acquire, align 4
  %t = icmp eq i32 %v, 1
  br i1 %t, label %after, label %LOOP

after:
  %r = load i32, ptr %s, align 4
  ret i32 %r
}"""


@pytest.mark.parametrize("label", ["loop", "_ZNSt6atomicIbE21compare_exchange_weak.exit.i"])
@pytest.mark.parametrize("overwritten", [True, False])
def test_a_wait_carries_a_read_only_where_nothing_after_reads_it(label, overwritten):
    """A wait's failed attempts run: the value of the one before the last would reach the code
    after the loop through the slot. A block named after an inlined libstdc++ member and the
    member's type hold the word "atomic": names, not an atomic instruction."""
    text = _WAIT.replace("KEEP", "store i32 7, ptr %s, align 4" if overwritten else "")
    text = text.replace("LOOP", label)
    found = find_spin_loops(parse_module(text).functions()[0])
    assert [loop.kind for loop in found.values()] == (["wait"] if overwritten else []), found


def test_an_entry_block_with_a_label_is_the_function_s_entry():
    """-O2 names an entry block (`.preheader:`): it was taken for a block after an empty
    unnamed one, so no loop of the function had a reachable header."""
    text = """@c = global i32 0

define void @w() {
.preheader:
  br label %1

1:
  %2 = load atomic i32, ptr @c acquire, align 4
  %3 = icmp eq i32 %2, 1
  br i1 %3, label %4, label %1

4:
  ret void
}"""
    found = find_spin_loops(parse_module(text).functions()[0])
    assert [(loop.kind, loop.value) for loop in found.values()] == [("wait", 1)], found


@pytest.mark.parametrize("program, opt", [("cas_weak_bool_spinlock.cpp", "-O0"), ("cas_weak_bool_spinlock.cpp", "-O1"),
                                          ("owner_lock_cas_id.c", "-O2")])
def test_explore_proves_a_spin_lock(run_pyrsan, tmp_path, program, opt):
    """The qa corpus's std::atomic<bool> lock and a lock word holding its owner's id (two
    threads, two acquisitions each): with the CAS loop recognised, exploration completes
    (before, every failed CAS was an event and the bound was reached with nothing proved)."""
    program = Path(__file__).resolve().parents[1] / "corpus" / "qa" / program
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", opt, "--explore", "--max-schedules", "1000", "--json", out, program,
                      cwd=tmp_path, timeout=600)
    document = json.loads(out.read_text())
    assert proc.returncode == 0, proc.stderr
    assert document["verdict"] == "robust" and document["exploration"]["complete"], proc.stderr
