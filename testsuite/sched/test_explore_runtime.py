"""Exploration against the real runtime (issue 15): the clean-fence marks of the trace, and the
fork server (docs/scheduling.md "SC fences: when two commute", "Fork server")."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pyrsan.runner import ExploreOptions, RunOptions, _disable_address_randomisation, explore_program, run_once
from pyrsan.runner import exploration_options

HERE = Path(__file__).resolve().parent
LITMUS = HERE.parent / "litmus"


@pytest.fixture(scope="module")
def built(tmp_path_factory, pyrsan_cli, pyrsan_env):
    out = tmp_path_factory.mktemp("explore_programs")
    exes = {}
    for name in ("sb_sc", "sb_relacq", "dekker_fenced"):
        exe = out / name
        proc = subprocess.run([*pyrsan_cli, "build", str(LITMUS / f"{name}.c"), "-o", str(exe)], env=pyrsan_env,
                              capture_output=True, text=True, timeout=600, check=False)
        assert proc.returncode == 0, proc.stderr
        exes[name] = exe
    single = out / "single.c"
    single.write_text("#include <stdio.h>\nint main(void) { puts(\"no threads\"); return 0; }\n")
    proc = subprocess.run([*pyrsan_cli, "build", str(single), "-o", str(out / "single")], env=pyrsan_env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    exes["single"] = out / "single"
    return exes


def test_the_runtime_marks_exactly_the_sc_fences_that_follow_an_sc_fence_of_their_thread(built, tmp_path):
    options = exploration_options(RunOptions(work_dir=str(tmp_path), quiet=True, timeout=60))
    _, trace = run_once(str(built["sb_sc"]), [], 1, options, prefix=())
    last_kind: dict[int, str] = {}
    clean = 0
    for step in trace.steps:
        for tid, op in step.enabled.items():
            if op.kind == "fence_sc":
                expected = "0x1" if last_kind.get(tid) == "fence_sc" else "0x0"
                assert op.addr == expected, (step, last_kind.get(tid))
                clean += op.addr == "0x1"
        last_kind[step.tid] = step.op.kind
    assert clean   # the leading fence of each thread's load follows its store's trailing fence


def explore_both(exe: Path, tmp_path: Path, monkeypatch, **explore):
    results = {}
    for server in ("1", "0"):
        monkeypatch.setenv("PYRSAN_FORK_SERVER", server)
        options = RunOptions(work_dir=str(tmp_path / server), quiet=True, timeout=60)
        results[server] = explore_program(str(exe), [], options, ExploreOptions(**explore))
    return results["1"], results["0"]


def test_fork_server_explores_the_same_schedules_as_one_process_per_run(built, tmp_path, monkeypatch):
    forked, execd = explore_both(built["dekker_fenced"], tmp_path, monkeypatch, max_schedules=400)
    assert forked.exploration.complete and execd.exploration.complete
    assert forked.exploration.schedules == execd.exploration.schedules
    assert not forked.reports and not execd.reports
    assert [r.returncode for r in forked.runs] == [r.returncode for r in execd.runs]


def test_fork_server_runs_report_with_a_replayable_schedule(built, tmp_path, monkeypatch):
    forked, execd = explore_both(built["sb_relacq"], tmp_path, monkeypatch)
    assert forked.reports and execd.reports
    assert {r.report.key for r in forked.reports} == {r.report.key for r in execd.reports}
    reproduction = forked.runs[-1].reproduction
    assert reproduction is not None and Path(reproduction.schedule_file).exists()
    replay = RunOptions(work_dir=str(tmp_path / "replay"), quiet=True, timeout=60)
    replay = exploration_options(replay)
    _disable_address_randomisation()
    from pyrsan.schedule import read_schedule
    again, _ = run_once(str(built["sb_relacq"]), [], 1, replay, prefix=read_schedule(reproduction.schedule_file))
    assert again.reported


def test_a_program_with_no_scheduling_point_falls_back_to_one_process(built, tmp_path, monkeypatch):
    monkeypatch.setenv("PYRSAN_FORK_SERVER", "1")
    options = RunOptions(work_dir=str(tmp_path), quiet=True, timeout=60)
    result = explore_program(str(built["single"]), [], options, ExploreOptions())
    assert result.exploration.complete and result.exploration.schedules == 1
    assert result.runs[0].returncode == 0
