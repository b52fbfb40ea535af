"""Differential tests: the runtime's verdict over all SC interleavings (explore.py) must
equal the reference model's (rc20.py) on fixed litmus programs and on random ones.

A disagreement is a bug in one of them: the failure message carries the program, the
model's witness graph or the runtime's schedule and report, for shrinking by hand."""
import random

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import rc20
from litmus_cases import CASES
from programs import random_program, show, strategy


def _explain(prog, sc, model, rt):
    lines = [f"sc_accesses={sc}", show(prog),
             f"model: robust={model.robust} ({model.graphs} RC20-consistent graphs)",
             f"runtime: robust={rt.robust} ({rt.runs} runs)"]
    if model.witness:
        lines.append(f"model witness (consistent, not SC): {model.witness}")
    if rt.schedule:
        lines.append(f"runtime schedule (thread, CAS outcome): {rt.schedule}")
        lines += [r.get("text", str(r)).strip() for r in rt.reports[:2]]
    return "\n".join(lines)


def _compare(engine, prog, sc):
    model = rc20.check(prog, sc)
    rt = engine.verdict(prog, sc)
    assert rt.robust == model.robust, _explain(prog, sc, model, rt)
    return model.robust


@pytest.mark.parametrize("name,prog,sc,expected", CASES, ids=[c[0] for c in CASES])
def test_runtime_agrees_with_model_on_litmus(engine, name, prog, sc, expected):
    assert _compare(engine, prog, sc) is expected


@st.composite
def _program_and_mode(draw):
    sc = draw(st.sampled_from(("fenced", "ra")))
    return draw(strategy(max_events=8, weak=True, sc=sc, sc_budget=4)), sc


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(_program_and_mode())
def test_runtime_agrees_with_model_on_random_programs(engine, case):
    prog, sc = case
    event(f"robust={_compare(engine, prog, sc)}")


def test_random_sample_has_both_verdicts(engine):
    """Guards the generator: a differential test that only ever sees robust programs
    (or only non-robust ones) would check half of the property."""
    rng = random.Random(7)
    verdicts = set()
    for _ in range(60):
        sc = rng.choice(("fenced", "ra"))
        verdicts.add(_compare(engine, random_program(rng, sc=sc), sc))
        if verdicts == {True, False}:
            break
    assert verdicts == {True, False}


def test_strong_cas_verdicts_equal_the_model(engine):
    """Strong CAS is checked exactly with value tracking (algorithm.md §4, architecture.md
    "Value tracking"): write-type when it can succeed reading a stale write of the expected
    value that ends a block of writes, read-type when it can fail reading a stale write of
    another value. No over-report and no miss against the model."""
    rng = random.Random(2024)
    agree = with_cas = nonrobust = 0
    for _ in range(80):
        sc = rng.choice(("fenced", "ra"))
        prog = random_program(rng, sc=sc, weak=False)
        if not any(op[0] == "cas" for t in prog for op in t):
            continue
        with_cas += 1
        model = rc20.check(prog, sc)
        rt = engine.verdict(prog, sc)
        assert rt.robust == model.robust, "strong CAS:\n" + _explain(prog, sc, model, rt)
        agree += 1
        nonrobust += not model.robust
    assert with_cas >= 20 and nonrobust >= 1


# The strong CAS of SB whose stale write (the initial 0) is the expected value but is
# followed by an RMW: the CAS cannot fail on it (strong) and an RMW cannot read it (atomicity:
# T1's fetch_add already reads it). The weak-CAS read check reported it (Tsc(x) > Tc(x)).
STRONG_CAS_AFTER_RMW = [[("rmw", "x", "add", 1, "ar"), ("ld", "y", "acq")],
                        [("st", "y", 1, "rel"), ("cas", "x", 0, 5, "ar", "acq", False)]]
# The same with a plain store: the CAS may succeed reading the stale 0 (write-type).
STRONG_CAS_AFTER_STORE = [[("st", "x", 1, "rel"), ("ld", "y", "acq")],
                          [("st", "y", 1, "rel"), ("cas", "x", 0, 5, "ar", "acq", False)]]


def test_strong_cas_with_every_stale_write_expected_and_taken_is_robust(engine):
    assert rc20.robust(STRONG_CAS_AFTER_RMW, "ra")
    assert engine.verdict(STRONG_CAS_AFTER_RMW, "ra").robust
    # the schedule the weak-CAS read check reported: T1 first, then T2
    assert engine.run(STRONG_CAS_AFTER_RMW, [(0, None), (0, None), (1, None), (1, False)], "ra") == 0


def test_strong_cas_that_can_succeed_on_a_stale_expected_value_is_a_write_violation(engine):
    assert not rc20.robust(STRONG_CAS_AFTER_STORE, "ra")
    v = engine.verdict(STRONG_CAS_AFTER_STORE, "ra", stop_at_first=False)
    assert not v.robust
    assert engine.run(STRONG_CAS_AFTER_STORE, [(0, None), (0, None), (1, None), (1, False)], "ra") == 1
    (r,) = engine.rt.reports()
    assert r["type"] == "write" and r["access"]["operation"] == "compare_exchange_strong"
    assert "note" not in r


def _barw(a, b, order):
    """RSAN paper §4.3: x := 1; wait(y = a) || y := 1; wait(x = b)."""
    store = {"rlx": "rlx", "acq": "rel", "sc": "sc"}[order]
    return [[("st", "x", 1, store), ("wait", "y", a, order)],
            [("st", "y", 1, store), ("wait", "x", b, order)]]


BARW = [(f"barw{a}{b}_{o}_{sc}", a, b, o, sc, expected)
        for (a, b, expected) in ((1, 1, True), (0, 2, True), (0, 0, False))
        for o in ("rlx", "acq") for sc in ("fenced", "ra")]


@pytest.mark.parametrize("name,a,b,order,sc,expected", BARW, ids=[c[0] for c in BARW])
def test_barw_verdicts_of_the_paper(engine, name, a, b, order, sc, expected):
    """BARW₁,₁ and BARW₀,₂ robust, BARW₀,₀ not (RSAN paper §4.3), in the model and the
    runtime; BARW₀,₀ is found although one wait blocks forever in every SC run."""
    prog = _barw(a, b, order)
    assert _compare(engine, prog, sc) is expected


def test_barw00_with_seq_cst_waits_is_robust_when_fenced_not_with_ra(engine):
    prog = _barw(0, 0, "sc")
    assert _compare(engine, prog, "fenced") is True
    assert _compare(engine, prog, "ra") is False


def test_barw00_is_reported_at_the_wait_that_blocks_forever(engine):
    prog = _barw(0, 0, "acq")
    # T1 runs to completion (its wait sees y = 0), then T2 stores y and blocks on x = 0
    assert engine.run(prog, [(0, None), (0, None), (1, None)], "ra") == 1
    (r,) = engine.rt.reports()
    assert r["type"] == "read" and r["access"]["operation"] == "wait"
    assert r["access"]["function"] == "t2" and r["location"]["name"] == "x"


def test_bcas_spin_lock_is_robust_and_a_stale_bcas_is_not(engine):
    lock = [("bcas", "l", 0, 1, "acq"), ("st", "d", 1, "rlx"), ("ld", "d", "rlx"), ("st", "l", 0, "rel")]
    assert _compare(engine, [lock[:], lock[:]], "ra") is True
    # SB where T2's second access is a BCAS(x, 0 -> 2): it may read the stale 0
    sb = [[("st", "x", 1, "rel"), ("ld", "y", "acq")],
          [("st", "y", 1, "rel"), ("bcas", "x", 0, 2, "ar")]]
    assert _compare(engine, sb, "ra") is False


@st.composite
def _blocking_program_and_mode(draw):
    sc = draw(st.sampled_from(("fenced", "ra")))
    weak = draw(st.booleans())
    return draw(strategy(max_events=7, weak=weak, sc=sc, sc_budget=4, blocking=True)), sc


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(_blocking_program_and_mode())
def test_runtime_agrees_with_model_on_random_programs_with_waits_and_bcas(engine, case):
    prog, sc = case
    event(f"robust={_compare(engine, prog, sc)}")


@st.composite
def _waitne_program(draw):
    """2-3 threads, at most 7 ops on x and y: relaxed / release stores of 1 or 2, relaxed /
    acquire loads, fetch_add, and waits for another value ("waitne", the loop
    `while (!atomic_load(&x));` passes/spinloops.py recognises: v = 0; or `== v` loops)."""
    nthreads = draw(st.integers(2, 3))
    total = draw(st.integers(nthreads + 1, 7))
    sizes = [1] * nthreads
    for _ in range(total - nthreads):
        sizes[draw(st.integers(0, nthreads - 1))] += 1
    var = st.sampled_from(("x", "y"))
    op = st.one_of(
        st.builds(lambda x, v, o: ("st", x, v, o), var, st.integers(1, 2), st.sampled_from(("rlx", "rel"))),
        st.builds(lambda x, o: ("ld", x, o), var, st.sampled_from(("rlx", "acq"))),
        st.builds(lambda x, o: ("rmw", x, "add", 1, o), var, st.sampled_from(("rlx", "ar"))),
        st.builds(lambda x, v, o: ("waitne", x, v, o), var, st.sampled_from((0, 0, 1)),
                  st.sampled_from(("rlx", "acq"))))
    prog = [[draw(op) for _ in range(n)] for n in sizes]
    assume(any(o[0] == "waitne" for t in prog for o in t))
    return prog


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture,
                                 HealthCheck.filter_too_much])
@given(_waitne_program(), st.sampled_from(("fenced", "ra")))
def test_runtime_spin_loads_agree_with_model_on_waits_for_another_value(engine, prog, sc):
    """__rsan_spin_load_ne_N (one attempt of wait(x != v)) against the model's waitne. A report
    must always be a model violation (soundness); a clean exploration must be a model proof,
    unless some run ended with a thread spinning for good on a waitne (never checked: the
    recognised loop's known miss), where the comparison is skipped."""
    model = rc20.check(prog, sc)
    rt = engine.verdict(prog, sc)
    if rt.robust and rt.blocked_spin:
        event("skipped: a run spins for good on a waitne")
        return
    assert rt.robust == model.robust, _explain(prog, sc, model, rt)
    event(f"robust={model.robust}")


def test_waitne_stale_write_of_another_value_is_found_and_the_stale_awaited_one_is_not(engine):
    """testsuite/passes/test_passes_spinloops.py's two programs, over every interleaving."""
    stale = [[("st", "f", 1, "rlx"), ("st", "f", 2, "rlx"), ("st", "z", 1, "rlx")],
             [("ld", "z", "rlx"), ("waitne", "f", 0, "rlx")]]
    clean = [[("st", "f", 1, "rlx"), ("st", "z", 1, "rlx")],
             [("ld", "z", "rlx"), ("waitne", "f", 0, "rlx")]]
    assert _compare(engine, stale, "fenced") is False
    assert _compare(engine, clean, "fenced") is True


def test_random_blocking_sample_has_both_verdicts(engine):
    rng = random.Random(11)
    verdicts = set()
    for _ in range(200):
        sc = rng.choice(("fenced", "ra"))
        prog = random_program(rng, sc=sc, blocking=True)
        if not any(op[0] in ("wait", "bcas") for t in prog for op in t):
            continue
        verdicts.add(_compare(engine, prog, sc))
        if verdicts == {True, False}:
            break
    assert verdicts == {True, False}


# Found by benchmarks/differential.py (shrunk by hand): with sc_accesses=fenced a seq_cst
# access is three engine steps (SC fence, access, SC fence). In the non-SC graph T2's
# leading fence comes before T1's fences and its trailing one after them, so T3 acquires
# x=1 without learning y=1 and T1 reads x=0: an SC run reaches it only if T2 is
# preempted between its leading fence and its store.
FENCED_SC_STORE = [[("st", "y", 1, "sc"), ("ld", "x", "rlx")],
                   [("st", "x", 1, "sc")],
                   [("ld", "x", "acq"), ("ld", "y", "rlx")]]


def test_fenced_sc_store_split_by_a_preemption_is_not_robust(engine):
    assert not rc20.robust(FENCED_SC_STORE, "fenced")
    assert not engine.verdict(FENCED_SC_STORE, "fenced", split_sc=True).robust


# The same program with each seq_cst access as ONE __rsan_* call, run on real threads: the
# violation is reached only because the engine makes a scheduling point after the leading
# SC fence and before the trailing one inside the call (rules.c rsan_fence_sc_step), where a
# controlled scheduler (sched=dfs/pct) can switch threads; explore.run_on_threads also checks
# that the engine's points are exactly the three steps.
def test_fenced_sc_store_violation_found_with_seq_cst_accesses_as_single_steps(engine):
    assert not engine.verdict(FENCED_SC_STORE, "fenced", split_sc=False).robust


def test_sb_violation_found_when_t1_runs_first_then_t2s_store(engine):
    """RSAN paper Ex. 3.2 schedule, and Ex. 3.1 with T1 run to completion first (the
    prediction of location clocks)."""
    sb = CASES[1][1]
    assert engine.run(sb, [(0, None), (0, None), (1, None), (1, None)], "fenced") > 0
    ex31 = next(c[1] for c in CASES if c[0] == "ex31_sb_variant_not_robust")
    assert engine.run(ex31, [(0, None)] * 3 + [(1, None)] * 3, "fenced") > 0
