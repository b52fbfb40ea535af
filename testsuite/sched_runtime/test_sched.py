"""The runtime's controlled scheduler (docs/scheduling.md), on small programs built with
`pyrsan build` and run directly with PYRSAN_OPTIONS: replay determinism, termination of every
strategy on blocking primitives and spin loops, deadlock reports, enabled sets, divergence.

programs/scenarios.c holds one scenario per argv[1] (exit 0 when the program's own result is
right); it is built twice, the second time with PYRSAN_NO_SPIN_LOOPS=1 so that its busy-wait
loops are plain loads the runtime must detect by itself. programs/std_thread.cpp covers
libstdc++'s std::thread / std::mutex / std::condition_variable.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
REPO_ROOT = HERE.parents[1]

EXIT_BAD_OPTIONS = 86
EXIT_DEADLOCK = 87
EXIT_BOUND = 88
EXIT_REPORTS = 66
CONTROLLED = ("dfs", "random", "pct")
ADDR_NO_RANDOMIZE = 0x0040000


def _no_aslr():
    """Child process: the same addresses in every run, so traces compare byte for byte."""
    ctypes.CDLL(None, use_errno=True).personality(ADDR_NO_RANDOMIZE)


@pytest.fixture(scope="session")
def programs(tmp_path_factory, pyrsan_cli, pyrsan_env) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("sched_programs")
    builds = {
        "scenarios": (PROGRAMS / "scenarios.c", {}),
        "scenarios_plain": (PROGRAMS / "scenarios.c", {"PYRSAN_NO_SPIN_LOOPS": "1"}),
        "std_thread": (PROGRAMS / "std_thread.cpp", {}),
    }
    exes = {}
    for name, (src, extra) in builds.items():
        exe = out / name
        proc = subprocess.run([*pyrsan_cli, "build", "-I", str(REPO_ROOT / "runtime" / "include"),
                               str(src), "-o", str(exe)], env={**pyrsan_env, **extra},
                              capture_output=True, text=True, timeout=600, check=False)
        assert proc.returncode == 0, proc.stderr
        exes[name] = exe
    return exes


@dataclass
class Run:
    returncode: int
    stderr: str
    header: dict | None
    steps: list[dict]
    end: dict | None
    trace_text: str
    reports: list[dict]

    def tids(self) -> list[int]:
        return [s["tid"] for s in self.steps]


@pytest.fixture
def run(programs, tmp_path, pyrsan_env):
    counter = iter(range(10**6))

    def _run(program: str, scenario: str | None = None, timeout: float = 30, extra_env=None,
             **options) -> Run:
        k = next(counter)
        trace = tmp_path / f"trace{k}.jsonl"
        reports = tmp_path / f"reports{k}.jsonl"
        opts = {"print_reports": 1, "trace_path": trace, "json_path": reports, **options}
        env = {**pyrsan_env, **(extra_env or {}),
               "PYRSAN_OPTIONS": " ".join(f"{n}={v}" for n, v in opts.items())}
        argv = [str(programs[program])] + ([scenario] if scenario else [])
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout,
                              check=False, preexec_fn=_no_aslr)
        text = trace.read_text() if trace.exists() else ""
        lines = [json.loads(line) for line in text.splitlines()]
        header = lines[0] if lines and "pyrsan_trace" in lines[0] else None
        end = lines[-1] if lines and "end" in lines[-1] else None
        steps = [line for line in lines if "step" in line]
        reps = [json.loads(line) for line in reports.read_text().splitlines()] if reports.exists() else []
        return Run(proc.returncode, proc.stderr, header, steps, end, text, reps)

    return _run


def schedule_file(path: Path, tids, comment: str = "") -> Path:
    path.write_text("pyrsan-schedule 1\n" + (f"# {comment}\n" if comment else "")
                    + " ".join(map(str, tids)) + "\n")
    return path


def step_lines(r: Run) -> str:
    """The trace without its header (which carries the pid). Addresses are the run's own:
    equal across runs only with ASLR off (_no_aslr) and for objects whose address does not
    depend on the environment's size (globals and the heap, not the stack)."""
    return "".join(r.trace_text.splitlines(keepends=True)[1:])


# ---- trace format ----

def test_trace_has_a_header_one_line_per_step_and_an_end_line(run):
    r = run("scenarios", "mutex_counter", sched="random", seed=11)
    assert r.returncode == 0, r.stderr
    assert r.header == {"pyrsan_trace": 1, "sched": "random", "seed": 11, "pid": r.header["pid"]}
    assert [s["step"] for s in r.steps] == list(range(len(r.steps)))
    assert r.end == {"end": "exit", "steps": len(r.steps), "diverged": None}
    for s in r.steps:
        assert set(s) <= {"step", "tid", "enabled", "yielding"}
        assert s["tid"] in [e[0] for e in s["enabled"]], "the chosen thread is enabled"
        for tid, kind, addr, w in s["enabled"]:
            assert kind in {"load", "store", "rmw", "fence", "fence_sc", "spawn", "join", "exit", "lock",
                            "unlock", "sync_acquire", "sync_release", "wait"}
            assert addr.startswith("0x") and w in (0, 1)
    # three threads: main spawns 1 and 2 (spawn names the new tid), both exit
    kinds = [(s["tid"], e[1], e[2]) for s in r.steps for e in s["enabled"] if e[0] == s["tid"]]
    assert (0, "spawn", "0x1") in kinds and (0, "spawn", "0x2") in kinds
    assert (1, "exit", "0x0") in kinds and (2, "exit", "0x0") in kinds
    assert (0, "join", "0x1") in kinds and (0, "join", "0x2") in kinds


def test_os_scheduler_writes_no_trace_and_reports_carry_no_step(run):
    r = run("scenarios", "store_buffering", sched="os")
    assert r.returncode == EXIT_REPORTS
    assert r.trace_text == ""
    assert r.reports and all("step" not in rep and "schedule" not in rep for rep in r.reports)


# ---- determinism and replay ----

@pytest.mark.parametrize("sched", ["random", "pct"])
def test_same_seed_gives_a_byte_identical_trace(run, sched):
    a = run("scenarios", "cond_queue", sched=sched, seed=7)
    b = run("scenarios", "cond_queue", sched=sched, seed=7)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert step_lines(a) == step_lines(b)
    assert len(a.steps) > 20


def test_different_seeds_give_different_schedules(run):
    traces = {tuple(run("scenarios", "cond_queue", sched="random", seed=s).tids()) for s in range(1, 6)}
    assert len(traces) > 1


@pytest.mark.parametrize("sched,scenario", [("random", "cond_queue"), ("pct", "barrier_phases"),
                                            ("random", "timeouts")])
def test_a_schedule_file_replays_a_trace_exactly(run, tmp_path, sched, scenario):
    orig = run("scenarios", scenario, sched=sched, seed=3)
    assert orig.returncode == 0, orig.stderr
    sched_file = schedule_file(tmp_path / "replay.sched", orig.tids(), f"sched={sched} seed=3")
    replay = run("scenarios", scenario, sched="dfs", schedule=sched_file)
    assert replay.returncode == 0, replay.stderr
    assert "diverged" not in replay.stderr
    assert step_lines(replay) == step_lines(orig)


def test_replay_reproduces_the_same_report_at_the_same_step(run, tmp_path):
    orig = next(r for r in (run("scenarios", "store_buffering", sched="random", seed=s) for s in range(1, 30))
                if r.returncode == EXIT_REPORTS)
    replay = run("scenarios", "store_buffering", sched="dfs",
                 schedule=schedule_file(tmp_path / "sb.sched", orig.tids()))
    assert replay.returncode == EXIT_REPORTS
    strip = lambda reps: [(r["key"], r["step"]) for r in reps]  # noqa: E731
    assert strip(replay.reports) == strip(orig.reports)


def test_reports_carry_the_step_and_the_schedule(run):
    r = run("scenarios", "store_buffering", sched="pct", seed=4)
    assert r.returncode == EXIT_REPORTS
    rep = r.reports[0]
    assert rep["schedule"] == {"sched": "pct", "seed": 4}
    step = r.steps[rep["step"]]
    assert step["tid"] == rep["access"]["thread"], "the report was raised in the step of its thread"


# ---- termination of every strategy ----

TERMINATING = ["mutex_counter", "cond_queue", "barrier_phases", "c11_threads", "timeouts", "spin_flag",
               "wait_handoff"]


@pytest.mark.parametrize("sched", CONTROLLED)
@pytest.mark.parametrize("scenario", TERMINATING)
def test_every_strategy_runs_blocking_programs_to_the_end(run, sched, scenario):
    for seed in (1, 2):
        r = run("scenarios", scenario, sched=sched, seed=seed)
        assert r.returncode == 0, f"seed {seed}: {r.stderr}"
        assert r.end["end"] == "exit"


@pytest.mark.parametrize("program", ["scenarios", "scenarios_plain"])
def test_threads_failing_on_a_held_lock_let_its_holder_run(run, program):
    """Failed BCAS attempts and exchanges of 1 over 1 change nothing: they must not wake each
    other (a livelock that starves the holder until max_steps under pct's fixed priorities).
    Robustness reports are off: the question is termination, and the analysis does report
    some schedules of these locks."""
    for seed in range(1, 9):
        r = run(program, "contended_locks", sched="pct", seed=seed, pct_steps=60, max_steps=2000,
                report_robustness=0)
        assert r.returncode == 0, f"seed {seed}: {r.stderr}"
        assert len(r.steps) < 300


@pytest.mark.parametrize("sched", CONTROLLED)
def test_std_thread_mutex_and_condition_variable(run, sched):
    r = run("std_thread", sched=sched, seed=5)
    assert r.returncode == 0, r.stderr
    assert {s["tid"] for s in r.steps} == {0, 1, 2, 3}


@pytest.mark.parametrize("sched", CONTROLLED)
def test_a_thread_created_before_main_is_managed(run, sched):
    r = run("scenarios", "before_main", sched=sched, seed=2, extra_env={"SCENARIO_BEFORE_MAIN": "1"})
    assert r.returncode == 0, r.stderr
    assert r.steps[0]["enabled"] == [[0, "spawn", "0x1", 1]]
    assert {s["tid"] for s in r.steps} == {0, 1}


def test_a_yielding_thread_is_listed_apart_and_runs_when_a_schedule_names_it(run, tmp_path):
    """scenarios_plain: the waiter's plain re-reads of flag make it yield after 3 reads; the
    trace lists it under "yielding" while main can run, and a prefix may still pick it."""
    first = run("scenarios_plain", "spin_flag", sched="dfs",
                schedule=schedule_file(tmp_path / "p1.sched", [0, 1, 1, 1]))
    assert first.returncode == 0 and first.end["diverged"] is None
    step = first.steps[4]
    assert [e[0] for e in step["enabled"]] == [0]
    assert [(e[0], e[1]) for e in step["yielding"]] == [(1, "load")]
    again = run("scenarios_plain", "spin_flag", sched="dfs",
                schedule=schedule_file(tmp_path / "p2.sched", [0, 1, 1, 1, 1, 1]))
    assert again.returncode == 0 and again.end["diverged"] is None
    assert again.tids()[:6] == [0, 1, 1, 1, 1, 1]
    assert [e[0] for e in again.steps[4]["enabled"]] == [0, 1]


@pytest.mark.parametrize("sched", CONTROLLED)
def test_a_failed_recognised_spin_load_disables_the_thread_until_a_write(run, tmp_path, sched):
    """The prefix asks for the waiter again after its spin load failed: it cannot run (the
    schedule diverges) until main writes flag, and the run ends under every strategy. (dfs with
    every attempt a step: by default its waiter is not enabled before flag lets it through,
    testsuite/sched/test_wait_value.py.)"""
    prefix = schedule_file(tmp_path / "spin.sched", [0] + [1] * 30)
    r = run("scenarios", "spin_flag", sched=sched, seed=1, schedule=prefix, sched_wait_value=0)
    assert r.returncode == 0, r.stderr
    assert r.end["end"] == "exit" and len(r.steps) < 100
    assert r.end["diverged"] == 2
    assert r.stderr.count("pyrsan: schedule diverged at step") == 1
    assert r.steps[1]["enabled"][1][:2] == [1, "wait"]
    assert 1 not in [e[0] for e in r.steps[2]["enabled"]]


@pytest.mark.parametrize("sched", CONTROLLED)
def test_a_plain_spin_loop_terminates_after_a_forced_prefix_of_spins(run, tmp_path, sched):
    """scenarios_plain: the waiter re-reads flag; a prefix may run it 30 times (it yields but
    stays runnable), then every strategy must let main run rather than spin for ever."""
    prefix = schedule_file(tmp_path / "spin.sched", [0] + [1] * 30)
    r = run("scenarios_plain", "spin_flag", sched=sched, seed=1, schedule=prefix)
    assert r.returncode == 0, r.stderr
    assert r.end["end"] == "exit" and r.end["diverged"] is None
    assert len(r.steps) < 100


# ---- enabled sets ----

def test_a_thread_blocked_on_a_held_mutex_is_not_enabled(run):
    r = run("scenarios", "mutex_counter", sched="random", seed=2)
    assert r.returncode == 0, r.stderr
    owner: dict[str, int] = {}
    blocked_somewhere = False
    for s in r.steps:
        listed = {e[0] for e in s["enabled"]}
        for tid, kind, addr, _ in s["enabled"]:
            if kind == "lock":
                assert owner.get(addr, tid) == tid, f"step {s['step']}: T{tid} listed on a held lock"
        blocked_somewhere |= any(t not in listed for t in (1, 2)) and bool(owner)
        chosen = next(e for e in s["enabled"] if e[0] == s["tid"])
        if chosen[1] == "lock":
            owner[chosen[2]] = chosen[0]
        elif chosen[1] == "unlock":
            owner.pop(chosen[2], None)
    assert blocked_somewhere


def test_a_join_is_enabled_only_after_the_joinee_exited(run):
    for seed in (1, 2, 3):
        r = run("scenarios", "barrier_phases", sched="random", seed=seed)
        assert r.returncode == 0, r.stderr
        exited = set()
        for s in r.steps:
            for tid, kind, addr, _ in s["enabled"]:
                if kind == "join":
                    assert int(addr, 16) in exited
            chosen = next(e for e in s["enabled"] if e[0] == s["tid"])
            if chosen[1] == "exit":
                exited.add(chosen[0])


def test_seq_cst_accesses_are_three_steps_under_fenced(run):
    r = run("scenarios", "wait_handoff", sched="dfs")
    chosen = [next(e[1] for e in s["enabled"] if e[0] == s["tid"]) for s in r.steps if s["tid"] == 0]
    # main's atomic_store(&go, 1): leading SC fence, store, trailing SC fence
    i = chosen.index("store")
    assert chosen[i - 1] == "fence_sc" and chosen[i + 1] == "fence_sc"
    ra = run("scenarios", "wait_handoff", sched="dfs", sc_accesses="ra")
    assert ra.returncode == 0 and len(ra.steps) < len(r.steps)


# ---- deadlocks ----

def _check_deadlock(r: Run, waits: dict[int, str], functions: dict[int, str]):
    assert r.returncode == EXIT_DEADLOCK, r.stderr
    assert "WARNING: pyrsan: deadlock" in r.stderr
    assert r.end["end"] == "deadlock" and r.end["steps"] == len(r.steps)
    dl = [rep for rep in r.reports if rep["kind"] == "deadlock"]
    assert len(dl) == 1
    threads = {t["thread"]: t for t in dl[0]["threads"]}
    assert set(threads) == set(waits)
    for tid, what in waits.items():
        assert what in threads[tid]["waiting_for"]
        assert threads[tid]["stack"][0]["function"] == functions[tid]
        assert threads[tid]["stack"][0]["file"].endswith("scenarios.c")


@pytest.mark.parametrize("sched", CONTROLLED)
def test_join_of_a_thread_blocked_for_ever_is_a_deadlock(run, sched):
    r = run("scenarios", "deadlock_join", sched=sched, seed=1)
    _check_deadlock(r, {0: "the end of thread T1", 1: "a signal of the condition variable"},
                    {0: "deadlock_join", 1: "dj_worker"})


def test_two_mutexes_in_opposite_order_deadlock_under_every_strategy(run, tmp_path):
    waits = {0: "the end of thread T1", 1: "the lock at", 2: "the lock at"}
    functions = {0: "deadlock_abba", 1: "ab", 2: "ba"}
    clean = run("scenarios", "deadlock_abba", sched="dfs")
    assert clean.returncode == 0, "the default dfs schedule runs the threads one after the other"
    found = next(r for r in (run("scenarios", "deadlock_abba", sched="random", seed=s) for s in range(1, 40))
                 if r.returncode != 0)
    _check_deadlock(found, waits, functions)
    # dfs: the random run's schedule as a prefix
    dfs = run("scenarios", "deadlock_abba", sched="dfs",
              schedule=schedule_file(tmp_path / "abba.sched", found.tids()))
    _check_deadlock(dfs, waits, functions)
    # pct: with change points spread over the run's length, a few seeds suffice
    pct = next(r for r in (run("scenarios", "deadlock_abba", sched="pct", seed=s, pct_steps=len(clean.steps))
                           for s in range(1, 80)) if r.returncode != 0)
    _check_deadlock(pct, waits, functions)


def test_a_mutex_locked_again_by_its_owner_is_a_deadlock(run):
    r = run("scenarios", "relock", sched="dfs")
    _check_deadlock(r, {0: "the lock at"}, {0: "relock"})


@pytest.mark.parametrize("sched", CONTROLLED)
def test_main_leaving_with_pthread_exit_lets_the_others_finish(run, sched):
    r = run("scenarios", "main_exit", sched=sched, seed=3)
    assert r.returncode == 0, r.stderr
    exits = [s["tid"] for s in r.steps if next(e[1] for e in s["enabled"] if e[0] == s["tid"]) == "exit"]
    assert sorted(exits) == [0, 1]
    assert r.end["end"] == "exit"


# ---- divergence, bounds, bad input ----

def test_a_schedule_naming_a_thread_that_cannot_run_diverges_once(run, tmp_path):
    r = run("scenarios", "mutex_counter", sched="dfs",
            schedule=schedule_file(tmp_path / "bad.sched", [0, 5, 0, 7]))
    assert r.returncode == 0
    assert r.stderr.count("pyrsan: schedule diverged at step 1\n") == 1
    assert "diverged at step 3" not in r.stderr
    assert r.end["diverged"] == 1


def test_max_steps_stops_a_run_with_end_bound(run):
    r = run("scenarios", "cond_queue", sched="dfs", max_steps=5)
    assert r.returncode == EXIT_BOUND
    # "blocked": the threads left waiting, with their pending operations (docs/scheduling.md)
    assert {k: v for k, v in r.end.items() if k != "blocked"} == {"end": "bound", "steps": 5, "diverged": None}
    assert all(len(op) == 4 for op in r.end.get("blocked", []))
    assert "max_steps=5" in r.stderr


@pytest.mark.parametrize("sched", CONTROLLED)
def test_a_polling_loop_that_writes_lets_the_thread_it_waits_for_run(run, sched):
    """Its own writes keep the poller from ever being a spin, and dfs's continuation and pct's
    priorities keep the previous thread: the fairness bound (sched.c fair_turn) must give the
    setter a turn long before max_steps."""
    for seed in (1, 2, 3):
        r = run("scenarios", "writing_poll", sched=sched, seed=seed, max_steps=200000,
                report_robustness=0)
        assert r.returncode == 0, f"seed {seed}: {r.stderr}"
        assert r.end["end"] != "bound"


def test_a_real_livelock_of_writing_pollers_still_reaches_the_bound(run):
    r = run("scenarios", "writing_livelock", sched="dfs", max_steps=20000, report_robustness=0)
    assert r.returncode == EXIT_BOUND
    assert {s["tid"] for s in r.steps} == {0, 1}  # both got turns


@pytest.mark.parametrize("content,message", [
    ("0 1 0\n", "not a schedule file"),
    ("pyrsan-schedule 1\n0 x 1\n", "not a thread id"),
])
def test_a_bad_schedule_file_is_one_line_and_exit_86(run, tmp_path, content, message):
    path = tmp_path / "bad.sched"
    path.write_text(content)
    r = run("scenarios", "mutex_counter", sched="dfs", schedule=path)
    assert r.returncode == EXIT_BAD_OPTIONS
    assert message in r.stderr and r.stderr.count("\n") == 1


def test_a_missing_schedule_file_is_exit_86(run, tmp_path):
    r = run("scenarios", "mutex_counter", sched="dfs", schedule=tmp_path / "none.sched")
    assert r.returncode == EXIT_BAD_OPTIONS and "cannot read the schedule file" in r.stderr


def test_an_unwritable_trace_path_is_exit_86(run, tmp_path):
    r = run("scenarios", "mutex_counter", sched="random", trace_path=tmp_path / "no" / "dir" / "t.jsonl")
    assert r.returncode == EXIT_BAD_OPTIONS and "cannot open trace_path" in r.stderr
    assert r.stderr.count("\n") == 1
