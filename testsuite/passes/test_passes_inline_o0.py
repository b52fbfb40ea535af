"""-O0 waits through an accessor (passes/inline_o0.py) and on an atomic pointer
(passes/spinloops.py): clang -O0 inlines only `always_inline` functions, so a wait through
libstdc++'s `std::atomic<T*>` / `std::atomic<bool>` members or a C helper calls a function, and
the loop held no atomic of its own: its failed reads were analysed as written (the qa corpus's
hazard-pointer programs reported a stale read at -O0 only). And clang -O0 compares an atomic
pointer read as `icmp ptr` after a trip through a slot. Each wait is recognised at -O0 as at
-O1 and -O2; a loop whose accessor has an effect is still left alone."""
from __future__ import annotations

import pytest

from passes_helpers import compile_to_ir, recognised_loops
from pyrsan.passes.inline_o0 import inline_atomic_helpers
from pyrsan.passes.model import parse_module
from pyrsan.passes.spinloops import find_spin_loops

CPP_HEAD = ("#include <atomic>\nstruct Node { int a; };\nstd::atomic<Node *> hz; std::atomic<bool> ok;\n"
            "std::atomic<Node *> head;\n")
C_HEAD = ("#include <stdatomic.h>\nstruct Node { int a; };\n_Atomic(struct Node *) p; atomic_int f;\n"
          "static int ready(void) { return atomic_load_explicit(&f, memory_order_acquire); }\n"
          "static int bump(void) { atomic_fetch_add(&f, 0); return atomic_load(&f); }\n")


def loops(tmp_path, source: str, name: str, opt: str) -> list[str]:
    return recognised_loops(tmp_path, source, name, (opt,))


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("body, waits_for", [
    ("void w(Node *old) { while (hz.load(std::memory_order_acquire) == old) {} }",
     "hz != a value fixed before the loop"),
    ("Node *w() { Node *n; while (!(n = hz.load(std::memory_order_acquire))) {} return n; }",
     "hz != 0"),
    ("void w() { while (!ok.load(std::memory_order_acquire)) {} }", "ok != 0"),
    ("void w() { while (!std::atomic_load_explicit(&hz, std::memory_order_acquire)) {} }", "hz != 0"),
])
def test_a_wait_through_a_std_atomic_member_is_recognised(tmp_path, body, waits_for, opt):
    found = loops(tmp_path, CPP_HEAD + body + "\n", "t.cpp", opt)
    assert len(found) == 1 and found[0].endswith("(wait for %s)" % waits_for), found


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("body, waits_for", [
    ("struct Node *w(void) { struct Node *n; while (!(n = atomic_load(&p))); return n; }", "p != 0"),
    ("void w(struct Node *old) { while (atomic_load(&p) == old); }",
     "p != a value fixed before the loop"),
    ("void w(void) { while (!ready()); }", "f != 0"),
])
def test_a_c_wait_on_a_pointer_or_through_a_helper_is_recognised(tmp_path, body, waits_for, opt):
    found = loops(tmp_path, C_HEAD + body + "\n", "t.c", opt)
    assert len(found) == 1 and found[0].endswith("(wait for %s)" % waits_for), found


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_a_loop_whose_accessor_writes_is_left_alone(tmp_path, opt):
    """bump() makes an RMW in every iteration: a failed iteration has an effect, no wait."""
    assert loops(tmp_path, C_HEAD + "void w(void) { while (!bump()); }\n", "t.c", opt) == []


def test_only_clang_O0_functions_are_inlined(tmp_path):
    """At -O1 the optimiser decides (no `optnone`): the pass leaves the module alone; at -O0
    the accessor's calls are gone and its body sits in the loop."""
    source = C_HEAD + "void w(void) { while (!ready()); }\n"
    assert inline_atomic_helpers(parse_module(compile_to_ir(tmp_path, source, flags=("-O1",)))) is None
    inlined = inline_atomic_helpers(parse_module(compile_to_ir(tmp_path, source, flags=("-O0",))))
    assert inlined is not None
    w = next(f for f in inlined.functions() if "@w()" in f.header)
    assert not any("@ready" in line for line in w.lines)
    assert any("load atomic" in line for line in w.lines)


def test_an_accessor_called_outside_any_loop_stays_a_call(tmp_path):
    """Nothing to recognise there, and a helper the user kept out of line (`noinline`: clang
    -O0 marks every function so) keeps its own frame (testsuite/reports/sb_helper_calls.c)."""
    source = C_HEAD + "int w(void) { int r = ready(); while (!ready()); return r; }\nint v(void) { return ready(); }\n"
    inlined = inline_atomic_helpers(parse_module(compile_to_ir(tmp_path, source, flags=("-O0",))))
    assert inlined is not None
    only_once = inline_atomic_helpers(parse_module(compile_to_ir(
        tmp_path, C_HEAD + "int v(void) { return ready(); }\n", flags=("-O0",))))
    assert only_once is None


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("body", [
    "int w(void) { for (int i = 0; i < 100; i++) if (atomic_load(&f)) return 1; return 0; }",
    "int w(int n) { while (n-- > 0) if (atomic_load(&f) != 3) return 1; return 0; }",
])
def test_a_bounded_poll_is_not_a_wait(tmp_path, body, opt):
    """The loop also leaves after its last failed read, on the value it retries on: that read
    decides what the function returns, so it must stay an event (before, -O0's shape of the
    first was taken as a wait for f != 0 and its last read of 0 dropped)."""
    assert loops(tmp_path, C_HEAD + body + "\n", "t.c", opt) == []


_LOW_BIT = """define void @w() {
  br label %1

1:
  %2 = load atomic i8, ptr @c acquire, align 1
  %3 = trunc i8 %2 to i1
  br i1 %3, label %LEAVE, label %STAY

4:
  ret void
}"""


@pytest.mark.parametrize("leave_on_1, recognised", [(True, True), (False, False)])
def test_a_byte_tested_by_its_low_bit_is_only_a_wait_to_leave_zero(leave_on_1, recognised):
    """clang -O0 tests a bool with a plain `trunc` to i1, its low bit. Leaving when it is 1 is
    the wait for "not 0": a 0 fails both tests. Leaving when it is 0 is not a wait for 0: a
    byte of 2 leaves the loop too, and the wait would take that read as a failed attempt."""
    text = _LOW_BIT.replace("LEAVE", "4" if leave_on_1 else "1").replace("STAY", "1" if leave_on_1 else "4")
    found = find_spin_loops(parse_module(text).functions()[0])
    assert bool(found) == recognised, found
