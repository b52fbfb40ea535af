"""Spin loops on a member or an element of a global (passes/spinloops.py): `&s.b`, `&arr[2]`,
`&lock->now_serving` of a global lock are constant `getelementptr` expressions, the same address
on every iteration, and clang -O0's `&p->b` is a `getelementptr` instruction at constant indices
from a pointer the loop does not change. Such a loop is a wait (or a BCAS) like one on a whole
global; before, the pointer pattern only took a global or an SSA name, and a ticket lock's
`while (atomic_load(&l->now_serving) != me)` was analysed as written (its failed reads
reported as stale: testsuite/corpus/qa/ticket_lock.c)."""
from __future__ import annotations

import pytest

from passes_helpers import recognised_loops

HEAD = ("#include <stdatomic.h>\nstruct S { atomic_int a, b; } s; atomic_int arr[4]; atomic_int f;\n"
        "struct L { atomic_uint next, serving; } lock;\n")


def loops(tmp_path, body: str, opt: str) -> list[str]:
    return recognised_loops(tmp_path, HEAD + body, "t.c", (opt,))


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("body, at_o0, optimised", [
    ("void w(void) { while (atomic_load(&s.b) != 1); }",
     "wait for s.b == 1", "wait for s.b == 1"),
    ("void w(void) { while (atomic_load_explicit(&arr[2], memory_order_acquire) != 3); }",
     "wait for arr[2] == 3", "wait for arr[2] == 3"),
    ("void w(void) { while (!atomic_load(&s.b)); }",
     "wait for s.b != 0", "wait for s.b != 0"),
    ("void w(unsigned me) { while (atomic_load_explicit(&lock.serving, memory_order_acquire) != me); }",
     "wait for lock.serving == a value fixed before the loop",
     "wait for lock.serving == a value fixed before the loop"),
    ("void w(void) { int e = 0; while (!atomic_compare_exchange_weak(&s.b, &e, 1)) e = 0; }",
     "bcas s.b: 0 -> 1", "bcas s.b: 0 -> 1"),
])
def test_a_wait_on_a_member_or_element_of_a_global_is_recognised(tmp_path, body, at_o0, optimised, opt):
    found = loops(tmp_path, body, opt)
    assert len(found) == 1, found
    assert found[0].endswith("(%s)" % (at_o0 if opt == "-O0" else optimised)), found


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("body, name", [
    ("void w(struct S *p) { while (atomic_load(&p->b) != 1); }", "p->b"),
    ("void w(struct S *p) { while (atomic_load(&p->a) != 1); }", "p->a"),
    ("void w(atomic_int *flag) { while (atomic_load(flag) != 1); }", "*flag"),
    ("void w(atomic_int *q) { while (atomic_load(&q[1]) != 1); }", "*q+4"),
])
def test_a_wait_through_a_pointer_parameter_is_named_by_the_parameter(tmp_path, body, name, opt):
    """localnames.py: the loop's location through a pointer variable is named by the source
    (`p->b`, `*flag`), at -O0 through the slot clang loads the pointer from, at -O1 and above
    through the parameter's #dbg_value (before: `*%5`, `*%2`, `*%0`)."""
    found = loops(tmp_path, body, opt)
    assert found == [f"spin loop at t.c:4 (wait for {name} == 1)"], found


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
@pytest.mark.parametrize("body", [
    # the element changes from one iteration to the next: not one location
    "void w(void) { int i = 0; while (atomic_load(&arr[i & 3]) != 1) i++; }",
    # another member is read in the loop: an effect
    "void w(void) { while (atomic_load(&s.b) != 1) (void)atomic_load(&s.a); }",
])
def test_loops_over_changing_or_several_members_are_left_alone(tmp_path, body, opt):
    assert loops(tmp_path, body, opt) == []


WIDE = "atomic_ushort us; _Atomic short ss; atomic_uchar uc;\n"


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
@pytest.mark.parametrize("body", [
    # C compares in int: both the value read and the fixed value are zero-extended from 16
    # (or 8) bits at -O0, so they are equal iff equal at the atomic's width
    "void w(unsigned short me) { while (atomic_load_explicit(&us, memory_order_acquire) != me); }",
    "void w(unsigned char me) { while (atomic_load_explicit(&uc, memory_order_acquire) != me); }",
    "void w(short me) { while (atomic_load_explicit(&ss, memory_order_acquire) != me); }",
    "void w(unsigned short me) { do {} while (atomic_load(&us) != me); }",
])
def test_a_wait_for_a_narrow_value_fixed_before_the_loop_is_recognised(tmp_path, body, opt):
    """At -O0 the fixed value comes from its stack slot and is widened like the value read
    (`zext i16 %me to i32`): the loop still waits for one value (before: "extension", left
    alone, and each failed iteration's stale read was reported: a C++ ticket lock over
    std::atomic<unsigned short>, testsuite/corpus/qa/ticket_lock_template_O2.cpp at -O0)."""
    found = loops(tmp_path, WIDE + body, opt)
    assert len(found) == 1 and found[0].endswith("== a value fixed before the loop)"), found


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
@pytest.mark.parametrize("body", [
    # a wider fixed value: `me` may lie outside the atomic's range, so the read value's
    # width does not decide equality
    "void w(int me) { while (atomic_load(&us) != me); }",
    # extended otherwise: a signed value read against an unsigned fixed one
    "void w(unsigned short me) { while (atomic_load(&ss) != me); }",
])
def test_a_fixed_value_of_another_width_or_extension_is_left_alone(tmp_path, body, opt):
    assert loops(tmp_path, WIDE + body, opt) == []
