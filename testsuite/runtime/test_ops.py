"""RMW and CAS: the values they compute and return, their clock updates and checks."""
import math
import struct

import pytest

from harness import Program, line_of, reports_over_all, run

M = {1: 0xFF, 2: 0xFFFF, 4: 0xFFFFFFFF, 8: 0xFFFFFFFFFFFFFFFF}


def sx(v, size):
    v &= M[size]
    return v - (1 << (8 * size)) if v >> (8 * size - 1) else v


# What each RMW operation stores, given the old value, the operand and the size in bytes
# (LLVM's atomicrmw semantics; m is the size's mask, sx sign-extends for the signed ones).
_REFERENCE = {
    "xchg": lambda old, v, m, size: v,
    "add": lambda old, v, m, size: (old + v) & m,
    "sub": lambda old, v, m, size: (old - v) & m,
    "and": lambda old, v, m, size: old & v,
    "nand": lambda old, v, m, size: ~(old & v) & m,
    "or": lambda old, v, m, size: old | v,
    "xor": lambda old, v, m, size: old ^ v,
    "max": lambda old, v, m, size: old if sx(old, size) >= sx(v, size) else v,
    "min": lambda old, v, m, size: old if sx(old, size) <= sx(v, size) else v,
    "umax": lambda old, v, m, size: max(old, v),
    "umin": lambda old, v, m, size: min(old, v),
    "uinc_wrap": lambda old, v, m, size: 0 if old >= v else old + 1,
    "udec_wrap": lambda old, v, m, size: v if (old == 0 or old > v) else old - 1,
    "usub_cond": lambda old, v, m, size: old - v if old >= v else old,
    "usub_sat": lambda old, v, m, size: old - v if old >= v else 0,
}


def reference(op, old, v, size):
    if op not in _REFERENCE:
        raise ValueError(op)
    return _REFERENCE[op](old, v, M[size], size)


INT_OPS = ["xchg", "add", "sub", "and", "nand", "or", "xor", "max", "min", "umax", "umin",
           "uinc_wrap", "udec_wrap", "usub_cond", "usub_sat"]
SAMPLES = [(0, 0), (1, 2), (2, 1), (0x7F, 1), (0x80, 0x7F), (-1, 1), (-2, -3), (5, 5), (0, 7), (-128, 3)]


@pytest.mark.parametrize("size", [1, 2, 4, 8])
@pytest.mark.parametrize("op", INT_OPS)
def test_integer_rmw_ops_compute_the_llvm_result_at_the_access_size(rt, op, size):
    p = rt.var("v")
    for old, v in SAMPLES:
        old &= M[size]
        v &= M[size]
        rt.store(p, old, size=size)
        got_old = rt.rmw(p, op, v, size=size)
        assert got_old == old
        assert rt.load(p, size=size) == reference(op, old, v, size), (op, size, old, v)
    # bytes beyond the access size are untouched
    if size < 8:
        p[0] = 0
        p[0] = 0xAB << (8 * size)
        rt.rmw(p, "sub", 1, size=size)
        assert p[0] >> (8 * size) == 0xAB


def fbits(x, size):
    return struct.unpack("<I", struct.pack("<f", x))[0] if size == 4 else struct.unpack("<Q", struct.pack("<d", x))[0]


def ffrom(b, size):
    return struct.unpack("<f", struct.pack("<I", b))[0] if size == 4 else struct.unpack("<d", struct.pack("<Q", b))[0]


@pytest.mark.parametrize("size", [4, 8])
def test_float_rmw_ops_work_on_float_and_double_bits(rt, size):
    p = rt.var("f")
    cases = [
        ("fadd", 1.5, 2.25, 3.75), ("fsub", 1.5, 2.25, -0.75),
        ("fmax", 1.0, 2.0, 2.0), ("fmin", 1.0, 2.0, 1.0),
        ("fmax", math.nan, 2.0, 2.0), ("fmin", 3.0, math.nan, 3.0),
        ("fmaximum", 1.0, math.nan, math.nan), ("fminimum", math.nan, 1.0, math.nan),
        ("fmaximum", -0.0, 0.0, 0.0), ("fminimum", 0.0, -0.0, -0.0),
    ]
    for op, old, v, want in cases:
        rt.store(p, fbits(old, size), size=size)
        got_old = rt.rmw(p, op, fbits(v, size), size=size)
        assert got_old == fbits(old, size)
        got = ffrom(rt.load(p, size=size), size)
        if math.isnan(want):
            assert math.isnan(got), (op, old, v)
        else:
            assert got == want and math.copysign(1, got) == math.copysign(1, want), (op, old, v, got)


@pytest.mark.parametrize("size", [1, 2, 4, 8])
def test_cas_returns_old_value_and_success_and_writes_only_on_success(rt, size):
    p = rt.var("c")
    rt.store(p, 5, size=size)
    assert rt.cas(p, 4, 9, size=size) == (5, 0)
    assert rt.load(p, size=size) == 5
    assert rt.cas(p, 5, M[size], size=size) == (5, 1)
    assert rt.load(p, size=size) == M[size]
    weak = rt.cas(p, M[size], 1, weak=True, size=size)
    assert weak[0] == M[size] and (weak[1] == 1) == (rt.load(p, size=size) == 1)


def test_release_sequence_through_an_rmw_is_robust(rt):
    # x=1; y=1 (rel) || y.fetch_add(1) (rlx) || a=y (acq); b=x
    prog = Program([("st", "x", 1, "rlx"), ("st", "y", 1, "rel")],
                   [("rmw", "y", "add", 1, "rlx")],
                   [("ld", "y", "acq"), ("ld", "x", "rlx")])
    n, bad = reports_over_all(rt, prog)
    assert n == 30 and bad == []


def test_a_plain_store_breaks_the_release_sequence_and_is_reported(rt):
    prog = Program([("st", "x", 1, "rlx"), ("st", "y", 1, "rel")],
                   [("st", "y", 2, "rlx")],
                   [("ld", "y", "acq"), ("ld", "x", "rlx")])
    res = run(rt, prog, (0, 0, 1, 2, 2))
    assert [r["location"]["name"] for r in res.reports] == ["x"]


def test_rmw_is_write_checked_like_a_store(rt):
    # 2+2W with the last store an RMW: reported as a write violation of the fetch_add
    prog = Program([("st", "x", 1, "rlx"), ("st", "y", 2, "rlx")],
                   [("st", "y", 1, "rlx"), ("rmw", "x", "add", 2, "rlx")])
    res = run(rt, prog, prog.sequential())
    assert len(res.reports) == 1
    r = res.reports[0]
    assert r["type"] == "write" and r["access"]["operation"] == "fetch_add"
    assert r["previous"]["initial"] is True and r["timestamps"] == {"hb": 0, "sc": 1}


def test_rmw_does_not_count_as_a_non_rmw_write_for_the_write_check(rt):
    # x only ever sees RMWs: its non-RMW write count stays 0, so the write check (U clocks)
    # can never fire at x, whatever happens at y
    prog = Program([("rmw", "x", "add", 1, "rlx"), ("st", "y", 1, "rlx")],
                   [("st", "y", 2, "rlx"), ("rmw", "x", "add", 1, "rlx")])
    for sched in prog.interleavings():
        res = run(rt, prog, sched)
        assert [r for r in res.reports if r["location"].get("name") == "x"] == []


def mp_cas(fail):
    # x=1; y=1 (rel) || cas(y, 5 -> 6, acq, fail) (always fails); b=x
    return Program([("st", "x", 1, "rlx"), ("st", "y", 1, "rel")],
                   [("cas", "y", 5, 6, "acq", fail, False), ("ld", "x", "rlx")])


def test_failed_cas_uses_the_failure_order(rt):
    res = run(rt, mp_cas("rlx"), (0, 0, 1, 1))
    assert [r["location"]["name"] for r in res.reports] == ["x"]
    n, bad = reports_over_all(rt, mp_cas("acq"))
    assert n == 6 and bad == []


def test_successful_cas_acquires_with_the_success_order(rt):
    prog = Program([("st", "x", 1, "rlx"), ("st", "y", 1, "rel")],
                   [("cas", "y", 1, 2, "acq", "rlx", False), ("ld", "x", "rlx")])
    n, bad = reports_over_all(rt, prog)
    assert n == 6 and bad == []
    prog_rlx = Program([("st", "x", 1, "rlx"), ("st", "y", 1, "rel")],
                       [("cas", "y", 1, 2, "rlx", "rlx", False), ("ld", "x", "rlx")])
    res = run(rt, prog_rlx, (0, 0, 1, 1))
    assert res.values[(2, 0)] == (1, 1)
    assert [r["location"]["name"] for r in res.reports] == ["x"]


@pytest.mark.parametrize("weak", [False, True])
def test_cas_is_checked_and_a_strong_cas_check_is_exact_without_a_note(rt, weak):
    # SB with T2's load replaced by a CAS(x, 0 -> 2) on x: a weak CAS may fail reading the
    # stale 0 (read check); a strong one may succeed reading it (value tracking, write-type)
    prog = Program([("st", "x", 1, "rlx"), ("ld", "y", "rlx")],
                   [("st", "y", 1, "rlx"), ("cas", "x", 0, 2, "rlx", "rlx", weak)])
    res = run(rt, prog, (0, 0, 1, 1))
    assert len(res.reports) == 1
    r = res.reports[0]
    assert r["type"] == ("read" if weak else "write") and r["access"]["line"] == line_of(2, 1)
    assert r["access"]["operation"] == ("compare_exchange_weak" if weak else "compare_exchange_strong")
    assert "note" not in r and "value tracking off" not in r["text"]
