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

from .program_model import simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import rc20  # noqa: E402
from explore import Engine, split_fenced  # noqa: E402
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


def random_program(rng: random.Random, max_steps: int):
    """2-3 threads of loads, stores, RMWs (no CAS: the control flow must not depend on values)
    and fences, seq_cst accesses likely; at most max_steps steps after lowering."""
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


def explored(engine, split) -> tuple[frozenset, int]:
    model = model_ops(split)
    found: set = set()

    def run(prefix, sleep):
        trace = simulate(model, prefix, sleep)
        return trace, reports_of(engine, split, trace.decisions)

    def on_run(prefix, trace, reports):
        found.update(reports)
        return False

    result = explore(run, on_run=on_run, sleep_aware=True)
    assert result.complete
    return frozenset(found), result.schedules


def check(engine, program):
    split = split_fenced(program)
    expected, interleavings = brute_force(engine, split)
    found, schedules = explored(engine, split)
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
