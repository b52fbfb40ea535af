"""Spin-loop recognition (passes/spinloops.py, issue 3 item 3): the load of a loop that only
re-reads one atomic location until it equals a constant becomes __rsan_spin_load_N (one
attempt of a wait); every other loop keeps __rsan_load_N; an option turns it off."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from passes_helpers import ROOT, compile_to_ir, verify
from pyrsan.passes import instrument_ir

HEAD = "#include <stdatomic.h>\natomic_int f, g; atomic_llong big; atomic_char c; int plain;\n"
SPIN_RE = re.compile(
    r"call i64 @__rsan_spin_load_(\d)\(ptr @(\w+), i64 (-?\d+), i32 (\d+), i64 -?\d+\)")
LOAD_RE = re.compile(r"call i64 @__rsan_load_\d\(ptr @(\w+)")


@pytest.fixture(autouse=True)
def _default_environment(monkeypatch):
    monkeypatch.delenv("PYRSAN_NO_SPIN_LOOPS", raising=False)


def instrument(tmp_path, body: str, **kw):
    ir = compile_to_ir(tmp_path, HEAD + body)
    out = instrument_ir(ir, "spin", **kw).ir_text
    verify(out)
    return out


@pytest.mark.parametrize("body, expected", [
    ("void w(void) { while (atomic_load_explicit(&f, memory_order_acquire) != 1); }",
     [("4", "f", "1", "2")]),
    ("void w(void) { while (atomic_load(&big) != 7); }", [("8", "big", "7", "5")]),
    ("void w(void) { while (atomic_load_explicit(&f, memory_order_relaxed) != -1); }",
     [("4", "f", "-1", "0")]),
    ("void w(void) { do {} while (atomic_load_explicit(&c, memory_order_relaxed) != 3); }",
     [("1", "c", "3", "0")]),
    ("void w(void) { while (atomic_load_explicit(&f, memory_order_acquire) != 1);\n"
     "  while (atomic_load_explicit(&g, memory_order_acquire) != 2); }",
     [("4", "f", "1", "2"), ("4", "g", "2", "2")]),
])
def test_a_loop_that_waits_for_a_constant_becomes_spin_loads(tmp_path, body, expected):
    out = instrument(tmp_path, body)
    assert SPIN_RE.findall(out) == expected
    assert LOAD_RE.findall(out) == []


@pytest.mark.parametrize("body", [
    # leaves on any non-zero value: not a wait for one value
    "void w(void) { do {} while (!atomic_load(&f)); }",
    "void w(void) { while (atomic_load(&f) == 0); }",
    # other effects in the loop
    "void w(void) { while (atomic_load(&f) != 1) atomic_store(&g, 1); }",
    "void w(void) { while (atomic_load(&f) != 1) plain++; }",
    "void w(void) { while (atomic_load(&f) != atomic_load(&g)); }",
    "void s(void); void w(void) { while (atomic_load(&f) != 1) s(); }",
    # not a loop
    "int w(void) { return atomic_load(&f) == 1; }",
])
def test_other_loops_and_loads_are_left_alone(tmp_path, body):
    out = instrument(tmp_path, body)
    assert SPIN_RE.findall(out) == []
    assert "f" in LOAD_RE.findall(out)


SPIN = "void w(void) { while (atomic_load_explicit(&f, memory_order_acquire) != 1); }"


def test_recognition_can_be_turned_off(tmp_path, monkeypatch):
    assert SPIN_RE.findall(instrument(tmp_path, SPIN))
    assert not SPIN_RE.findall(instrument(tmp_path, SPIN, spin_loops=False))
    assert LOAD_RE.findall(instrument(tmp_path, SPIN, spin_loops=False)) == ["f"]
    monkeypatch.setenv("PYRSAN_NO_SPIN_LOOPS", "1")
    assert not SPIN_RE.findall(instrument(tmp_path, SPIN))
    assert SPIN_RE.findall(instrument(tmp_path, SPIN, spin_loops=True))


def test_cli_flag_turns_recognition_off(tmp_path, cli_env):
    ll = tmp_path / "w.ll"
    ll.write_text(compile_to_ir(tmp_path, HEAD + SPIN))
    env = {k: v for k, v in cli_env.items() if k != "PYRSAN_NO_SPIN_LOOPS"}
    texts = []
    for extra in ((), ("--no-spin-loops",)):
        out = tmp_path / "out.ll"
        r = subprocess.run([sys.executable, "-m", "pyrsan.passes", str(ll), "-o",
                            str(tmp_path / "w.o"), "--module-id", "m", "--emit-ll", str(out),
                            *extra], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        texts.append(out.read_text())
    assert SPIN_RE.findall(texts[0]) and not LOAD_RE.findall(texts[0])
    assert not SPIN_RE.findall(texts[1]) and LOAD_RE.findall(texts[1]) == ["f"]


BAR = ROOT / "testsuite" / "litmus" / "bar_spin.c"


@pytest.mark.parametrize("off", [False, True])
def test_bar_is_reported_only_without_recognition(tmp_path, off):
    """papers/002 §4.3: the plain spin-loop barrier BAR is not robust as written (a spinning
    load may read a stale 0), and is BARW(1,1) (robust) once its loops are waits."""
    pytest.importorskip("pyrsan.cli")
    env = dict(os.environ)
    env.pop("PYRSAN_NO_SPIN_LOOPS", None)
    if off:
        env["PYRSAN_NO_SPIN_LOOPS"] = "1"
    r = subprocess.run([sys.executable, "-m", "pyrsan", "run", "--runs", "20", str(BAR)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "both passed the barrier" in r.stdout
    if off:
        assert r.returncode != 0 and "robustness violation" in r.stderr, r.stderr[-2000:]
        assert re.search(r"bar_spin\.c:(15|23)", r.stderr), r.stderr[-2000:]
    else:
        assert r.returncode == 0 and "no robustness violation" in r.stderr, r.stderr[-2000:]


# --- the runtime entry point, driven through cffi (testsuite/runtime/harness.py) ----------



@pytest.fixture(scope="module")
def srt_lib():
    sys.path.insert(0, str(ROOT / "testsuite" / "runtime"))
    import cffi
    import harness
    ffi = cffi.FFI()
    ffi.cdef(harness.CDEF)
    return harness, ffi, ffi.dlopen(str(harness.build_engine_lib()))


@pytest.fixture
def srt(srt_lib, tmp_path):
    harness, ffi, lib = srt_lib
    r = harness.Runtime(ffi, lib, tmp_path)
    r.reset()
    yield harness, r
    getattr(lib, "__rsan_test_reset")()


@pytest.mark.parametrize("spin", [True, False])
def test_a_failed_spin_attempt_makes_no_event(srt, spin):
    """BAR run with t1 first: t1 stores x, reads y = 0, t2 stores y and reads x = 1. As plain
    loads, t1's read of 0 is an event and t2's read of x is flagged (papers/002 Ex. 4.2); as
    spin loads, t1's read of 0 is a failed attempt, and t2's successful read is not stale."""
    harness, rt = srt
    x, y = rt.var("x"), rt.var("y")
    new = getattr(rt.lib, "__rsan_test_new_thread")
    cur = getattr(rt.lib, "__rsan_test_set_current")
    main = new(rt.ffi.NULL)
    cur(main)
    t1, t2 = new(main), new(main)
    ld = [rt.site("ld", harness.line_of(k, 1), "t%d" % k) for k in (1, 2)]
    spin_load = getattr(rt.lib, "__rsan_spin_load_4")

    def read(p, site):
        return spin_load(p, 1, harness.ORDERS["rlx"], site) if spin else rt.load(p, "rlx", site)

    cur(t1)
    rt.store(x, 1, "rlx", rt.site("st", harness.line_of(1, 0), "t1"))
    assert read(y, ld[0]) == 0
    cur(t2)
    rt.store(y, 1, "rlx", rt.site("st", harness.line_of(2, 0), "t2"))
    assert read(x, ld[1]) == 1
    assert len(rt.reports()) == (0 if spin else 1)


@pytest.mark.parametrize("size", [1, 2, 4, 8])
def test_spin_load_returns_what_memory_holds_at_every_size(srt, size):
    harness, rt = srt
    p = rt.var("x")
    spin_load = getattr(rt.lib, "__rsan_spin_load_%d" % size)
    full = (1 << (8 * size)) - 1
    assert spin_load(p, 1, harness.ORDERS["acq"], 0) == 0
    rt.store(p, full, "rel", 0, size)
    # an expected value given sign-extended compares at the object's size
    assert spin_load(p, (1 << 64) - 1, harness.ORDERS["sc"], 0) == full
    assert spin_load(p, 3, harness.ORDERS["acq"], 0) == full
    assert rt.reports() == []
