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
PROGRAMS = HERE / "programs"


@pytest.fixture(scope="module")
def built(tmp_path_factory, pyrsan_cli, pyrsan_env):
    out = tmp_path_factory.mktemp("explore_programs")
    exes = {}
    sources = {name: LITMUS / f"{name}.c" for name in ("sb_sc", "sb_relacq", "dekker_fenced")}
    sources.update({name: PROGRAMS / f"{name}.c" for name in ("spin_flag_sc", "stall_then_deadlock", "atfork_handler",
                                                                     "thread_malloc")})
    for name, source in sources.items():
        exe = out / name
        proc = subprocess.run([*pyrsan_cli, "build", str(source), "-o", str(exe)], env=pyrsan_env,
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


def test_in_straight_line_code_the_clean_sc_fences_are_those_that_follow_an_sc_fence_of_their_thread(
        built, tmp_path):
    """No re-read in sb_sc: a fence right after an SC fence of its thread is clean, one right
    after a store is not (a store always makes a fact); after a load it depends on whether the
    load made a fact (a load of a write its thread already knows makes none: docs/design/clocks.md §26)."""
    options = exploration_options(RunOptions(work_dir=str(tmp_path), quiet=True, timeout=60))
    _, trace = run_once(str(built["sb_sc"]), [], 1, options, prefix=())
    last_kind: dict[int, str] = {}
    clean = dirty = 0
    for step in trace.steps:
        for tid, op in step.enabled.items():
            if op.kind == "fence_sc" and last_kind.get(tid) in ("fence_sc", "store"):
                expected = "0x1" if last_kind.get(tid) == "fence_sc" else "0x0"
                assert op.addr == expected, (step, last_kind.get(tid))
                clean += op.addr == "0x1"
                dirty += op.addr == "0x0"
        last_kind[step.tid] = step.op.kind
    assert clean and dirty   # the leading fence of each load follows its store's trailing fence


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


def test_fork_server_children_do_not_run_the_programs_fork_handlers(built, tmp_path, monkeypatch):
    """A run from scratch forks nothing: a pthread_atfork handler the program registered
    before its first scheduling point must not run in the fork server's children either
    (atfork_handler.c exits 3 when it did)."""
    forked, execd = explore_both(built["atfork_handler"], tmp_path, monkeypatch)
    assert forked.exploration.complete and forked.exploration.schedules == execd.exploration.schedules
    assert [r.returncode for r in forked.runs] == [r.returncode for r in execd.runs]
    assert {r.returncode for r in forked.runs} == {0}


def test_a_program_with_no_scheduling_point_falls_back_to_one_process(built, tmp_path, monkeypatch):
    monkeypatch.setenv("PYRSAN_FORK_SERVER", "1")
    options = RunOptions(work_dir=str(tmp_path), quiet=True, timeout=60)
    result = explore_program(str(built["single"]), [], options, ExploreOptions())
    assert result.exploration.complete and result.exploration.schedules == 1
    assert result.runs[0].returncode == 0


def test_the_sc_fence_after_a_spin_loops_re_read_is_clean(built, tmp_path):
    """spin_flag_sc: the consumer's fence after a load is clean when the load re-read the value
    of its previous load (no write between). After its first load of `ready` it is clean only
    if that load made no fact (docs/design/clocks.md §26: the initial value is known to every thread)."""
    options = exploration_options(RunOptions(work_dir=str(tmp_path), quiet=True, timeout=60))
    _, trace = run_once(str(built["spin_flag_sc"]), [], 1, options, prefix=())
    history: dict[int, list] = {}
    after_reread = after_fresh = 0
    for step in trace.steps:
        ops = history.setdefault(step.tid, [])
        op = step.op
        if op.kind == "fence_sc" and ops and ops[-1].kind == "load":
            loads = [o for o in ops if o.kind == "load" and o.addr == ops[-1].addr]
            writes = [i for i, s in enumerate(trace.steps[:trace.steps.index(step)])
                      if s.tid != step.tid and s.op.addr == ops[-1].addr and s.op.writes]
            if len(loads) == 1:
                after_fresh += 1
            elif not writes:
                assert op.addr == "0x1", step   # a re-read with no write anywhere before it
                after_reread += 1
        ops.append(op)
    assert after_reread and after_fresh


def test_spin_flag_sc_is_proved(built, tmp_path):
    options = RunOptions(work_dir=str(tmp_path), quiet=True, timeout=60)
    result = explore_program(str(built["spin_flag_sc"]), [], options, ExploreOptions(max_schedules=2000))
    assert result.exploration.complete and not result.reports


@pytest.mark.parametrize("server", ["1", "0"])
def test_a_handed_over_run_that_deadlocks_ends_the_exploration_incomplete(built, tmp_path, monkeypatch, server):
    """stall_then_deadlock: the reader blocks in read() (a stall: the run is handed over) and
    main's join then waits for ever. No --timeout: the watchdog kills the run HANDOVER_GRACE
    after the hand-over; the exploration ends, incomplete, with no report and no hang."""
    import pyrsan.runner
    import pyrsan.watchdog
    monkeypatch.setattr(pyrsan.runner, "EXPLORE_STALL_MS", 300)
    monkeypatch.setattr(pyrsan.watchdog, "HANDOVER_GRACE", 0.5)
    monkeypatch.setenv("PYRSAN_FORK_SERVER", server)
    options = RunOptions(work_dir=str(tmp_path), quiet=True, timeout=None)
    result = explore_program(str(built["stall_then_deadlock"]), [], options, ExploreOptions(max_schedules=20))
    assert not result.exploration.complete and result.exploration.bound == "stall"
    assert result.runs and all(not r.timed_out and not r.crashed and r.returncode is None for r in result.runs)
    assert not result.reports


def test_a_run_leaves_out_the_lines_of_the_steps_its_schedule_says_are_known(built, tmp_path):
    """``# trace_from: N`` (docs/scheduling.md "Schedule file"): the run writes no line for its
    steps before N, and its trace read with the N known steps in front is the trace in full."""
    from pyrsan.schedule import Prefix

    options = exploration_options(RunOptions(work_dir=str(tmp_path), quiet=True, timeout=60))
    _disable_address_randomisation()
    _, full = run_once(str(built["dekker_fenced"]), [], 1, options, prefix=())
    assert full is not None and len(full.steps) > 12
    prefix = Prefix(full.decisions[:12])
    prefix.steps = full.steps[:11]
    _, again = run_once(str(built["dekker_fenced"]), [], 2, options, prefix=prefix)
    assert again is not None and again.steps == full.steps and again.end == full.end
    written = (tmp_path / "run0000002" / "prefix.sched").read_text()
    assert "# trace_from: 11" in written
    lines = (tmp_path / "run0000002" / "trace.jsonl").read_text().splitlines()
    assert '"step": 11,' in lines[1] and sum('"step"' in line for line in lines) == len(full.steps) - 11


def test_an_exploration_whose_runs_leave_out_their_known_steps_makes_the_same_runs(built, tmp_path, monkeypatch):
    """The explorer hands each run the steps of its prefix that earlier runs traced
    (explore.py ``prefix_of``, schedule.Prefix): the exploration is the one of runs that trace
    every step, run for run."""
    from pyrsan import explore as ex, runner

    known: list[int] = []
    read = runner._read_trace

    def reading(path, steps=()):
        known.append(len(steps))
        return read(path, steps)

    monkeypatch.setattr(runner, "_read_trace", reading)
    results = []
    for name in ("dekker_fenced", "spin_flag_sc"):
        short = explore_program(str(built[name]), [], RunOptions(work_dir=str(tmp_path / name / "s"), quiet=True,
                                                                   timeout=60), ExploreOptions(max_schedules=400))
        with monkeypatch.context() as plain:
            prefix_of = ex._Search.prefix_of

            def tracing_every_step(self, item):
                # the same decisions (a wakeup-tree branch's whole sequence too), no known steps
                prefix = prefix_of(self, item)
                prefix.steps = ()
                return prefix

            plain.setattr(ex._Search, "prefix_of", tracing_every_step)
            full = explore_program(str(built[name]), [], RunOptions(work_dir=str(tmp_path / name / "f"), quiet=True,
                                                                      timeout=60), ExploreOptions(max_schedules=400))
        results.append((short, full))
        assert short.exploration == full.exploration and short.exploration.schedules > 3
        assert [r.returncode for r in short.runs] == [r.returncode for r in full.runs]
    assert sum(k > 0 for k in known) > 3   # the short runs did leave lines out


def test_runs_of_one_process_each_leave_no_directory_behind(built, tmp_path, monkeypatch):
    """Without the fork server every run has a directory of its own (run_once), which the
    exploration removes once the run is read; the fork server's runs make none (runner.py
    ``run_schedule`` looks before it removes)."""
    forked, execd = explore_both(built["sb_sc"], tmp_path, monkeypatch)
    assert forked.exploration.complete and execd.exploration.schedules > 1
    assert not list((tmp_path / "0").glob("run*")) and not list((tmp_path / "1").glob("run*"))


def test_the_fork_server_takes_a_schedule_in_its_request_or_in_a_file_alike(built, tmp_path, monkeypatch):
    """docs/scheduling.md "Fork server": a schedule goes in the request (``sched N`` and its N
    bytes, which the server reads past the chunk its request line came in), or, longer than
    forkserver.SCHEDULE_MAX, in a file (``run PATH``). Runs of either kind, one after the other
    on one server, make the traces of one process per run."""
    from pyrsan import forkserver
    from pyrsan.schedule import Prefix

    options = exploration_options(RunOptions(work_dir=str(tmp_path / "once"), quiet=True, timeout=60))
    _disable_address_randomisation()
    exe = str(built["dekker_fenced"])
    _, full = run_once(exe, [], 1, options, prefix=())
    assert full is not None and len(full.steps) > 12
    reversed_first = (1 - full.decisions[0],)
    _, other = run_once(exe, [], 2, options, prefix=reversed_first)
    # a schedule longer than the server's 1 KiB request chunk: the whole run, then 700 decisions
    # the run never reaches
    long = Prefix(full.decisions + (0,) * 700)
    long.steps = full.steps[:11]
    short = Prefix(full.decisions[:12])
    short.steps = full.steps[:11]
    server = forkserver.ForkServer(exe, [], options, tmp_path / "server")
    own = set((tmp_path / "server").iterdir())   # the server's own (empty) trace
    try:
        for limit in (forkserver.SCHEDULE_MAX, 16):
            monkeypatch.setattr(forkserver, "SCHEDULE_MAX", limit)
            for prefix, expected in ((long, full), (reversed_first, other), (short, full)):
                result, trace = server.execute(exe, [], 3, options, prefix=prefix)
                assert trace is not None and trace.steps == expected.steps and trace.end == expected.end
                assert result.returncode == 0
                assert set((tmp_path / "server").iterdir()) == own   # every file of the run removed
    finally:
        server.close()


def test_the_fork_server_starts_with_eager_binding_and_no_rseq(built, tmp_path, monkeypatch):
    """docs/scheduling.md "Fork server": the server's process gets LD_BIND_NOW and the glibc
    tunable that spares each child work it would redo; the explorations above
    (fork server against one process per run, which gets none of them) make the same runs.
    (The environment as given to the process: glibc rewrites GLIBC_TUNABLES in its memory.)"""
    from pyrsan import forkserver

    started = []
    real = forkserver.subprocess.Popen

    def popen(*args, **kwargs):
        started.append(kwargs["env"])
        return real(*args, **kwargs)

    monkeypatch.setattr(forkserver.subprocess, "Popen", popen)
    monkeypatch.delenv("LD_BIND_NOW", raising=False)
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    options = exploration_options(RunOptions(work_dir=str(tmp_path / "once"), quiet=True, timeout=60))
    server = forkserver.ForkServer(str(built["dekker_fenced"]), [], options, tmp_path / "server")
    server.close()
    assert len(started) == 1 and started[0]["LD_BIND_NOW"] == "1"
    assert started[0]["GLIBC_TUNABLES"] == "glibc.pthread.rseq=0"


def test_a_threads_block_lies_where_it_lies_in_a_run_of_its_own_process(built, tmp_path):
    """The fork server's environment moves nothing in memory: a run that falls back to a process
    of its own (the server went away) must name the addresses the server's runs name, which the
    explorer compares across the runs of one exploration (thread_malloc.c: a block a thread
    allocates; one malloc arena for every thread would put it in the main heap)."""
    from pyrsan import forkserver

    exe = str(built["thread_malloc"])
    options = exploration_options(RunOptions(work_dir=str(tmp_path / "once"), quiet=True, timeout=60))
    _disable_address_randomisation()
    _, alone = run_once(exe, [], 1, options, prefix=())
    server = forkserver.ForkServer(exe, [], options, tmp_path / "server")
    try:
        _, served = server.execute(exe, [], 2, options, prefix=())
    finally:
        server.close()
    assert alone is not None and served is not None
    assert [(s.tid, s.op) for s in served.steps] == [(s.tid, s.op) for s in alone.steps]
    assert any(s.op.addr.startswith("0x7") for s in alone.steps)   # the block, in the thread's arena


def test_a_users_loader_and_glibc_settings_stay_in_the_fork_servers_environment():
    from pyrsan.forkserver import server_environment

    env = {"LD_BIND_NOW": "", "GLIBC_TUNABLES": "glibc.malloc.arena_max=4:glibc.malloc.check=3"}
    server_environment(env)
    assert env["LD_BIND_NOW"] == ""
    assert env["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=4:glibc.malloc.check=3:glibc.pthread.rseq=0"
    env = {"GLIBC_TUNABLES": "glibc.pthread.rseq=1"}
    server_environment(env)
    assert env == {"LD_BIND_NOW": "1", "GLIBC_TUNABLES": "glibc.pthread.rseq=1"}
    empty: dict[str, str] = {}
    server_environment(empty)
    assert empty == {"LD_BIND_NOW": "1", "GLIBC_TUNABLES": "glibc.pthread.rseq=0"}
