"""Spin-loop recognition (passes/spinloops.py, issue 3 item 3): the load of a loop that only
re-reads one atomic location until it equals a constant becomes __rsan_spin_load_N (one
attempt of a wait); every other loop keeps __rsan_load_N; an option turns it off."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from passes_helpers import ROOT, compile_to_ir, verify
from pyrsan.passes import instrument_ir

HEAD = "#include <stdatomic.h>\natomic_int f, g; atomic_llong big; atomic_char c; int plain;\n"
SPIN_RE = re.compile(
    r"call i64 @__rsan_spin_load_(ne_)?(\d)\(ptr @(\w+), i64 (-?\d+), i32 (\d+), i64 -?\d+\)")
BCAS_RE = re.compile(
    r"call void @__rsan_bcas_(\d)\(ptr @(\w+), i64 (-?\d+), i64 (-?\d+), i32 (\d+), i64 -?\d+\)")
LOAD_RE = re.compile(r"call i64 @__rsan_load_\d\(ptr @(\w+)")
CAS_RE = re.compile(r"call \{ i64, i64 \} @__rsan_cas_\d\(ptr @(\w+)")
OPT_LEVELS = pytest.mark.parametrize("opt", ["-O0", "-O1"])


@pytest.fixture(autouse=True)
def _default_environment(monkeypatch):
    monkeypatch.delenv("PYRSAN_NO_SPIN_LOOPS", raising=False)


def instrument_result(tmp_path, body: str, opt: str = "-O1", name: str = "t.c", head=HEAD, **kw):
    ir = compile_to_ir(tmp_path, head + body, name=name, flags=(opt,))
    result = instrument_ir(ir, "spin", **kw)
    verify(result.ir_text)
    return result


def instrument(tmp_path, body: str, opt: str = "-O1", **kw):
    return instrument_result(tmp_path, body, opt, **kw).ir_text


# (ne_, size, object, constant, order) of each spin load
@OPT_LEVELS
@pytest.mark.parametrize("body, expected", [
    ("void w(void) { while (atomic_load_explicit(&f, memory_order_acquire) != 1); }",
     [("", "4", "f", "1", "2")]),
    ("void w(void) { while (atomic_load(&big) != 7); }", [("", "8", "big", "7", "5")]),
    ("void w(void) { while (atomic_load_explicit(&f, memory_order_relaxed) != -1); }",
     [("", "4", "f", "-1", "0")]),
    ("void w(void) { do {} while (atomic_load_explicit(&c, memory_order_relaxed) != 3); }",
     [("", "1", "c", "3", "0")]),
    ("void w(void) { while (atomic_load_explicit(&f, memory_order_acquire) != 1);\n"
     "  while (atomic_load_explicit(&g, memory_order_acquire) != 2); }",
     [("", "4", "f", "1", "2"), ("", "4", "g", "2", "2")]),
    # loops that leave on any value but one: wait(f != C), checked exactly by the runtime
    ("void w(void) { while (!atomic_load(&f)); }", [("ne_", "4", "f", "0", "5")]),
    ("void w(void) { do {} while (!atomic_load(&f)); }", [("ne_", "4", "f", "0", "5")]),
    ("void w(void) { while (atomic_load_explicit(&f, memory_order_acquire) == 0); }",
     [("ne_", "4", "f", "0", "2")]),
    ("void w(void) { while (atomic_load_explicit(&f, memory_order_relaxed) == 5); }",
     [("ne_", "4", "f", "5", "0")]),
    # the value read is used after the loop: only the last (successful) read matters
    ("int w(void) { int v; while ((v = atomic_load(&f)) == 0); return v; }",
     [("ne_", "4", "f", "0", "5")]),
])
def test_a_loop_that_waits_for_a_value_becomes_spin_loads(tmp_path, body, expected, opt):
    out = instrument(tmp_path, body, opt)
    assert SPIN_RE.findall(out) == expected
    assert LOAD_RE.findall(out) == []


@OPT_LEVELS
@pytest.mark.parametrize("body, expected", [
    ("void w(void) { int e = 0; while (!atomic_compare_exchange_strong(&f, &e, 1)) e = 0; }",
     [("4", "f", "0", "1", "5")]),
    ("void w(void) { long long e = 2; while (!atomic_compare_exchange_weak_explicit(&big, &e, 3,"
     " memory_order_acquire, memory_order_relaxed)) e = 2; }", [("8", "big", "2", "3", "2")]),
    ("void w(void) { char e = 1; while (!atomic_compare_exchange_weak_explicit(&c, &e, 0,"
     " memory_order_release, memory_order_relaxed)) e = 1; }", [("1", "c", "1", "0", "3")]),
])
def test_a_cas_retry_loop_with_constant_operands_becomes_one_bcas(tmp_path, body, expected, opt):
    out = instrument(tmp_path, body, opt)
    assert BCAS_RE.findall(out) == expected
    assert CAS_RE.findall(out) == [] and "cmpxchg" not in out


@pytest.mark.parametrize("body, expected", [
    ("#include <atomic>\nstd::atomic<int> f;\nvoid w() { while (f.load() != 1); }",
     "spin loop at t.cpp:3 (wait for f == 1)"),
    ("#include <atomic>\nstd::atomic<int> f;\nvoid w() { while (!f.load(std::memory_order_acquire)); }",
     "spin loop at t.cpp:3 (wait for f != 0)"),
    ("#include <atomic>\nstd::atomic<int> x;\n"
     "void w() { int e = 0; while (!x.compare_exchange_weak(e, 1)) e = 0; }",
     "CAS retry loop at t.cpp:3 (bcas x: 0 -> 1)"),
])
def test_cpp_loops_are_recognised_and_listed_at_the_source_line(tmp_path, body, expected):
    result = instrument_result(tmp_path, body, name="t.cpp", head="")
    assert [loop.describe() for loop in result.loops] == [expected]


def test_the_result_lists_each_recognised_loop_with_its_source_line(tmp_path):
    body = ("void w(void) {\n"
            "  while (atomic_load(&f) != 1);\n"
            "  while (!atomic_load(&g));\n"
            "  int e = 0;\n"
            "  while (!atomic_compare_exchange_strong(&f, &e, 1)) e = 0;\n"
            "  while (atomic_load(&g) != 3) plain++;\n"
            "}\n")
    result = instrument_result(tmp_path, body)
    assert [loop.describe() for loop in result.loops] == [
        "spin loop at t.c:4 (wait for f == 1)",
        "spin loop at t.c:5 (wait for g != 0)",
        "CAS retry loop at t.c:7 (bcas f: 0 -> 1)",
    ]
    assert instrument_result(tmp_path, body, spin_loops=False).loops == ()


@OPT_LEVELS
@pytest.mark.parametrize("body", [
    # leaves on two values, or on an order comparison: not a wait for one value
    "void w(void) { int v; while ((v = atomic_load(&f)) != 1 && v != 2); }",
    "void w(void) { while (atomic_load(&f) < 3); }",
    # other effects in the loop: a store, a plain access, another atomic, a call, a counter
    "void w(void) { while (atomic_load(&f) != 1) atomic_store(&g, 1); }",
    "void w(void) { while (atomic_load(&f) != 1) plain++; }",
    "void w(void) { while (atomic_load(&f) != atomic_load(&g)); }",
    "void s(void); void w(void) { while (atomic_load(&f) != 1) s(); }",
    "void w(void) { int n = 0; while (atomic_load(&f) != 1) n++; plain = n; }",
    # not a loop
    "int w(void) { return atomic_load(&f) == 1; }",
])
def test_other_loops_and_loads_are_left_alone(tmp_path, body, opt):
    result = instrument_result(tmp_path, body, opt)
    assert SPIN_RE.findall(result.ir_text) == [] and result.loops == ()
    assert "f" in LOAD_RE.findall(result.ir_text)


@OPT_LEVELS
@pytest.mark.parametrize("body", [
    # the expected value changes between attempts (the classic increment loop)
    "void w(void) { int e = 0; while (!atomic_compare_exchange_strong(&f, &e, e + 1)); }",
    # the failed CAS writes the value read into e, and the next attempt expects it
    "void w(void) { int e = 0; while (!atomic_compare_exchange_strong(&f, &e, 1)); }",
    # other effects: a plain store, a counter used after the loop, another atomic
    "void w(void) { int e = 0; while (!atomic_compare_exchange_strong(&f, &e, 1)) { e = 0; plain++; } }",
    "void w(void) { int e = 0, k = 0; while (!atomic_compare_exchange_strong(&f, &e, 1)) { e = 0; k++; }"
    " plain = k; }",
    "void w(void) { int e = 0; while (!atomic_compare_exchange_strong(&f, &e, 1)) { e = 0;"
    " atomic_store(&g, 1); } }",
    # leaves on the old value too
    "void w(void) { int e = 0; while (!atomic_compare_exchange_strong(&f, &e, 1)) { if (e == 7) break;"
    " e = 0; } }",
])
def test_other_cas_loops_are_left_alone(tmp_path, body, opt):
    result = instrument_result(tmp_path, body, opt)
    assert BCAS_RE.findall(result.ir_text) == [] and result.loops == ()
    assert "f" in CAS_RE.findall(result.ir_text)


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
def test_bar_is_reported_only_without_recognition(tmp_path, off, pyrsan_env):
    """RSAN paper §4.3: the plain spin-loop barrier BAR is not robust as written (a spinning
    load may read a stale 0), and is BARW(1,1) (robust) once its loops are waits."""
    pytest.importorskip("pyrsan.cli")
    env = dict(pyrsan_env)   # this checkout's pyrsan
    env.pop("PYRSAN_NO_SPIN_LOOPS", None)
    if off:
        env["PYRSAN_NO_SPIN_LOOPS"] = "1"
    # a controlled scheduler: the OS one rarely lets the two spinning threads overlap
    r = subprocess.run([sys.executable, "-m", "pyrsan", "run", "-v", "--sched", "random", "--seed", "1",
                        "--runs", "20", str(BAR)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert "both passed the barrier" in r.stdout
    listed = re.findall(r"^pyrsan: spin loop at (bar_spin\.c:\d+) \((.*)\)$", r.stderr, re.M)
    if off:
        assert r.returncode != 0 and "robustness violation" in r.stderr, r.stderr[-2000:]
        assert re.search(r"bar_spin\.c:(15|23)", r.stderr), r.stderr[-2000:]
        assert not listed and "no spin loop or CAS retry loop recognised" in r.stderr
    else:
        assert r.returncode == 0 and "no robustness violation" in r.stderr, r.stderr[-2000:]
        assert listed == [("bar_spin.c:15", "wait for y == 1"), ("bar_spin.c:23", "wait for x == 1")]


def test_build_verbose_lists_the_loops_at_every_opt_level(tmp_path, pyrsan_env):
    pytest.importorskip("pyrsan.cli")
    source = tmp_path / "loops.c"
    source.write_text(HEAD + "int main(void) {\n"
                      "  while (!atomic_load(&f));\n"
                      "  int e = 0;\n"
                      "  while (!atomic_compare_exchange_weak(&g, &e, 1)) e = 0;\n"
                      "  return 0;\n}\n")
    env = dict(pyrsan_env)
    env.pop("PYRSAN_NO_SPIN_LOOPS", None)
    for opt in ("-O0", "-O1"):
        r = subprocess.run([sys.executable, "-m", "pyrsan", "build", "-v", opt, str(source),
                            "-o", str(tmp_path / "a.out")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert r.stderr.splitlines() == [
            "pyrsan: spin loop at loops.c:4 (wait for f != 0)",
            "pyrsan: CAS retry loop at loops.c:6 (bcas g: 0 -> 1)"], r.stderr


# --- the runtime entry point, driven through cffi (testsuite/runtime/harness.py) ----------



@pytest.mark.parametrize("spin", [True, False])
def test_a_failed_spin_attempt_makes_no_event(srt, spin):
    """BAR run with t1 first: t1 stores x, reads y = 0, t2 stores y and reads x = 1. As plain
    loads, t1's read of 0 is an event and t2's read of x is flagged (RSAN paper Ex. 4.2); as
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


@pytest.mark.parametrize("second_write, reported", [(False, False), (True, True)])
def test_a_wait_for_another_value_is_stale_only_through_a_write_of_another_value(
        stale_wait, second_write, reported):
    """t1: f = 1; [f = 2;] z = 1 || t2: r = z; while (!f); (all relaxed), t1 first. t2's read
    of z = 1 makes f = 1 (or 2) SC-visible but not hb-visible. Waiting for f != 0, the stale
    initial 0 is only a failed attempt (testsuite/reference: robust), whereas after f = 2 the
    loop may leave reading the stale f = 1 (the reference model: not robust)."""
    harness, rt, run = stale_wait
    spin_ne = getattr(rt.lib, "__rsan_spin_load_ne_4")
    value, reports = run(1, 2 if second_write else None,
                         lambda f, site: spin_ne(f, 0, harness.ORDERS["rlx"], site))
    assert value == (2 if second_write else 1)
    assert len(reports) == (1 if reported else 0)
    if reported:
        assert reports[0]["type"] == "read" and reports[0]["access"]["operation"] == "wait"


def test_a_failed_wait_for_another_value_makes_no_event(srt):
    """Reading the value the loop waits to change is a failed attempt: no event, no check."""
    harness, rt = srt
    f = rt.var("f")
    spin_ne = getattr(rt.lib, "__rsan_spin_load_ne_4")
    assert spin_ne(f, 0, harness.ORDERS["sc"], 0) == 0
    rt.store(f, 7, "rel", 0)
    assert spin_ne(f, 0, harness.ORDERS["acq"], 0) == 7
    assert spin_ne(f, 7, harness.ORDERS["acq"], 0) == 7   # would fail: returns what it saw
    assert rt.reports() == []


def test_the_reference_model_agrees_with_the_wait_for_another_value_verdicts():
    """The two programs of the test above in the reference model (testsuite/reference)."""
    import rc20
    for second_write, robust in ((False, True), (True, False)):
        t1 = [("st", "f", 1, "rlx")] + ([("st", "f", 2, "rlx")] if second_write else []) + [
            ("st", "z", 1, "rlx")]
        t2 = [("ld", "z", "rlx"), ("waitne", "f", 0, "rlx")]
        assert rc20.robust([t1, t2]) is robust
        # as a plain load, the first is MP: not robust
        assert rc20.robust([t1, [("ld", "z", "rlx"), ("ld", "f", "rlx")]]) is False
