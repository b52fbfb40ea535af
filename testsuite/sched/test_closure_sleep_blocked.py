"""A run that the runtime finds sleep-blocked gets no F-order closure (sched_closure.c
``blocked_at``: from the step where it chose a sleeping thread the run repeats a class already
run, whose closure a run that is not cut searches); the end line names that step, and the
explorer accepts the skip only where it cut the run itself (explore.py): otherwise the
exploration is no proof."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyrsan.explore as ex
import pyrsan.runner as runner
from pyrsan.explore import explore
from pyrsan.runner import CLOSURE_SEARCH, ExploreOptions, RunOptions, explore_program
from pyrsan.schedule import Op, Step, Trace

LITMUS = Path(__file__).resolve().parents[1] / "litmus"


def two_stores(prefix, closure):
    """T1 and T2 each store to x (two classes); every run says the runtime skipped its closure
    at ``closure`` (a step index)."""
    order = list(prefix) + [t for t in (1, 2) if t not in prefix]
    steps = []
    for k, tid in enumerate(order):
        enabled = {t: Op("store", "0x10", True) for t in order[k:]}
        steps.append(Step(tid, enabled))
    return Trace(tuple(steps), "exit", closure={"from": 0, "states": 0, "incomplete": None,
                                                "sleep_blocked": closure, "reports": []})


def test_a_closure_skipped_where_the_explorer_did_not_cut_is_no_proof():
    result = explore(lambda prefix: (two_stores(prefix, 1), None))
    assert not result.complete and result.bound == "closure"


def test_a_closure_skipped_where_the_explorer_cut_the_run_keeps_the_proof():
    # no run of two_stores is cut (no sleeping thread is chosen): a skip at the run's end,
    # after its last step, is where the explorer stops reading it
    result = explore(lambda prefix: (two_stores(prefix, 2), None))
    assert result.complete and result.schedules == 2


def test_sleep_blocked_runs_of_dekker_sc_skip_their_closure_and_the_proof_stands(tmp_path, pyrsan_cli, pyrsan_env,
                                                                                 monkeypatch):
    exe = tmp_path / "dekker_sc"
    proc = subprocess.run([*pyrsan_cli, "build", str(LITMUS / "dekker_sc.c"), "-o", str(exe)], env=pyrsan_env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    skipped = []
    absorb = runner.ClosureStats.absorb

    def spy(self, trace, result, run_schedule):
        if trace.closure is not None and trace.closure.get("sleep_blocked") is not None:
            skipped.append(trace)
        return absorb(self, trace, result, run_schedule)

    monkeypatch.setattr(runner.ClosureStats, "absorb", spy)
    # source-DPOR (as with --jobs > 1): with wakeup trees no run of dekker_sc is sleep-blocked
    # (docs/design/exploration.md §21), and the skip this test is about is not made
    monkeypatch.setattr(ex._Search, "wakeup_trees", False)
    options = RunOptions(work_dir=str(tmp_path / "runs"), quiet=True, timeout=60, closure=CLOSURE_SEARCH)
    result = explore_program(str(exe), [], options, ExploreOptions(max_schedules=2000, jobs=1))
    assert result.exploration.complete and not result.reports, result.exploration
    assert len(skipped) == result.exploration.sleep_blocked >= 1
    assert all(t.closure["states"] == 0 and not t.closure["reports"] for t in skipped)
