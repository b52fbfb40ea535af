"""Await loops (passes/awaitloops.py, docs/design/exploration.md §7): a waiting loop that reads
several atomics with SC fences between gets `__rsan_await_head` at its header, with a phi that
tells a back edge from an entry; a loop with any other effect does not."""
from __future__ import annotations

import re

import pytest

from passes_helpers import compile_to_ir, verify
from pyrsan.passes import instrument_ir

HEAD = ("#include <stdatomic.h>\natomic_int f, g, h[3]; int plain;\nvoid ext(void);\n"
        "#define F atomic_thread_fence(memory_order_seq_cst)\n"
        "#define L(p) atomic_load_explicit(p, memory_order_acquire)\n")
MARK_RE = re.compile(r"call void @__rsan_await_head\(i64 (\d+), i32 (%[-\w.]+), i64 (\S+), i64 (\S+), i64 (\S+)\)")


@pytest.fixture(autouse=True)
def _default_environment(monkeypatch):
    monkeypatch.delenv("PYRSAN_NO_SPIN_LOOPS", raising=False)
    monkeypatch.delenv("PYRSAN_NO_AWAIT_LOOPS", raising=False)


def marks(tmp_path, body: str) -> list[tuple[str, ...]]:
    ir = compile_to_ir(tmp_path, HEAD + body, flags=("-O1",))
    text = instrument_ir(ir, "await").ir_text
    verify(text)
    return MARK_RE.findall(text)


@pytest.mark.parametrize("body", [
    # two locations, a fence before each read
    "void w(void) { for (;;) { F; int a = L(&f); F; int b = L(&g); if (a && b) break; } }",
    # Peterson's filter lock's shape: an inner loop over the others' levels, inlined
    "static int any(int me) { for (int k = 0; k < 3; k++) if (k != me && (F, L(&h[k])) >= 1) return 1; return 0; }\n"
    "void w(int me) { while (any(me) && (F, L(&f)) == me); }",
    # the bakery's ticket loop: one location, compared with <, no fence
    "void w(int mine) { int n; while ((n = L(&f)) != 0 && n < mine); }",
])
def test_waiting_loops_are_marked(tmp_path, body):
    found = marks(tmp_path, body)
    assert len(found) == 1
    assert found[0][0] != "0"


@pytest.mark.parametrize("body", [
    # an effect in the loop: a store, a plain access, an RMW, a call
    "void w(void) { for (;;) { F; int a = L(&f); atomic_store(&g, 1); if (a) break; } }",
    "void w(void) { for (;;) { F; int a = L(&f); plain++; if (a && L(&g)) break; } }",
    "void w(void) { for (;;) { F; int a = L(&f); if (a && plain) break; } }",
    "void w(void) { for (;;) { F; int a = L(&f); atomic_fetch_add(&g, 1); if (a) break; } }",
    "void w(void) { for (;;) { F; int a = L(&f); ext(); if (a && L(&g)) break; } }",
    # a single-location wait is spinloops.py's (a spin load), not an await loop
    "void w(void) { while (L(&f) != 1); }",
    # no loop
    "int w(void) { F; return L(&f) + L(&g); }",
])
def test_loops_with_effects_are_not_marked(tmp_path, body):
    assert marks(tmp_path, body) == []


def test_the_mark_tells_back_edges_from_entries(tmp_path):
    ir = compile_to_ir(tmp_path, HEAD + "void w(void) { for (;;) { F; int a = L(&f); F; int b = L(&g); "
                       "if (a && b) break; } }", flags=("-O1",))
    text = instrument_ir(ir, "await").ir_text
    inside = MARK_RE.search(text).group(2)
    phi = re.search(re.escape(inside) + r" = phi i32 (.*)", text).group(1)
    values = sorted(int(v) for v in re.findall(r"\[ (\d), ", phi))
    assert values[0] == 0 and values[-1] == 1


def test_an_option_turns_it_off(tmp_path, monkeypatch):
    monkeypatch.setenv("PYRSAN_NO_AWAIT_LOOPS", "1")
    assert marks(tmp_path, "void w(void) { for (;;) { F; int a = L(&f); F; int b = L(&g); if (a && b) break; } }") == []


def _inside_values(tmp_path, body: str) -> set[int]:
    """The values the mark's phi takes (bit 0: from inside; bit 1: the exits depend on the header)."""
    ir = compile_to_ir(tmp_path, HEAD + body, flags=("-O1",))
    text = instrument_ir(ir, "await").ir_text
    verify(text)
    (mark,) = MARK_RE.findall(text)
    phi = re.search(r"^  %s = phi i32 (.*)$" % re.escape(mark[1]), text, re.MULTILINE)
    assert phi is not None
    return {int(v) for v in re.findall(r"\[ (\d+), ", phi.group(1))}


@pytest.mark.parametrize("body,bounded", [
    # a wait bounded by its count: the exit compares the counter (docs/scheduling.md "counting")
    ("int w(void) { int i; for (i = 0; i < 5 && !L(&f); i++) ; return i; }", True),
    # a count that no exit reads (testsuite/sched/programs/spin_two_locations.c's shape)
    ("int w(void) { int n = 0; while (!L(&f) || !L(&g)) n++; return n; }", False),
])
def test_the_mark_says_whether_the_loop_may_end_by_its_count(tmp_path, body, bounded):
    """Mutant: `exits_depend_on_state` always True (spin_two_locations.c then loses its proof)
    or always False (the counted exit of testsuite/sched/test_yield_choices.py is missed)."""
    assert _inside_values(tmp_path, body) == ({2, 3} if bounded else {0, 1})


#: Dekker's waiting loop (benchmarks/programs/sched/dekker_tree.c): a path of it stores, waits and
#: stores again; its other iterations only load and fence
DEKKER = ("void w(int me) { atomic_store(&h[me], 1); while (L(&h[1 - me])) { F;\n"
          "  if (L(&f) != me) { atomic_store_explicit(&h[me], 0, memory_order_release); F;\n"
          "    while (L(&f) != me) ; atomic_store_explicit(&h[me], 1, memory_order_release); F; }\n"
          "  F; } }")


@pytest.mark.parametrize("body", [
    DEKKER,
    # the write an RMW or a CAS (its result a pair: `call { i64, i64 } @__rsan_cas_4`)
    "void w(int me) { while (L(&h[1 - me])) { F; if (L(&f) != me) { atomic_fetch_add(&g, 1); plain++; } F; } }",
    "void w(int me) { while (L(&h[1 - me])) { F; if (L(&f) != me) { int e = 0;\n"
    "  atomic_compare_exchange_strong(&g, &e, me); plain++; } F; } }",
])
def test_a_loop_whose_writing_paths_leave_it_is_marked(tmp_path, body):
    """awaitloops.py `pure_iterations`: the iterations that pass no store, RMW or CAS are pure,
    and the runtime leaves the instance at the others' write (sched_await.c); bit 3 of the mark
    (8) says that a path writes (the runtime takes such a loop under blocked iterations only).
    Mutants: the written blocks not taken out (the loop is not marked, as before: dekker_tree,3
    bounded); bit 3 not set (the default await of dekker_sc takes 121 schedules instead of 64,
    test_closure_runtime.py)."""
    assert len(marks(tmp_path, body)) == 1
    assert _inside_values(tmp_path, body) == {8, 9}


@pytest.mark.parametrize("body", [
    # a path without a write has an effect the runtime does not see (a plain store, a call)
    "void w(int me) { while (L(&h[1 - me])) { F; if (L(&f) != me) plain = 1; F; } }",
    "void w(int me) { while (L(&h[1 - me])) { F; if (L(&f) != me) ext(); F; } }",
    # a plain store after the branches join: on the write-free iterations too
    "void w(int me) { while (L(&h[1 - me])) { F; if (L(&f) != me) atomic_store(&g, 1); plain++; } }",
])
def test_a_loop_with_an_unseen_effect_on_a_write_free_path_is_not_marked(tmp_path, body):
    """Mutant: the pure check on every block but the header dropped."""
    assert marks(tmp_path, body) == []


#: Lamport's fast mutex (benchmarks/programs/sched/lamport_fast.c): a counting loop around waits
LAMPORT = "void w(void) { for (int j = 0; j < 3; j++) while ((F, L(&h[j])) != 0) ; }"


def test_a_counting_loop_around_waits_gives_way_to_them(tmp_path):
    """select_nested: the inner wait is marked (an arrival from inside, 1, or not, 0), with bit
    2 (4) for the counting loop around it; the counting loop is not. Mutant: outermost only (the
    counting loop marked: {2, 3}, its inner spins yields: lamport_fast,3 loses its proof)."""
    assert _inside_values(tmp_path, LAMPORT) == {4, 5}


@pytest.mark.parametrize("body", [
    # the counting loop loads outside its inner loop: it stays marked
    "void w(void) { for (int j = 0; j < 3 && !L(&g); j++) while ((F, L(&h[j])) != 0) ; }",
])
def test_a_counting_loop_that_loads_itself_stays_marked(tmp_path, body):
    """Mutant: select_nested without the loads test (the inner loop marked instead)."""
    assert _inside_values(tmp_path, body) == {2, 3}
