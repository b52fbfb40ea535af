"""The explorer's dependency relation against the robustness monitor itself (issue 15).

test_dpor_model.py checks that the DPOR core runs every class of *its own* relation. This file
checks the relation: on random small straight-line programs with seq_cst accesses
(sc_accesses=fenced: SC fence, access, SC fence, three steps) and SC fences, the engine's
reports over the runs the explorer makes are exactly those over every interleaving (brute
force), and the verdict is the RC20 oracle's (testsuite/reference/rc20.py). A relation that
called two monitor-visible operations independent (e.g. any two SC fences, or a seq_cst access
as one step, docs/scheduling.md "SC fences: when two commute") loses reports here.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from pyrsan.explore import explore

from . import lc_model
from .program_model import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import rc20  # noqa: E402
from explore import Engine, split_fenced  # noqa: E402
import harness  # noqa: E402  (testsuite/runtime: explore puts it on the path)
from programs import random_op  # noqa: E402


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return Engine(tmp_path_factory.mktemp("rsan-dpor-monitor"))


def model_ops(split):
    """The scheduler's view of split_fenced's steps: (kind, location, writes)."""
    out = []
    for ops in split:
        thread = []
        for op in ops:
            if op[0] == "fence":
                thread.append(("fence_sc" if op[1] == "sc" else "fence", "0x0", False))
            elif op[0] == "ld":
                thread.append(("load", op[1], False))
            else:
                thread.append(("store" if op[0] == "st" else "rmw", op[1], True))
        out.append(tuple(thread))
    return tuple(out)


def random_program(rng: random.Random, max_steps: int, rereads: float = 0.0):
    """2-3 threads of loads, stores, RMWs (no CAS: the control flow must not depend on values)
    and fences, seq_cst accesses likely; at most max_steps steps after lowering. ``rereads``:
    the chance that a load is followed by the same load again (a spin loop's re-read, which
    leaves the thread's clocks as they were: the SC fence after it can be clean)."""
    while True:
        nthreads = rng.choice((2, 2, 3))
        threads = []
        for _ in range(nthreads):
            ops = []
            for _ in range(rng.randint(1, 3)):
                op = random_op(rng, rng.choice((1, 2, 2)), weak=False)
                while op[0] == "cas":
                    op = random_op(rng, 2, weak=False)
                if op[0] != "fence" and rng.random() < 0.4:   # more seq_cst accesses
                    op = op[:-1] + ("sc",)
                ops.append(op)
                if op[0] == "ld" and rng.random() < rereads:
                    ops.append(op)
            threads.append(ops)
        if sum(map(len, split_fenced(threads))) <= max_steps:
            return threads


def signature(engine) -> frozenset:
    return frozenset((r["type"], r["access"]["thread"], r["access"]["line"]) for r in engine.rt.reports())


def reports_of(engine, split, decisions) -> frozenset:
    engine.run(split, [(t, None) for t in decisions], "fenced")
    return signature(engine)


def brute_force(engine, split) -> tuple[frozenset, int]:
    model = model_ops(split)
    found: set = set()
    runs = 0

    def walk(prefix):
        nonlocal runs
        pos = [0] * len(model)
        for t in prefix:
            pos[t] += 1
        live = [t for t in range(len(model)) if pos[t] < len(model[t])]
        if not live:
            runs += 1
            found.update(reports_of(engine, split, prefix))
            return
        for t in live:
            walk(prefix + (t,))

    walk(())
    return frozenset(found), runs


def engine_labels(engine, split):
    """The runtime's clean-fence labels (sched_fence.c): after the steps done, the threads
    whose next step is an SC fence that the engine calls clean."""
    memo: dict = {}

    def clean(done: tuple) -> frozenset:
        if done not in memo:
            engine.run(split, [(t, None) for t in done], "fenced")
            pos = [done.count(k) for k in range(len(split))]
            memo[done] = frozenset(
                k for k, ops in enumerate(split)
                if pos[k] < len(ops) and ops[pos[k]] == ("fence", "sc")
                and engine.lib.__rsan_test_fence_sc_clean(engine.threads[k]))
        return memo[done]
    return clean


def explored(engine, split, labels=None) -> tuple[frozenset, int]:
    """``labels``: the clean-fence labels (default: the engine's own)."""
    model = model_ops(split)
    found: set = set()
    clean = labels(split) if labels else engine_labels(engine, split)

    def run(prefix, sleep):
        trace = simulate(model, prefix, sleep, clean)
        return trace, reports_of(engine, split, trace.decisions)

    def on_run(prefix, trace, reports):
        found.update(reports)
        return False

    result = explore(run, on_run=on_run, sleep_aware=True)
    assert result.complete
    return frozenset(found), result.schedules


def check(engine, program, labels=None):
    split = split_fenced(program)
    expected, interleavings = brute_force(engine, split)
    found, schedules = explored(engine, split, labels)
    assert found == expected, (program, expected - found)
    assert (not found) == rc20.robust(program, "fenced"), program
    assert schedules <= interleavings
    return schedules, interleavings


# test_differential.py FENCED_SC_STORE: T2's seq_cst store is reported only in runs that
# preempt T2 between its leading fence and its store (a seq_cst access run as one step misses it).
FENCED_SC_STORE = [[("st", "y", 1, "sc"), ("ld", "x", "rlx")],
                   [("st", "x", 1, "sc")],
                   [("ld", "x", "acq"), ("ld", "y", "rlx")]]


def test_split_seq_cst_store_violation_is_found_by_the_explorer(engine):
    schedules, interleavings = check(engine, FENCED_SC_STORE)
    assert schedules < interleavings


def test_seq_cst_store_buffering_is_proved_with_clean_fences_commuting(engine):
    """SB with seq_cst accesses: every leading fence after a trailing one is clean."""
    sb = [[("st", "x", 1, "sc"), ("ld", "y", "sc")], [("st", "y", 1, "sc"), ("ld", "x", "sc")]]
    check(engine, sb)


@pytest.mark.parametrize("seed", range(8))
def test_explorer_finds_every_report_of_random_seq_cst_programs(engine, seed):
    rng = random.Random(1500 + seed)
    for _ in range(12):
        check(engine, random_program(rng, 9))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_explorer_finds_every_report_of_random_seq_cst_programs_long(engine, seed):
    rng = random.Random(9000 + seed)
    for _ in range(25):
        check(engine, random_program(rng, 11))


def syntactic_labels(split):
    """The old, narrower label: an SC fence right after an SC fence of its thread."""
    def clean(done: tuple) -> frozenset:
        pos = [done.count(k) for k in range(len(split))]
        return frozenset(k for k, ops in enumerate(split)
                         if 0 < pos[k] < len(ops) and ops[pos[k]] == ops[pos[k] - 1] == ("fence", "sc"))
    return clean


def test_a_fence_after_a_re_read_is_clean_and_saves_schedules(engine):
    """A seq_cst re-read (a spin loop's second iteration) leaves Ta and Tsc as they were: the
    trailing fence after it is clean, by the engine's label, and the explorer runs fewer
    schedules than with the old label; same reports as brute force either way."""
    spin = [[("ld", "y", "sc"), ("ld", "y", "sc")],
            [("st", "x", 1, "sc"), ("st", "y", 1, "sc")]]
    split = split_fenced(spin)
    # T1's steps: F ld(y) F | F ld(y) F; T2's: F st(x) F | F st(y) F
    engine.run(split, [(0, None)] * 5, "fenced")   # the fence after the re-read
    assert engine.lib.__rsan_test_fence_sc_clean(engine.threads[0])
    engine.run(split, [(0, None)] * 2, "fenced")   # the fence after its first (fresh) load
    assert not engine.lib.__rsan_test_fence_sc_clean(engine.threads[0])
    engine.run(split, [(1, None)] * 6 + [(0, None)] * 5, "fenced")   # y=1 before both loads
    assert engine.lib.__rsan_test_fence_sc_clean(engine.threads[0])
    # y=1 between, T2's trailing fence done: T1's leading fence brings y=1 into its clocks, so
    # the load makes no fact (docs/design/clocks.md §26) and the fence after it moves nothing into F
    engine.run(split, [(0, None)] * 3 + [(1, None)] * 6 + [(0, None)] * 2, "fenced")
    assert engine.lib.__rsan_test_fence_sc_clean(engine.threads[0])
    # y=1 between, T2's trailing fence not yet run: the load reads a write T1 does not know
    engine.run(split, [(0, None)] * 3 + [(1, None)] * 5 + [(0, None)] * 2, "fenced")
    assert not engine.lib.__rsan_test_fence_sc_clean(engine.threads[0])
    new, _ = check(engine, spin)
    old, _ = check(engine, spin, syntactic_labels)   # 92 and 102 of 924 interleavings
    assert new < old, (new, old)


def test_a_fence_after_a_fresh_read_is_not_clean(engine):
    """A read of a newer write makes a fact (and may acquire): the fence after it releases
    something F lacks."""
    prog = [[("ld", "x", "sc"), ("ld", "x", "sc")], [("st", "x", 1, "sc")]]
    split = split_fenced(prog)
    # T1: fence, ld x (0), fence, fence, then T2 stores x=1, then T1's re-read sees the new write
    engine.run(split, [(0, None)] * 4 + [(1, None)] * 3 + [(0, None)], "fenced")
    assert not engine.lib.__rsan_test_fence_sc_clean(engine.threads[0])
    engine.run(split, [(0, None)] * 5, "fenced")   # the same load again, no write between
    assert engine.lib.__rsan_test_fence_sc_clean(engine.threads[0])


def clean_unless_first(split):
    """A label too wide: every SC fence of a thread but its first is clean."""
    def clean(done: tuple) -> frozenset:
        pos = [done.count(k) for k in range(len(split))]
        return frozenset(k for k, ops in enumerate(split)
                         if 0 < pos[k] < len(ops) and ops[pos[k]] == ("fence", "sc"))
    return clean


# FENCED_SC_STORE with a relaxed load first in T1 and T2: their seq_cst stores' leading fences
# are no longer their first steps
LOADED_FENCED_SC_STORE = [[("ld", "z", "rlx"), ("st", "y", 1, "sc"), ("ld", "x", "rlx")],
                          [("ld", "z", "rlx"), ("st", "x", 1, "sc")],
                          [("ld", "x", "acq"), ("ld", "y", "rlx")]]


def clean_after_load(split):
    """A label too wide: an SC fence right after a load (e.g. the trailing fence of a seq_cst
    load) or after an SC fence is clean."""
    def clean(done: tuple) -> frozenset:
        pos = [done.count(k) for k in range(len(split))]
        return frozenset(k for k, ops in enumerate(split)
                         if 0 < pos[k] < len(ops) and ops[pos[k]] == ("fence", "sc")
                         and ops[pos[k] - 1][0] in ("fence", "ld"))
    return clean


# The trailing fence of a load exports what the load acquired, and that can decide a report:
# T1's seq_cst load of y=1 (written after z=1, both relaxed) gives T1 SC knowledge of z=1
# without hb knowledge (Wsc(y) holds z@1, W(y) does not); T2 reads z after an SC fence that
# follows a load, and makes the program's only report when that fence comes after T1's
# trailing fence in F. Not robust (RC20 oracle: T2 may read z=0 after reading through F that
# T1 saw y=1). With both fences called clean they commute, and the explorer, running T2's fence
# first, proves it robust.
ACQUIRED_GAP = [[("ld", "y", "sc")],
                [("ld", "w", "rlx"), ("fence", "sc"), ("ld", "z", "rlx")],
                [("st", "z", 1, "rlx"), ("st", "y", 1, "rlx")]]


def test_the_trailing_fence_of_a_load_can_decide_a_report(engine):
    """Refutes the label that calls every SC fence after a load clean (it survived 400 random
    programs and the two named ones): on ACQUIRED_GAP it loses the only report, a false proof.
    The engine's label keeps it."""
    split = split_fenced(ACQUIRED_GAP)
    expected, _ = brute_force(engine, split)
    assert expected and not rc20.robust(ACQUIRED_GAP, "fenced")
    found, _ = explored(engine, split, clean_after_load)
    assert not found
    check(engine, ACQUIRED_GAP)


def test_labels_that_call_too_many_sc_fences_clean_lose_reports(engine):
    """The check can fail: with every SC fence labelled clean, FENCED_SC_STORE's two reports
    are lost; with every fence but each thread's first, LOADED_FENCED_SC_STORE's are. The
    engine's labels keep them (check). Random programs of up to 10 steps did not tell the
    second label apart (300 of them), nor one that calls every SC fence after a load clean
    (400, refuted by ACQUIRED_GAP below): the label rests on the proof in
    docs/scheduling.md, not on this test alone."""
    def every_fence(split):
        def clean(done: tuple) -> frozenset:
            pos = [done.count(k) for k in range(len(split))]
            return frozenset(k for k, ops in enumerate(split) if pos[k] < len(ops) and ops[pos[k]] == ("fence", "sc"))
        return clean
    for program, label in ((FENCED_SC_STORE, every_fence), (LOADED_FENCED_SC_STORE, clean_unless_first)):
        split = split_fenced(program)
        expected, _ = brute_force(engine, split)
        found, _ = explored(engine, split, label)
        assert expected and not found, program
        check(engine, program)


@pytest.mark.parametrize("seed", range(6))
def test_explorer_finds_every_report_of_random_programs_with_re_reads(engine, seed):
    rng = random.Random(3100 + seed)
    for _ in range(10):
        check(engine, random_program(rng, 10, rereads=0.5))


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(30))
def test_explorer_finds_every_report_of_random_programs_with_re_reads_long(engine, seed):
    rng = random.Random(7100 + seed)
    for _ in range(25):
        check(engine, random_program(rng, 12, rereads=0.5))


# --- bigger programs: the rules in Python (lc_model.py), every interleaving by states ----------

def lc_signature(reports) -> frozenset:
    """lc_model's reports as signature() names them."""
    return frozenset((kind, t + 1, harness.line_of(t + 1, i)) for kind, t, i in reports)


def bigger_random_program(rng: random.Random, max_steps: int, sc_rate: float = 0.3):
    """2-4 threads of 1-4 operations (re-reads too), relaxed orders likelier in most programs
    (more of them have reports), at most max_steps steps after lowering; ``sc_rate``: the
    chance that an access is made seq_cst."""
    while True:
        nthreads = rng.randint(2, 4)
        bias = rng.random() < 0.6
        threads = []
        for _ in range(nthreads):
            ops = []
            for _ in range(rng.randint(1, 4)):
                op = random_op(rng, rng.choice((1, 2, 2)), weak=False, relaxed_bias=bias)
                while op[0] == "cas":
                    op = random_op(rng, 2, weak=False, relaxed_bias=bias)
                if op[0] != "fence" and rng.random() < sc_rate:
                    op = op[:-1] + ("sc",)
                ops.append(op)
                if op[0] == "ld" and rng.random() < 0.3:
                    ops.append(op)
            threads.append(ops)
        if sum(map(len, split_fenced(threads))) <= max_steps:
            return threads


def lc_explored(split) -> tuple[frozenset, int]:
    """The explorer over split with the runtime's labels, each run's reports by lc_model."""
    model = model_ops(split)
    clean = lc_model.clean_labels(split)
    found: set = set()

    def run(prefix, sleep):
        trace = simulate(model, prefix, sleep, clean)
        return trace, lc_model.run(split, trace.decisions).reports

    result = explore(run, on_run=lambda prefix, trace, reports: bool(found.update(reports)), sleep_aware=True,
                     max_schedules=10 ** 6)
    assert result.complete
    return frozenset(found), result.schedules


def test_the_python_rules_make_the_engines_reports(engine):
    """lc_model against the engine: every report of the named programs over all their
    interleavings, and the reports of random interleavings of random programs (consume,
    fences and re-reads included)."""
    for program in (FENCED_SC_STORE, LOADED_FENCED_SC_STORE, ACQUIRED_GAP):
        split = split_fenced(program)
        reports, _ = lc_model.all_reports(split)
        assert reports and lc_signature(reports) == brute_force(engine, split)[0]
    rng = random.Random(4200)
    reported = 0
    for n in range(100):
        split = split_fenced(bigger_random_program(rng, 12, 0.3 if n % 2 else 0.0))
        order = [t for t, ops in enumerate(split) for _ in ops]
        for _ in range(8):
            rng.shuffle(order)
            mine = lc_signature(lc_model.run(split, order).reports)
            assert mine == reports_of(engine, split, order), (split, order)
            reported += bool(mine)
    assert reported >= 10   # the comparison covers reports, not only their absence


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
def test_explorer_finds_every_report_of_bigger_random_programs(seed):
    """2-4 threads, up to 14 steps: the explorer's reports equal those of every interleaving
    (lc_model, states expanded once), on 100 programs per seed."""
    rng = random.Random(5300 + seed)
    reported = 0
    for _ in range(100):
        split = split_fenced(bigger_random_program(rng, 14))
        expected, _ = lc_model.all_reports(split)
        found, _ = lc_explored(split)
        assert found == expected, (split, expected - found)
        reported += bool(expected)
    assert reported


# --- the F-order closure (issue 15): SC fences independent, each run's class closed over F ---

def every_fence_clean(split):
    """The coarse relation: every pending SC fence labelled clean, so every two commute."""
    def clean(done: tuple) -> frozenset:
        pos = [done.count(k) for k in range(len(split))]
        return frozenset(k for k, ops in enumerate(split) if pos[k] < len(ops) and ops[pos[k]] == ("fence", "sc"))
    return clean


def lc_closed(split) -> tuple[frozenset, int, int, int]:
    """The explorer over the coarse relation (no two SC fences dependent), each run's reports
    replaced by its F-order closure (lc_model.class_reports): reports, schedules, the
    closures' states in all, and the schedules whose own reports were fewer than the closure's."""
    model = model_ops(split)
    clean = every_fence_clean(split)
    found: set = set()
    states = widened = 0

    def run(prefix, sleep):
        nonlocal states, widened
        trace = simulate(model, prefix, sleep, clean)
        closure, expanded = lc_model.class_reports(split, trace.decisions)
        states += expanded
        widened += closure != lc_model.run(split, trace.decisions).reports
        return trace, closure

    result = explore(run, on_run=lambda prefix, trace, reports: bool(found.update(reports)), sleep_aware=True,
                     max_schedules=10 ** 6)
    assert result.complete
    return frozenset(found), result.schedules, states, widened


def test_the_f_order_closure_keeps_the_reports_that_fence_orders_decide(engine):
    """FENCED_SC_STORE, LOADED_FENCED_SC_STORE and ACQUIRED_GAP each have a report that only
    some orders of their SC fences make: the coarse relation alone loses them (the run's own
    reports), the closure of each run finds them, and they are the engine's reports."""
    for program in (FENCED_SC_STORE, LOADED_FENCED_SC_STORE, ACQUIRED_GAP):
        split = split_fenced(program)
        expected, _ = lc_model.all_reports(split)
        assert lc_signature(expected) == brute_force(engine, split)[0]
        model = model_ops(split)
        clean = every_fence_clean(split)
        own: set = set()

        def run(prefix, sleep):
            trace = simulate(model, prefix, sleep, clean)
            return trace, lc_model.run(split, trace.decisions).reports

        explore(run, on_run=lambda prefix, trace, reports: bool(own.update(reports)), sleep_aware=True)
        assert own != expected, program   # the coarse relation alone loses a report
        found, schedules, _, widened = lc_closed(split)
        assert found == expected and widened, program


def test_the_f_order_closure_needs_fewer_schedules_on_seq_cst_shapes():
    """The litmus shapes with every access seq_cst: one schedule per rf/mo class of the real
    locations, against the orders of their SC fences with the clean-fence relation."""
    def sc(*threads):
        return [[(op[0], op[1], *op[2:], "sc") for op in t] for t in threads]
    wrc = sc([("st", "x", 1)], [("ld", "x"), ("st", "y", 1)], [("ld", "y"), ("ld", "x")])
    iriw = sc([("st", "x", 1)], [("st", "y", 1)], [("ld", "x"), ("ld", "y")], [("ld", "y"), ("ld", "x")])
    sb = sc([("st", "x", 1), ("ld", "y")], [("st", "y", 1), ("ld", "x")])
    for program, at_most in ((sb, 3), (wrc, 7), (iriw, 15)):
        split = split_fenced(program)
        found, schedules, _, _ = lc_closed(split)
        assert not found and schedules <= at_most, (schedules, at_most)
    _, old = lc_explored(split_fenced(sb))
    assert old > 10 * 3


@pytest.mark.parametrize("seed", range(4))
def test_the_f_order_closure_finds_every_report_of_random_programs(seed):
    rng = random.Random(8100 + seed)
    for _ in range(25):
        split = split_fenced(bigger_random_program(rng, 12, 0.5))
        expected, _ = lc_model.all_reports(split)
        found, _, _, _ = lc_closed(split)
        assert found == expected, (split, expected - found)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10))
def test_the_f_order_closure_finds_every_report_of_bigger_random_programs(seed):
    """2-4 threads, up to 14 steps, seq_cst accesses and SC fences: the coarse explorer with
    each run's F-order closure finds exactly the reports of every interleaving."""
    rng = random.Random(8300 + seed)
    reported = 0
    for n in range(100):
        split = split_fenced(bigger_random_program(rng, 14, 0.5 if n % 2 else 0.3))
        expected, _ = lc_model.all_reports(split)
        found, _, _, _ = lc_closed(split)
        assert found == expected, (split, expected - found)
        reported += bool(expected)
    assert reported
