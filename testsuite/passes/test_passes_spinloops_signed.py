"""Spin-loop shapes the session-23 recognition adds (passes/spinloops.py, spinsigned.py,
docs/toolchain.md §5.5): signed views of some bits of the value read (`sext`, `ashr`) compared
with == / !=, and -O0 waits whose compared value lives in a stack slot across the back edge
(Concurrency Kit's ticket lock at -O0). Each accepted shape has near misses that must stay
plain loops."""
from __future__ import annotations


import pytest

from passes_helpers import MASK_RE, instrument_spin

HEAD = ("#include <stdatomic.h>\n#include <stdint.h>\n"
        "atomic_uint w; atomic_ullong big; atomic_int l; unsigned plain;\n")


@pytest.fixture(autouse=True)
def _default_environment(monkeypatch):
    monkeypatch.delenv("PYRSAN_NO_SPIN_LOOPS", raising=False)


def _instrument(tmp_path, body: str, opt: str, name: str = "t.c", head: str = HEAD):
    return instrument_spin(tmp_path, head + body, (opt,), name)


def _waits(result) -> list[str]:
    return [loop.describe().split("wait for ")[1][:-1] for loop in result.loops]


# --- signed views of some bits ---------------------------------------------------------------

@pytest.mark.parametrize("opts, body, described", [
    # the high half as a signed short: -1 is the bits 0xffff (-O1 makes it an unsigned `>`)
    ("-O0", "void f(void) { while ((short)(atomic_load(&w) >> 16) != -1) ; }", "(w & 0xffff0000) == 4294901760"),
    # an arithmetic shift of the word: the top byte, sign-extended, equal to -2
    ("-O0 -O1 -O2", "void f(void) { while (((int)atomic_load(&w) >> 24) != -2) ; }", "(w & 0xff000000) == 4261412864"),
    # the low byte as a signed char, compared with a positive constant
    ("-O0 -O1 -O2", "void f(void) { while ((signed char)atomic_load(&w) != 5) ; }", "(w & 0xff) == 5"),
])
@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_signed_bits_compared_with_a_constant_are_a_masked_wait(tmp_path, opts, body, described, opt):
    if opt not in opts.split():
        pytest.skip("the optimiser makes it another shape")
    result = _instrument(tmp_path, body, opt)
    assert _waits(result) == [described], result.ir_text
    assert MASK_RE.findall(result.ir_text)
    assert "__rsan_load_4" not in result.ir_text


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_a_constant_signed_bits_cannot_hold_makes_the_wait_constant(tmp_path, opt):
    """(signed char)x is never 200: `!= 200` always holds, so the loop exits on the first
    read whatever it is: the exits do not decide on one value (or the loop is folded away)."""
    result = _instrument(tmp_path, "int f(void) { int n = 0; while ((signed char)atomic_load(&w) == 200) n++; "
                         "return n; }", opt)
    assert all("== 200" not in d for d in _waits(result))


@pytest.mark.parametrize("opts, body", [
    # a sign-extended half compared with a value of full width fixed before the loop: equal
    # only when the value is in the half's signed range, which the runtime cannot test
    ("-O0 -O1 -O2", "void f(int t) { while (((int)atomic_load(&w) >> 16) != t) ; }"),
    # an ordered (signed) comparison: no one value (-O1 makes it a test of the sign bit)
    ("-O0", "void f(void) { while ((short)atomic_load(&w) < 0) ; }"),
    # arithmetic after the extension (-O1 folds it into a comparison of the byte)
    ("-O0", "void f(void) { while ((int)(signed char)atomic_load(&w) + 1 != 0) ; }"),
    # the signed wait's loop also writes
    ("-O0 -O1 -O2", "void f(void) { while ((signed char)atomic_load(&w) != -3) plain++; }"),
])
@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_near_misses_of_a_signed_wait_stay_plain_loops(tmp_path, opts, body, opt):
    if opt not in opts.split():
        pytest.skip("the optimiser makes it another shape")
    result = _instrument(tmp_path, body, opt)
    assert "__rsan_spin_load" not in result.ir_text
    assert result.loops == ()


# --- -O0: the compared value kept in a stack slot across the back edge -----------------------

ASM_HEAD = HEAD + (
    "static inline unsigned ld(unsigned *p) { unsigned r;\n"
    "  __asm__ __volatile__(\"movl %1, %0\" : \"=q\"(r) : \"m\"(*p) : \"memory\"); return r; }\n"
    "static inline void stall(void) { __asm__ __volatile__(\"pause\" ::: \"memory\"); }\n"
    "unsigned word;\n")
# CK's ticket lock as written: the header compares a slot that the entry sets from the
# fetch-and-add and each iteration sets from the read
TICKET = ("void lock(void) {{ unsigned r = {faa}; unsigned t = r >> 16, pos = r & 0xffff;\n"
          "  while (pos != t) {{ {pause}; pos = {load} & 0xffff; }} }}")


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("head, faa, pause, load, location", [
    (HEAD, "atomic_fetch_add(&w, 0x10000u)", "__builtin_ia32_pause()",
     "atomic_load_explicit(&w, memory_order_acquire)", "w"),
    (ASM_HEAD, "__atomic_fetch_add(&word, 0x10000u, __ATOMIC_SEQ_CST)", "stall()", "ld(&word)", "word"),
])
def test_a_wait_whose_value_lives_in_a_slot_across_the_back_edge(tmp_path, head, faa, pause, load, location, opt):
    result = _instrument(tmp_path, TICKET.format(faa=faa, pause=pause, load=load), opt, head=head)
    assert _waits(result) == ["(%s & 0xffff) == a value fixed before the loop" % location], result.ir_text
    assert "__rsan_spin_load_mask_4(ptr " in result.ir_text


@pytest.mark.parametrize("body", [
    # the loop also writes shared memory on each failed attempt
    "void lock(unsigned t) { unsigned pos = 0; while (pos != t) { plain++; pos = atomic_load(&w) & 0xffff; } }",
    # a counter of the failed attempts also decides the exit
    "void lock(unsigned t) { unsigned pos = 0; int n = 0;\n"
    "  while (pos != t && n < 10) { n++; pos = atomic_load(&w) & 0xffff; } }",
    # the previous attempt's value reaches the code after the loop
    "unsigned lock(unsigned t) { unsigned pos = 0, prev = 0;\n"
    "  while (pos != t) { prev = pos; pos = atomic_load(&w) & 0xffff; } return prev; }",
    # the compared value is computed from the read with something the loop changes
    "void lock(unsigned t) { unsigned pos = 0, k = 0; while (pos != t) { k++; pos = (atomic_load(&w) & 0xff) + k; } }",
    # two reads of the word per attempt
    "void lock(unsigned t) { unsigned pos = 0;\n"
    "  while (pos != t) { pos = atomic_load(&w) & 0xffff; if (atomic_load(&l)) break; } }",
])
def test_near_misses_of_a_slot_kept_wait_stay_plain_loops(tmp_path, body):
    result = _instrument(tmp_path, body, "-O0")
    assert "__rsan_spin_load" not in result.ir_text
    assert result.loops == ()


# --- the address recomputed in each attempt from plain memory: left alone ---------------------

ANDERSON = ("struct slot { unsigned locked; char pad[60]; };\n"
            "struct alock { struct slot *slots; } al;\n"
            "void f(unsigned pos) { while (ld(&al.slots[pos].locked) == 1) stall(); }\n")


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_wait_whose_address_is_read_again_from_plain_memory_stays_asm(tmp_path, opt):
    """CK's anderson lock: the asm's memory clobber makes each attempt re-read `al.slots` with a
    plain load. A recognised attempt that fails disables its thread until its word is written
    (the controlled scheduler), so a change of `al.slots` alone would leave it waiting on the
    old slot (docs/toolchain.md §5.5): not a wait for one location."""
    result = _instrument(tmp_path, ANDERSON, opt, head=ASM_HEAD)
    assert result.loops == ()
    assert "__rsan_spin_load" not in result.ir_text


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_an_effect_of_every_attempt_before_a_deeper_read_is_no_exit(tmp_path, opt):
    """The header's exchange runs on every attempt: walked from the read's block it comes after
    the read, and must not pass for the merged TTAS loop's exit."""
    body = ("void f(unsigned t) { unsigned pos = 0;\n"
            "  while (atomic_exchange(&l, 1), pos != t) { pos = atomic_load(&w) & 0xffff; } }")
    result = _instrument(tmp_path, body, opt)
    assert "__rsan_spin_load" not in result.ir_text
    assert result.loops == ()
