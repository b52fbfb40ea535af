"""The F-order closure's snapshot as a process (docs/scheduling.md "The snapshot is invisible
to the program", "The guard"): a program that forks and reaps its own children under
``--explore`` neither waits for the snapshot nor gets a SIGCHLD of the runtime's; a closure
search that does not end in ``closure_timeout_ms`` is killed and counted incomplete (no proof,
no hang); ``--json`` shows the closure's figures."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from pyrsan.runner import CLOSURE_SEARCH, ExploreOptions, RunOptions, exploration_options, explore_program
from pyrsan.runner import run_once

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
LITMUS = HERE.parent / "litmus"


def build(pyrsan_cli, pyrsan_env, source: Path, exe: Path, *defines: str) -> Path:
    proc = subprocess.run([*pyrsan_cli, "build", *defines, str(source), "-o", str(exe)], env=pyrsan_env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return exe


@pytest.mark.parametrize("defines, robust", [((), True), (("-DHANDLER",), True), (("-DNOFENCE",), False)])
def test_a_program_that_reaps_any_child_is_explored_to_its_verdict(tmp_path, pyrsan_cli, pyrsan_env,
                                                                      defines, robust):
    """reap_any_child.c forks two children after its SC fences ran and reaps with wait(NULL)
    until ECHILD (-DHANDLER: one SIGCHLD per child, counted by a handler); a wrong count
    aborts. With the snapshot as the program's child, wait(NULL) waited for it until --timeout."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS / "reap_any_child.c", tmp_path / "reap", *defines)
    options = RunOptions(work_dir=str(tmp_path / "runs"), quiet=True, timeout=60, closure=CLOSURE_SEARCH,
                         keep_going=True)
    result = explore_program(str(exe), [], options, ExploreOptions(max_schedules=200, jobs=1))
    assert not result.crashes and not result.timeouts, [r.__dict__ for r in result.runs if not r.reported]
    assert result.exploration.complete and result.exploration.bound is None, result.exploration
    assert bool(result.reports) != robust
    if robust:   # the closure searched its runs to the end (none fell back to today's relation)
        assert result.exploration.closure_states > 0
    # one run alone: its closure is complete, from the snapshot at the first SC fence
    one = exploration_options(RunOptions(work_dir=str(tmp_path / "one"), quiet=True, timeout=60,
                                         closure=CLOSURE_SEARCH))
    run, trace = run_once(str(exe), [], 1, one, prefix=())
    assert not run.timed_out and not run.crashed
    if robust:
        assert trace is not None and trace.closure is not None and trace.closure["incomplete"] is None


def test_a_stalled_closure_search_is_killed_and_counts_incomplete(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch):
    """closure_stall_ms makes the snapshot sleep 60 s before its search; closure_timeout_ms=300
    ends it: the run ends long before its own 40 s limit, its closure is "timeout", and the
    exploration is no proof of its own (it falls back to today's relation, which proves it)."""
    exe = build(pyrsan_cli, pyrsan_env, LITMUS / "sb_sc.c", tmp_path / "sb_sc")
    monkeypatch.setenv("PYRSAN_OPTIONS", "closure_stall_ms=60000 closure_timeout_ms=300")
    one = exploration_options(RunOptions(work_dir=str(tmp_path / "one"), quiet=True, timeout=40,
                                         closure=CLOSURE_SEARCH))
    run, trace = run_once(str(exe), [], 1, one, prefix=())
    assert not run.timed_out and run.returncode == 0
    assert trace is not None and trace.closure is not None and trace.closure["incomplete"] == "timeout"
    assert trace.closure["reports"] == []
    # the exploration: every closure incomplete, so today's relation decides (no closure states)
    options = RunOptions(work_dir=str(tmp_path / "runs"), quiet=True, timeout=40, closure=CLOSURE_SEARCH)
    result = explore_program(str(exe), [], options, ExploreOptions(max_schedules=500, jobs=1))
    assert not result.timeouts and not result.reports
    assert result.exploration.complete and result.exploration.closure_states == 0, result.exploration
    # with the guard off (0) the same stall would last its 60 s: the limit is what ended it
    monkeypatch.setenv("PYRSAN_OPTIONS", "closure_stall_ms=1500 closure_timeout_ms=0")
    run, trace = run_once(str(exe), [], 1, replace_dir(one, tmp_path / "nolimit"), prefix=())
    assert trace is not None and trace.closure is not None and trace.closure["incomplete"] is None


def replace_dir(options: RunOptions, work: Path) -> RunOptions:
    return replace(options, work_dir=str(work))


def test_json_shows_the_closure_figures(run_pyrsan, tmp_path):
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--explore", "--json", out, LITMUS / "sb_sc.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    exploration = json.loads(out.read_text())["exploration"]
    assert exploration["complete"] is True
    assert isinstance(exploration["closure_states"], int) and exploration["closure_states"] > 0
    assert exploration["closure_reruns"] == 0   # robust: no closure report to confirm
    # a program whose SC fences alone decide: the closure's report is confirmed by a rerun
    proc = run_pyrsan("run", "--explore", "--keep-going", "--json", out, PROGRAMS / "fenced_sc_store.c",
                      cwd=tmp_path)
    exploration = json.loads(out.read_text())["exploration"]
    assert proc.returncode == 66, proc.stderr
    assert exploration["closure_reruns"] > 0


def _children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (/proc), threads aside."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def _ended(pid: int) -> bool:
    """Gone, or a zombie (its parent, init once orphaned, may reap it late)."""
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2:].split()[0] in ("Z", "X")


def test_a_search_whose_run_is_killed_ends(tmp_path, pyrsan_cli, pyrsan_env):
    """The snapshot is the run's child with no exit signal (docs/scheduling.md "The guard"): a
    run killed while its search goes on (the driver's --timeout) must leave no search running.
    The snapshot stalls 60 s before its search (closure_stall_ms) with no limit on the run's
    wait (closure_timeout_ms=0); the run is killed with SIGKILL once its snapshot exists, and
    the snapshot ends within seconds, at the end of the pipe only the run held. Fails when the
    snapshot does not watch that pipe (a stall or a search that outlives its run)."""
    import os
    import signal
    import time

    from pyrsan.runner import runtime_options

    exe = build(pyrsan_cli, pyrsan_env, LITMUS / "sb_sc.c", tmp_path / "sb_sc")
    env = dict(pyrsan_env)
    env["PYRSAN_OPTIONS"] = runtime_options("", str(tmp_path / "reports.%p.jsonl"), None, {
        "sched": "dfs", "seed": "0", "trace_path": str(tmp_path / "trace.%p.jsonl"), "sched_closure": "1",
        "closure_stall_ms": "60000", "closure_timeout_ms": "0"})
    run = subprocess.Popen([str(exe)], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        snapshot: list[int] = []
        while not snapshot and time.monotonic() < deadline and run.poll() is None:
            snapshot = _children_of(run.pid)
            time.sleep(0.02)
        assert snapshot, "the run made no snapshot"
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        deadline = time.monotonic() + 10
        while not all(_ended(p) for p in snapshot) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_ended(p) for p in snapshot), "the search outlived its run"
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
