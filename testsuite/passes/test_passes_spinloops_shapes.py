"""Spin-loop shapes of real lock-free code (issue 14 item 2, passes/spinloops.py): waits on some
bits of a word (Concurrency Kit's packed ticket lock, a status bit), a test-and-test-and-set
loop that -O2 merges with its exchange, and waits made of x86 `mov` asm loads (CK's default,
inline-asm mode). Each accepted shape has near misses that must stay plain loops."""
from __future__ import annotations

import re

import pytest

from passes_helpers import MASK_RE, instrument_spin

HEAD = ("#include <stdatomic.h>\n#include <stdint.h>\n"
        "atomic_uint w; atomic_ullong big; atomic_int l, other; unsigned plain;\n")
SPIN_RE = re.compile(r"call i64 @__rsan_spin_load_(ne_)?(\d)\(ptr @(\w+), i64 (%?[-\w.]+), i32 (\d+)")
LOAD_RE = re.compile(r"call i64 @__rsan_load_\d\(ptr @(\w+)")


@pytest.fixture(autouse=True)
def _default_environment(monkeypatch):
    monkeypatch.delenv("PYRSAN_NO_SPIN_LOOPS", raising=False)


def _instrument(tmp_path, body: str, opt: str, name: str = "t.c", head: str = HEAD):
    return instrument_spin(tmp_path, head + body, (opt,), name)


# --- masked waits: a pure function of the value read compared with a fixed value -----------

ACQ = "memory_order_acquire"


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("body, expected, described", [
    # a status bit: leaves once it is set
    ("void f(void) { while (!(atomic_load_explicit(&w, %s) & 4)) ; }" % ACQ,
     [("ne_", "4", "0", "4", "2")], "(w & 0x4) != 0"),
    # some bits equal to a constant, the loop with a pause (rotated at -O1: the peeled read too)
    ("void f(void) { while ((atomic_load_explicit(&w, %s) & 0xff00) != 0x300) "
     "__builtin_ia32_pause(); }" % ACQ, [("", "4", "768", "65280", "2")], "(w & 0xff00) == 768"),
    # the high half, shifted down: the constant is shifted up
    ("void f(void) { while ((atomic_load_explicit(&w, %s) >> 16) != 3) ; }" % ACQ,
     [("", "4", "196608", "4294901760", "2")], "(w & 0xffff0000) == 196608"),
    # the low byte of a 64-bit word (a cast)
    ("void f(void) { while ((unsigned char)atomic_load(&big) != 9) ; }",
     [("", "8", "9", "255", "5")], "(big & 0xff) == 9"),
])
def test_a_wait_on_some_bits_becomes_a_masked_spin_load(tmp_path, body, expected, described, opt):
    result = _instrument(tmp_path, body, opt)
    found = MASK_RE.findall(result.ir_text)
    assert found and set(found) == set(expected), result.ir_text
    assert LOAD_RE.findall(result.ir_text) == []
    assert [loop.describe().split("wait for ")[1][:-1] for loop in result.loops] == [described]


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_packed_ticket_wait_compares_the_low_half_with_the_ticket(tmp_path, opt):
    """CK's ticket lock: `pos = load(&w) & 0xffff` until it equals the ticket taken before."""
    body = ("void lock(void) { unsigned r = atomic_fetch_add(&w, 0x10000u); unsigned t = r >> 16;\n"
            "  while ((atomic_load_explicit(&w, %s) & 0xffff) != t) __builtin_ia32_pause(); }" % ACQ)
    result = _instrument(tmp_path, body, opt)
    found = MASK_RE.findall(result.ir_text)     # the loop's read, and the peeled first one
    assert len(found) == 2 and {(ne, size, mask, order) for ne, size, _, mask, order in found} == {
        ("", "4", "65535", "2")} and all(expected.startswith("%") for _, _, expected, _, _ in found)
    assert [loop.describe() for loop in result.loops] == [
        "spin loop at t.c:5 (wait for (w & 0xffff) == a value fixed before the loop)"]


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("body", [
    # the two halves of one read compared with each other (CK's ticket `locked` test)
    "int f(void) { for (;;) { unsigned v = atomic_load(&w); if ((v & 0xffff) == (v >> 16)) return 1; } }",
    # two different bit fields decide the exit: no one wait
    "void f(void) { unsigned v; do v = atomic_load(&w); while (!((v & 1) == 0 || (v >> 8) == 5)); }",
    # a signed shift and arithmetic on the value read
    "void f(int t) { while (((int)atomic_load(&w) >> 16) != t) ; }",
    "void f(unsigned t) { while (atomic_load(&w) + 1 != t) ; }",
    # compared with a value the loop changes
    "void f(void) { unsigned i = 0; while ((atomic_load(&w) & 0xff) != i++) ; }",
    # a 64-bit value shifted beyond 64 bits once the fixed value is shifted back
    "void f(unsigned long long t) { while ((atomic_load(&big) >> 32) != t) ; }",
    # the masked wait's loop also writes
    "void f(void) { while ((atomic_load(&w) & 0xff) != 3) plain++; }",
])
def test_near_misses_of_a_masked_wait_stay_plain_loops(tmp_path, body, opt):
    result = _instrument(tmp_path, body, opt)
    assert "__rsan_spin_load" not in result.ir_text
    assert result.loops == ()


# --- a test-and-test-and-set loop merged with its exchange -----------------------------------

TTAS = ("void lock(void) { for (;;) { while (atomic_load_explicit(&l, memory_order_relaxed)) ;\n"
        "  if (!atomic_exchange_explicit(&l, 1, memory_order_acquire)) return; } }")


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_a_ttas_loop_merged_with_its_exchange_waits_for_the_word_to_clear(tmp_path, opt):
    result = _instrument(tmp_path, TTAS, opt)
    assert SPIN_RE.findall(result.ir_text) == [("ne_", "4", "l", "0", "0")] or \
        SPIN_RE.findall(result.ir_text) == [("", "4", "l", "0", "0")]
    assert [loop.describe() for loop in result.loops] == ["spin loop at t.c:4 (wait for l == 0)"]
    assert "__rsan_rmw_4" in result.ir_text       # the exchange stays what it is


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_cpp_ttas_lock_is_recognised(tmp_path, opt):
    src = ("#include <atomic>\nstd::atomic<bool> f;\n"
           "void lock() { for (;;) { while (f.load(std::memory_order_relaxed)) {}\n"
           "  if (!f.exchange(true, std::memory_order_acquire)) return; } }\n")
    result = _instrument(tmp_path, src, opt, name="t.cpp", head="")
    assert [loop.describe() for loop in result.loops] == ["spin loop at t.cpp:3 (wait for f == 0)"]


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
@pytest.mark.parametrize("body", [
    # a read that sees the lock held also counts, in memory: a failed iteration writes
    "void lock(void) { for (;;) { if (atomic_load_explicit(&l, memory_order_relaxed)) {\n"
    "  atomic_fetch_add(&other, 1); continue; }\n"
    "  if (!atomic_exchange_explicit(&l, 1, memory_order_acquire)) return; } }",
    # the code after the read sees how often it failed (a counter carried by the loop)
    "int lock(void) { int n = 0; for (;;) { while (atomic_load_explicit(&l, memory_order_relaxed)) n++;\n"
    "  if (!atomic_exchange_explicit(&l, n, memory_order_acquire)) return n; } }",
    # an effect before the read: every iteration makes it
    "void lock(void) { for (;;) { atomic_fetch_add(&other, 1);\n"
    "  if (!atomic_load_explicit(&l, memory_order_relaxed)) return; } }",
    # compared with shared memory read in every iteration (volatile: not hoisted; a plain read
    # the optimiser hoists out of the loop, and the loop then waits for a fixed value)
    "volatile int vplain;\n"
    "void lock(void) { while (atomic_load_explicit(&l, memory_order_relaxed) != vplain) ; }",
    # a failed read makes a plain write now and then (a counter decides)
    "void lock(void) { int i = 0; while (atomic_load(&l) != 1) if (++i > 100) plain++; }",
    # both outcomes of the read reach an effect: no value is waited for
    "void lock(void) { for (;;) { if (atomic_load_explicit(&l, memory_order_relaxed)) atomic_store(&other, 1);\n"
    "  else if (!atomic_exchange(&l, 1)) return; } }",
])
def test_near_misses_of_a_merged_ttas_loop_are_not_waits(tmp_path, body, opt):
    result = _instrument(tmp_path, body, opt)
    assert SPIN_RE.findall(result.ir_text) == []
    assert result.loops == ()


# --- waits made of x86 asm loads (Concurrency Kit's default mode) ---------------------------

ASM_HEAD = HEAD + (
    "static inline unsigned ld(unsigned *p) { unsigned r;\n"
    "  __asm__ __volatile__(\"movl %1, %0\" : \"=q\"(r) : \"m\"(*p) : \"memory\"); return r; }\n"
    "static inline unsigned xchg(unsigned *p, unsigned v) {\n"
    "  __asm__ __volatile__(\"xchgl %0, %1\" : \"+m\"(*p), \"+q\"(v) : : \"memory\"); return v; }\n"
    "static inline void stall(void) { __asm__ __volatile__(\"pause\" ::: \"memory\"); }\n"
    "unsigned word, word2;\n")


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
@pytest.mark.parametrize("body, described", [
    ("void f(void) { while (ld(&word) == 1) stall(); }", "word != 1"),
    ("void f(unsigned t) { while ((ld(&word) & 0xffff) != t) stall(); }",
     "(word & 0xffff) == a value fixed before the loop"),
    # CK's fas lock: the read and the exchange in one loop
    ("void f(void) { while (xchg(&word, 1) == 1) { while (ld(&word) == 1) stall(); } }", "word != 1"),
])
def test_a_wait_made_of_asm_loads_becomes_a_spin_load(tmp_path, body, described, opt):
    result = _instrument(tmp_path, body, opt, head=ASM_HEAD)
    assert [loop.describe().split("wait for ")[1][:-1] for loop in result.loops] == [described]
    spins = re.findall(r"call i64 @__rsan_spin_load_(?:mask_)?(?:ne_)?4\(ptr @word,", result.ir_text)
    assert spins, result.ir_text
    # the loop's read is the spin load; no asm load of the word is left in the loop
    assert not re.search(r'asm sideeffect "movl \$1, \$0".*@word', result.ir_text)


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
@pytest.mark.parametrize("body", [
    # two asm loads of different words decide the exit
    "void f(void) { while (ld(&word) == 1 && ld(&word2) == 0) stall(); }",
    # an exchange of another word on every failed read
    "void f(void) { while (ld(&word) == 1) xchg(&word2, 1); }",
])
def test_near_misses_of_asm_waits_stay_asm(tmp_path, body, opt):
    result = _instrument(tmp_path, body, opt, head=ASM_HEAD)
    assert result.loops == ()
    assert "__rsan_spin_load" not in result.ir_text
    assert "__rsan_asm_begin" in result.ir_text     # modelled as atomic loads, one event each


# --- the runtime's masked spin load (rsan_interface.h), through cffi ---------------------------


@pytest.mark.parametrize("second_write, reported", [(False, False), (True, True)])
def test_a_masked_wait_is_stale_only_through_a_write_whose_bits_match(stale_wait, second_write, reported):
    """t1: f = 0x101; [f = 0x201;] z = 1 || t2: r = z; while ((f & 0xff) != 1); (relaxed), t1
    first. t2's read of z makes f's last write SC-visible but not hb-visible. Without the
    second write the only write with low byte 1 is the newest t2 knows of: not stale; with it,
    the wait may leave reading the stale 0x101, which matches as well: a stale read."""
    harness, rt, run = stale_wait
    spin = getattr(rt.lib, "__rsan_spin_load_mask_4")
    value, reports = run(0x101, 0x201 if second_write else None,
                         lambda f, site: spin(f, 1, 0xff, harness.ORDERS["rlx"], site))
    assert value == (0x201 if second_write else 0x101)
    assert len(reports) == (1 if reported else 0)
    if reported:
        assert reports[0]["type"] == "read" and reports[0]["access"]["operation"] == "wait"


def test_a_masked_wait_compares_only_the_masked_bits(srt):
    """Reads whose masked bits differ are failed attempts (no event, no check); a value with a
    bit outside the mask is never equal, and so any read leaves the != form."""
    harness, rt = srt
    f = rt.var("f")
    spin = getattr(rt.lib, "__rsan_spin_load_mask_4")
    spin_ne = getattr(rt.lib, "__rsan_spin_load_mask_ne_4")
    acq = harness.ORDERS["acq"]
    rt.store(f, 0x1234, "rel", 0)
    assert spin(f, 0x34, 0xff, acq, 0) == 0x1234
    assert spin(f, 0x1200, 0xff00, acq, 0) == 0x1234
    assert spin_ne(f, 0x1200, 0xff00, acq, 0) == 0x1234      # fails: returns what it saw
    assert spin_ne(f, 0x100, 0xff, acq, 0) == 0x1234        # 0x100 & ~0xff: never equal
    assert rt.reports() == []


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_cpp_masked_waits_through_std_atomic_are_recognised(tmp_path, opt):
    """A template's wait on the low half of a std::atomic<uint32_t> (at -O0 through the inlined
    accessor's stack slots), and a wait for a bit."""
    src = ("#include <atomic>\n#include <cstdint>\nstd::atomic<uint32_t> word;\n"
           "template <typename T> void wait_ticket(std::atomic<T> &w, T t) {\n"
           "  while ((w.load(std::memory_order_acquire) & 0xffff) != t) {}\n}\n"
           "void f(uint32_t t) { wait_ticket(word, t); }\n"
           "void g() { while (!(word.load(std::memory_order_acquire) & 0x80)) {} }\n")
    result = _instrument(tmp_path, src, opt, name="t.cpp", head="")
    assert [loop.describe().split("wait for ")[1][:-1].split(" & ")[1] for loop in result.loops] == [
        "0xffff) == a value fixed before the loop", "0x80) != 0"]
