"""The closure search on the lean state (runtime/src/sched_closure_lean.c, docs/design/exploration.md
§19): a focus location's fence orders are searched on the values there of the clocks the steps read,
with the rules of the replayed steps on those values, instead of on the engine's records (the runtime
option ``closure_lean=0`` keeps the engine's). The lean state is exact when the search it makes is the
engine's: the same keys (the key hashes the same values in the same order), so the same states, the
same pruning and sleep sets; and a check that reports on its values hands the focus back to the
engine, so the reports are the engine's. So each program is explored both ways and everything the
explorations count must agree, and the lean state must have searched foci of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pyrsan import runner
from pyrsan.runner import CLOSURE_SEARCH, RunOptions, exploration_options, run_once

from .test_closure_runtime import FENCE_ORDER_PROGRAMS, LITMUS, PROGRAMS, build, built_seq_cst_programs, explored
from .test_closure_state import agree

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "programs" / "sched"


def both_ways(exe: Path, work: Path, monkeypatch, max_schedules: int = 3000) -> tuple:
    results = []
    for lean in ("0", "1"):
        monkeypatch.setenv("PYRSAN_OPTIONS", f"closure_lean={lean}")
        results.append(explored(exe, work / f"lean{lean}", CLOSURE_SEARCH, keep_going=True,
                                max_schedules=max_schedules))
    monkeypatch.delenv("PYRSAN_OPTIONS")
    return tuple(results)


def lean_foci(exe: Path, work: Path) -> list:
    """The first run's closure: [foci searched on the lean state, of them handed back]"""
    options = exploration_options(RunOptions(work_dir=str(work), quiet=True, timeout=60, closure=CLOSURE_SEARCH))
    _, trace = run_once(str(exe), [], 1, options, prefix=())
    assert trace.closure is not None and trace.closure["incomplete"] is None
    return trace.closure["lean"]


#: FENCE_ORDER_PROGRAMS' acquired_gap with a waiting loop, whose wait's value check reports
#: only under some fence orders (a check the lean state leaves to the engine)
HANDED_BACK = (*FENCE_ORDER_PROGRAMS, "acquired_gap_wait")


@pytest.mark.parametrize("name", ["corr_sc", "wrc_sc", "iriw_sc", "dekker_sc", "peterson_sc", "wide_clocks",
                                  "filter_lock_fenced", *HANDED_BACK])
def test_the_lean_state_searches_what_the_engine_searches(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch, name):
    source = (LITMUS if name.endswith("_sc") else PROGRAMS) / f"{name}.c"
    exe = build(pyrsan_cli, pyrsan_env, source, tmp_path / name)
    engine, lean = both_ways(exe, tmp_path, monkeypatch)
    assert lean.exploration.closure_states > 0
    agree(engine, lean, name)


@pytest.mark.parametrize("name", ["peterson_sc", "dekker_sc"])
def test_robust_programs_are_searched_on_the_lean_state(tmp_path, pyrsan_cli, pyrsan_env, name):
    exe = build(pyrsan_cli, pyrsan_env, LITMUS / f"{name}.c", tmp_path / name)
    searched, back = lean_foci(exe, tmp_path / "one")
    assert searched > 0 and back == 0


@pytest.mark.parametrize("name", HANDED_BACK)
def test_a_report_on_the_lean_values_hands_the_focus_to_the_engine(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch,
                                                                   name):
    """Each of these programs has runs with a fence order that reports (the closure finds the
    report that the coarse relation alone loses; acquired_gap_wait's at a wait): on the lean state
    such a run's focus is handed back and searched again by the engine, which makes the report (a
    rerun confirms it)."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS / f"{name}.c", tmp_path / name)
    closures = []
    absorb = runner.ClosureStats.absorb

    def seen(self, trace, result, run_schedule):
        closures.append(trace.closure)
        return absorb(self, trace, result, run_schedule)

    monkeypatch.setattr(runner.ClosureStats, "absorb", seen)
    result = explored(exe, tmp_path / "runs", CLOSURE_SEARCH, keep_going=True)
    assert result.exploration.closure_reruns and result.reports
    reporting = [c for c in closures if c and c["reports"]]
    assert reporting and all(c["lean"][1] > 0 for c in reporting)
    assert any(c["lean"][0] > c["lean"][1] for c in closures if c)   # foci searched on the lean state alone


@pytest.mark.parametrize("name", ["peterson", "bakery"])
def test_three_thread_mutual_exclusion_agrees_on_its_first_schedules(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch,
                                                                      name):
    """The first 150 schedules of peterson,3 and bakery,3 (fenced): the same closure states both
    ways (tens of thousands of branching states each, searched on the lean state)."""
    exe = tmp_path / name
    proc = subprocess.run([*pyrsan_cli, "build", "-DROBUST", "-DNTHREADS=3", str(BENCH / f"{name}.c"), "-o",
                           str(exe)], env=pyrsan_env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    engine, lean = both_ways(exe, tmp_path, monkeypatch, max_schedules=150)
    assert lean.exploration.closure_states > 10000
    agree(engine, lean, name)


def random_agreement(seed: int, count: int, work: Path, pyrsan_cli, pyrsan_env, monkeypatch) -> int:
    searched = 0
    for n, source, exe in built_seq_cst_programs(seed, count, work, pyrsan_cli, pyrsan_env):
        engine, lean = both_ways(exe, work / f"runs{n}", monkeypatch)
        agree(engine, lean, source.read_text())
        searched += lean.exploration.closure_states > 0
    return searched


def test_the_lean_state_agrees_with_the_engine_on_random_programs(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch):
    assert random_agreement(2300, 3, tmp_path, pyrsan_cli, pyrsan_env, monkeypatch) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_the_lean_state_agrees_with_the_engine_on_more_random_programs(tmp_path, pyrsan_cli, pyrsan_env,
                                                                      monkeypatch, seed):
    assert random_agreement(2400 + seed, 15, tmp_path, pyrsan_cli, pyrsan_env, monkeypatch) >= 6
