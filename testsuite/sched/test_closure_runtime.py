"""The F-order closure in the runtime (issue 15; docs/design/exploration.md §2-3): with
``sched_closure=1`` two SC fences are independent for the explorer, and each run's closure
(every order of its SC fences that the run's real accesses allow) is searched by the runtime
with the engine's own rules. The checks: the closure keeps the reports that only some fence
orders make (the coarse relation alone, ``sched_closure=2``, loses them), it proves the
seq_cst litmus programs, and on random programs with seq_cst accesses and SC fences it finds
exactly the reports of today's relation (``sched_closure=0``), with the same verdict."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from pyrsan.runner import CLOSURE_COARSE, CLOSURE_OFF, CLOSURE_SEARCH, ExploreOptions, RunOptions, explore_program
from pyrsan.runner import exploration_options, run_once

HERE = Path(__file__).resolve().parent
LITMUS = HERE.parent / "litmus"
PROGRAMS = HERE / "programs"
sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))
from end_to_end import c_source, random_litmus  # noqa: E402

#: Reports only under some orders of SC fences that no real location orders
#: (test_dpor_monitor.py's FENCED_SC_STORE, LOADED_FENCED_SC_STORE, ACQUIRED_GAP in C).
FENCE_ORDER_PROGRAMS = ("fenced_sc_store", "loaded_fenced_sc_store", "acquired_gap")
#: The seq_cst litmus programs today's relation does not prove (benchmarks/exploration_causes.py).
SEQ_CST_LITMUS = ("corr_sc", "wrc_sc", "iriw_sc", "dekker_sc", "peterson_sc")


def build(pyrsan_cli, pyrsan_env, source: Path, exe: Path) -> Path:
    proc = subprocess.run([*pyrsan_cli, "build", str(source), "-o", str(exe)], env=pyrsan_env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return exe


def explored(exe: Path, work: Path, closure: str, keep_going: bool = False, max_schedules: int = 10000):
    options = RunOptions(work_dir=str(work), quiet=True, timeout=120, closure=closure, keep_going=keep_going)
    return explore_program(str(exe), [], options, ExploreOptions(max_schedules=max_schedules, jobs=1))


def keys(result) -> frozenset:
    return frozenset(r.report.key for r in result.reports)


@pytest.fixture(scope="module")
def fence_order_programs(tmp_path_factory, pyrsan_cli, pyrsan_env):
    out = tmp_path_factory.mktemp("closure_programs")
    return {name: build(pyrsan_cli, pyrsan_env, PROGRAMS / f"{name}.c", out / name) for name in FENCE_ORDER_PROGRAMS}


@pytest.mark.parametrize("name", FENCE_ORDER_PROGRAMS)
def test_the_closure_keeps_the_reports_that_only_fence_orders_make(fence_order_programs, tmp_path, name):
    exe = fence_order_programs[name]
    coarse = explored(exe, tmp_path / "coarse", CLOSURE_COARSE)
    assert coarse.exploration.complete and not coarse.reports, "the coarse relation alone loses the report"
    today = explored(exe, tmp_path / "today", CLOSURE_OFF, keep_going=True)
    closed = explored(exe, tmp_path / "closed", CLOSURE_SEARCH, keep_going=True)
    assert today.reports and keys(closed) == keys(today)
    assert closed.exploration.closure_reruns   # found by a closure, confirmed by a real run
    # the report is the engine's own, from a run that can be replayed
    assert all(r.reproduction is not None and Path(r.reproduction.schedule_file).exists()
               for r in closed.runs if r.reported)


@pytest.mark.parametrize("defines", [(), ("-DRELAXED",)])
def test_threads_created_after_the_first_sc_fence_are_replayed(tmp_path, pyrsan_cli, pyrsan_env, defines):
    """spawn_after_sc.c: main's seq_cst store comes between its spawns, so the closure's snapshot
    has no record of the second thread; the replay makes it (the closure is complete, with no
    fallback to today's relation), with today's verdict and reports."""
    exe = tmp_path / "spawn_after_sc"
    proc = subprocess.run([*pyrsan_cli, "build", *defines, str(PROGRAMS / "spawn_after_sc.c"), "-o", str(exe)],
                          env=pyrsan_env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    options = exploration_options(RunOptions(work_dir=str(tmp_path / "one"), quiet=True, timeout=60,
                                             closure=CLOSURE_SEARCH))
    _, trace = run_once(str(exe), [], 1, options, prefix=())
    spawns = [k for k, step in enumerate(trace.steps) if step.op.kind == "spawn"]
    assert trace.closure is not None and trace.closure["incomplete"] is None
    assert trace.closure["from"] < spawns[-1]   # the snapshot is older than the second thread
    today = explored(exe, tmp_path / "today", CLOSURE_OFF, keep_going=True)
    closed = explored(exe, tmp_path / "closed", CLOSURE_SEARCH, keep_going=True)
    assert today.exploration.complete and closed.exploration.complete
    assert keys(closed) == keys(today) and bool(today.reports) == bool(defines)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in ("dekker_sc", "peterson_sc")
                                  else n for n in SEQ_CST_LITMUS])
def test_seq_cst_litmus_programs_are_proved_with_the_closure(tmp_path, pyrsan_cli, pyrsan_env, name):
    exe = build(pyrsan_cli, pyrsan_env, LITMUS / f"{name}.c", tmp_path / name)
    result = explored(exe, tmp_path / "runs", CLOSURE_SEARCH, max_schedules=2000)
    assert result.exploration.complete and not result.reports, result.exploration
    assert result.exploration.schedules <= 100 and result.exploration.closure_states


def seq_cst_program(rng: random.Random) -> str:
    """A random litmus program of benchmarks/end_to_end.py (loads, stores, fetch_adds, CAS,
    waits, fences), its accesses seq_cst with probability 1/2 and its fences SC with 3/4."""
    locations, threads = random_litmus(rng, "all")
    out = []
    for ops in threads:
        new = []
        for op in ops:
            if op[0] == "fence":
                op = ("fence", "sc") if rng.random() < 0.75 else op
            elif op[0] in ("st", "ld", "rmw", "wait") and rng.random() < 0.5:
                op = op[:-1] + ("sc",)
            new.append(op)
        out.append(new)
    return c_source(locations, out)


def built_seq_cst_programs(seed: int, count: int, work: Path, pyrsan_cli, pyrsan_env):
    """count programs of seq_cst_program from seed, each written to work/pN.c and built:
    yields (N, its source file, its executable)."""
    rng = random.Random(seed)
    for n in range(count):
        source = work / f"p{n}.c"
        source.write_text(seq_cst_program(rng))
        yield n, source, build(pyrsan_cli, pyrsan_env, source, work / f"p{n}")


def differential(seed: int, count: int, work: Path, pyrsan_cli, pyrsan_env) -> int:
    compared = 0
    for n, source, exe in built_seq_cst_programs(seed, count, work, pyrsan_cli, pyrsan_env):
        today = explored(exe, work / f"today{n}", CLOSURE_OFF, keep_going=True, max_schedules=3000)
        if not today.exploration.complete:
            continue   # no verdict to compare with
        closed = explored(exe, work / f"closed{n}", CLOSURE_SEARCH, keep_going=True, max_schedules=3000)
        assert closed.exploration.complete, (source.read_text(), closed.exploration)
        assert keys(closed) == keys(today), (source.read_text(), keys(today) ^ keys(closed))
        compared += 1
    return compared


def test_the_closure_finds_the_reports_of_todays_relation_on_random_programs(tmp_path, pyrsan_cli, pyrsan_env):
    assert differential(1500, 6, tmp_path, pyrsan_cli, pyrsan_env) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_the_closure_finds_the_reports_of_todays_relation_on_more_random_programs(
        tmp_path, pyrsan_cli, pyrsan_env, seed):
    assert differential(1600 + seed, 15, tmp_path, pyrsan_cli, pyrsan_env) >= 8
