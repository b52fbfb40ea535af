"""Issue 12: what `pyrsan run FILE` and an instrumented binary do with no options
(docs/scheduling.md, "Hand-over" and "Driver defaults")."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from pyrsan.runner import DEFAULT_SAMPLED_RUNS, RunOptions, ScheduleOptions, run_program
from pyrsan.schedule import read_trace

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
LITMUS = HERE.parent / "litmus"


@pytest.fixture(scope="module")
def built(tmp_path_factory, pyrsan_cli, pyrsan_env):
    directory = tmp_path_factory.mktemp("built")
    cache: dict[str, Path] = {}

    def build(path: Path) -> Path:
        if path not in cache:
            output = directory / path.stem
            subprocess.run([*pyrsan_cli, "build", "-o", str(output), str(path)], env=pyrsan_env,
                           check=True, capture_output=True, timeout=300)
            cache[path] = output
        return cache[path]

    return build


def run_binary(executable: Path, env: dict[str, str], options: str = "", timeout: float = 60):
    full = dict(env)
    if options:
        full["PYRSAN_OPTIONS"] = options
    return subprocess.run([str(executable)], env=full, capture_output=True, text=True, timeout=timeout)


def test_a_binary_with_no_options_reports_store_buffering(built, pyrsan_env, tmp_path):
    """The default runtime scheduler (sched=auto) finds SB in a plain binary; the report names
    the fresh seed, and that seed repeats the run."""
    executable = built(LITMUS / "sb_relacq.c")
    json_path = tmp_path / "r.jsonl"
    proc = run_binary(executable, pyrsan_env, f"json_path={json_path}")
    assert proc.returncode == 66, proc.stderr
    report = json.loads(json_path.read_text().splitlines()[0])
    assert report["schedule"]["sched"] == "auto" and report["schedule"]["seed"] != 0
    again = tmp_path / "again.jsonl"
    proc = run_binary(executable, pyrsan_env, f"seed={report['schedule']['seed']}:json_path={again}")
    assert proc.returncode == 66
    repeated = json.loads(again.read_text().splitlines()[0])
    assert (repeated["access"]["line"], repeated["step"]) == (report["access"]["line"], report["step"])


def test_a_binary_reports_store_buffering_under_every_seed_and_the_os_scheduler_is_still_there(built, pyrsan_env):
    executable = built(LITMUS / "sb_relacq.c")
    codes = [run_binary(executable, pyrsan_env, f"seed={seed}").returncode for seed in range(1, 11)]
    assert codes == [66] * 10
    # sched=os is the scheduler of before: it runs (no report is guaranteed there)
    assert run_binary(executable, pyrsan_env, "sched=os").returncode in (0, 66)


@pytest.mark.parametrize("sched", ["auto", "pct", "random", "dfs"])
def test_a_thread_blocked_in_a_call_the_scheduler_cannot_see_is_handed_over(built, pyrsan_env, tmp_path, sched):
    executable = built(PROGRAMS / "pipe_handoff.c")
    trace = tmp_path / "trace.jsonl"
    proc = run_binary(executable, pyrsan_env, f"sched={sched}:seed=3:stall_ms=100:trace_path={trace}:verbosity=1")
    assert proc.returncode == 0 and "got a" in proc.stdout, proc.stderr
    assert read_trace(trace).end == "handover" and read_trace(trace).reason == "stall"
    assert "handed the threads over to the OS scheduler" in proc.stderr


def test_without_the_stall_hand_over_that_program_hangs(built, pyrsan_env):
    """What the hand-over prevents (so that the test above can fail)."""
    executable = built(PROGRAMS / "pipe_handoff.c")
    with pytest.raises(subprocess.TimeoutExpired):
        run_binary(executable, pyrsan_env, "sched=pct:seed=3:stall_ms=0", timeout=3)


@pytest.mark.parametrize("sched", ["pct", "random"])
def test_a_volatile_spin_loop_is_seen_by_the_controlled_scheduler(built, pyrsan_env, tmp_path, sched):
    """Threads taking turns through a volatile word finish under a controlled scheduler
    without a stall hand-over: the spinning loads are scheduling points, and the other
    thread's volatile store wakes the spinner."""
    executable = built(PROGRAMS / "volatile_handoff.c")
    trace = tmp_path / "t.jsonl"
    proc = run_binary(executable, pyrsan_env, f"sched={sched}:seed=5:stall_ms=0:report_races=0:trace_path={trace}",
                      timeout=60)
    assert proc.returncode == 0 and "counter 400" in proc.stdout, proc.stderr
    parsed = read_trace(trace)
    assert parsed.end == "exit"
    assert sum(1 for step in parsed.steps if step.op.kind == "load") >= 400


def test_hand_over_after_any_number_of_steps_keeps_the_program_correct(built, pyrsan_env, tmp_path):
    """Threads released from a modelled barrier, cond, mutex or join wait at the hand-over redo
    it with the real primitive: the totals stay right and nothing hangs."""
    executable = built(PROGRAMS / "barrier_rounds.c")
    steps_seen = set()
    for handover in (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377):
        trace = tmp_path / f"t{handover}.jsonl"
        proc = run_binary(executable, pyrsan_env,
                          f"handover_steps={handover}:seed={handover}:stall_ms=0:trace_path={trace}")
        assert proc.returncode == 0, (handover, proc.stdout, proc.stderr)
        assert "sum 120 arrived 120" in proc.stdout
        parsed = read_trace(trace)
        assert (parsed.end, parsed.reason, len(parsed.steps)) == ("handover", "steps", handover)
        steps_seen.add(len(parsed.steps))
    assert len(steps_seen) == 13


def test_pyrsan_run_says_which_runs_were_handed_over(run_pyrsan, tmp_path):
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "-v", "--seed", "4", "--runs", "2", "--json", out, PROGRAMS / "pipe_handoff.c",
                      cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "run 1: handed over to the OS scheduler at step" in proc.stderr
    assert json.loads(out.read_text())["runs"] == 2


def test_default_runs_stop_at_the_time_budget(built, tmp_path):
    executable = built(PROGRAMS / "barrier_rounds.c")
    options = RunOptions(runs=DEFAULT_SAMPLED_RUNS, time_budget=0.0, work_dir=str(tmp_path), quiet=True,
                         schedule=ScheduleOptions(sched="auto", seed=1, schedule_dir=str(tmp_path / "s")))
    result = run_program(str(executable), (), options)
    assert len(result.runs) == 1 and result.budget_stop and not result.reports
    options = RunOptions(runs=3, work_dir=str(tmp_path), quiet=True,
                         schedule=ScheduleOptions(sched="auto", seed=1, schedule_dir=str(tmp_path / "s")))
    result = run_program(str(executable), (), options)
    assert len(result.runs) == 3 and not result.budget_stop


def test_pyrsan_run_default_is_seeded_auto_then_explores_a_small_program(run_pyrsan, tmp_path):
    """sb_sc: the first run is seeded auto; the program is small, so DPOR follows and proves it."""
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--seed", "9", "--json", out, LITMUS / "sb_sc.c", cwd=tmp_path, timeout=300)
    document = json.loads(out.read_text())
    assert proc.returncode == 0, proc.stderr
    assert document["verdict"] == "robust" and document["exploration"]["complete"], proc.stderr
    assert document["runs"] == 1 + document["exploration"]["schedules"] and document["schedule"]["sched"] == "auto"
    assert "sched=auto, seed 9\n" in proc.stderr and "exploration complete" in proc.stderr


def test_the_default_exploration_finds_what_sampling_rarely_does(run_pyrsan, tmp_path):
    """sc_store_rlx_overwrite.c shows its violation in about 1 seeded run of 60; seed 1's first
    run does not, and the exploration after it does, with a schedule file that replays it."""
    program = LITMUS / "sc_store_rlx_overwrite.c"
    out = tmp_path / "found.json"
    proc = run_pyrsan("run", "--seed", 1, "--json", out, "--schedule-dir", tmp_path / "s", program, cwd=tmp_path)
    assert proc.returncode == 66, proc.stderr
    found = json.loads(out.read_text())
    assert found["exploration"]["stopped_at_report"] and found["runs"] > 2
    assert found["reports"][0]["reproduce"]["sched"] == "dfs"   # from the exploration, not from run 1
    again = tmp_path / "again.json"
    proc = run_pyrsan("run", "--json", again, "--replay", found["reports"][0]["reproduce"]["schedule_file"], program,
                      cwd=tmp_path)
    assert proc.returncode == 66 and json.loads(again.read_text())["reports"][0]["key"] == found["reports"][0]["key"]


def test_a_bounded_default_exploration_gives_the_rest_back_to_sampling(built, tmp_path, monkeypatch):
    import pyrsan.runner as runner
    from pyrsan.render import exploration_line, schedule_line
    # sb_sc takes 3 schedules (one per class of its real locations' orders; the F-order closure
    # covers the SC fences' orders): a bound of 2 leaves it unproved
    monkeypatch.setattr(runner, "DEFAULT_EXPLORE_SCHEDULES", 2)
    options = RunOptions(runs=6, time_budget=60.0, sampling=True, work_dir=str(tmp_path), quiet=True,
                         schedule=ScheduleOptions(sched="auto", seed=1, schedule_dir=str(tmp_path / "s")))
    result = run_program(str(built(LITMUS / "sb_sc.c")), (), options)
    assert not result.reports and result.exploration is not None and not result.exploration.complete
    assert result.sampled == 6 and len(result.runs) == 6 + 2
    assert [r.index for r in result.runs] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert schedule_line(result) == "pyrsan: sched=auto, seeds 1..6"
    assert "not a proof" in exploration_line(result)
    options = replace(options, sampling=False)   # --runs N: exactly N seeded runs
    assert run_program(str(built(LITMUS / "sb_sc.c")), (), options).exploration is None


def test_default_sampling_shows_the_output_once_and_stops_when_the_schedule_is_forced(run_pyrsan, tmp_path):
    single = tmp_path / "single.c"
    single.write_text('#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n')
    out = tmp_path / "single.json"
    proc = run_pyrsan("run", "--json", out, single, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0 and proc.stdout == "hello\n", proc.stderr
    assert json.loads(out.read_text())["runs"] == 1
    out = tmp_path / "threads.json"
    proc = run_pyrsan("run", "--seed", "5", "--json", out, PROGRAMS / "barrier_rounds.c", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["runs"] == DEFAULT_SAMPLED_RUNS
    assert proc.stdout == "sum 120 arrived 120\n"


def test_the_runtime_continuation_keeps_sleeping_threads_asleep(built, pyrsan_env, tmp_path):
    """Issue 15: the sleep set of the schedule file ("# sleep: T kind addr w") reaches the
    runtime, whose continuation then runs an awake thread instead of the sleeping one."""
    import shutil
    from pyrsan.schedule import write_schedule
    setarch = shutil.which("setarch")
    if setarch is None:
        pytest.skip("setarch is needed to run twice at the same addresses")
    executable = built(PROGRAMS / "distinct_stores.c")

    def decisions(name, schedule=None):
        trace = tmp_path / f"{name}.jsonl"
        options = f"sched=dfs:trace_path={trace}" + (f":schedule={schedule}" if schedule else "")
        proc = subprocess.run([setarch, "-R", str(executable)], env=dict(pyrsan_env, PYRSAN_OPTIONS=options),
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return read_trace(trace)

    first = decisions("first")
    k = next(i for i, step in enumerate(first.steps) if {1, 2} <= set(step.enabled))
    assert first.steps[k].tid == 1          # the continuation's choice: the lowest tid
    sleeping = first.steps[k].enabled[1]
    plain = tmp_path / "plain.sched"
    write_schedule(plain, first.decisions[:k])
    assert decisions("plain", plain).steps[k].tid == 1
    asleep = tmp_path / "asleep.sched"
    write_schedule(asleep, first.decisions[:k], sleep={1: sleeping})
    again = decisions("asleep", asleep)
    assert again.steps[k].tid == 2 and again.diverged is None
    assert 1 in [step.tid for step in again.steps[k + 1:]]   # it runs once nothing else can


def test_the_seed_a_run_names_reproduces_it_without_pct_steps(built, pyrsan_env, tmp_path):
    """The driver gives every sampled run after the first pct_steps (the previous run's step
    count); the seed the trace (and the reports) name must reproduce the run without it."""
    executable = built(PROGRAMS / "barrier_rounds.c")
    first, again = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_binary(executable, pyrsan_env, f"sched=auto:seed=77:pct_steps=37:stall_ms=0:trace_path={first}")
    named = json.loads(first.read_text().splitlines()[0])["seed"]
    assert named != 77
    run_binary(executable, pyrsan_env, f"sched=auto:seed={named}:stall_ms=0:trace_path={again}")
    a, b = read_trace(first), read_trace(again)
    assert len(a.steps) > 20 and [s.tid for s in a.steps] == [s.tid for s in b.steps]


def test_every_sampled_run_names_a_seed_that_repeats_its_schedule(run_pyrsan, tmp_path):
    """Runs after the first get pct_steps from the driver; the seed a run names (the
    runtime's, with pct_steps folded in) must repeat that run's schedule on its own."""
    run_pyrsan("run", "--sched", "auto", "--seed", 1000, "--runs", 6, "--keep-going", "--schedule-dir",
               tmp_path / "a", LITMUS / "mp_rlx.c", cwd=tmp_path)
    saved = sorted((tmp_path / "a").glob("mp_rlx-auto-*.sched"))   # one per reporting run
    assert any(int(path.stem.rsplit("-", 1)[1]) > 1005 for path in saved)   # a run after the first
    for schedule_file in saved:
        seed = schedule_file.stem.rsplit("-", 1)[1]
        run_pyrsan("run", "--sched", "auto", "--seed", seed, "--runs", 1, "--schedule-dir", tmp_path / "b",
                   LITMUS / "mp_rlx.c", cwd=tmp_path)
        decisions = [ln for ln in schedule_file.read_text().splitlines() if not ln.startswith("#")]
        again = (tmp_path / "b" / schedule_file.name).read_text().splitlines()
        assert [ln for ln in again if not ln.startswith("#")] == decisions, seed


def test_a_default_report_replays(run_pyrsan, tmp_path):
    """A report of the default run (from a seeded run or from the exploration that follows the
    first) replays from its schedule file, and a seeded one also from its seed alone."""
    out = tmp_path / "found.json"
    proc = run_pyrsan("run", "--json", out, "--schedule-dir", tmp_path / "s", LITMUS / "mp_rlx.c", cwd=tmp_path)
    assert proc.returncode == 66, proc.stderr
    found, first_stderr = json.loads(out.read_text()), proc.stderr
    reproduce = found["reports"][0]["reproduce"]
    again = tmp_path / "again.json"
    proc = run_pyrsan("run", "--json", again, "--replay", reproduce["schedule_file"], LITMUS / "mp_rlx.c", cwd=tmp_path)
    assert proc.returncode == 66, proc.stderr
    assert [r["key"] for r in json.loads(again.read_text())["reports"]] == [r["key"] for r in found["reports"]]
    if reproduce["sched"] != "auto":   # found by the exploration after the first run
        return
    assert f"--sched auto --seed {reproduce['seed']}" in first_stderr
    seeded = tmp_path / "seeded.json"
    proc = run_pyrsan("run", "--json", seeded, "--sched", "auto", "--seed", reproduce["seed"], "--runs", 1,
                      LITMUS / "mp_rlx.c", cwd=tmp_path)
    assert [r["key"] for r in json.loads(seeded.read_text())["reports"]] == [r["key"] for r in found["reports"]]


def test_process_exit_is_explored_around_threads_left_running(run_pyrsan, tmp_path):
    """Issue 15: main returns without joining; the violation needs both threads to run before the
    process ends. Without exit as an operation the exploration ran one schedule and called the
    program robust."""
    program = PROGRAMS / "exit_unjoined.c"
    out = tmp_path / "found.json"
    proc = run_pyrsan("run", "--explore", "--json", out, program, cwd=tmp_path)
    assert proc.returncode == 66, proc.stderr
    out = tmp_path / "robust.json"
    proc = run_pyrsan("run", "--explore", "--json", out, "-DROBUST", program, cwd=tmp_path)
    document = json.loads(out.read_text())
    assert proc.returncode == 0 and document["verdict"] == "robust", proc.stderr
    assert document["exploration"]["schedules"] > 1


@pytest.mark.parametrize("sched", ["auto", "pct", "random", "dfs"])
def test_a_thread_that_never_ends_does_not_keep_the_process_alive(built, pyrsan_env, tmp_path, sched):
    executable = built(PROGRAMS / "exit_busy_worker.c")
    trace = tmp_path / "t.jsonl"
    proc = run_binary(executable, pyrsan_env, f"sched={sched}:seed=2:trace_path={trace}:handover_steps=0")
    assert proc.returncode == 0 and proc.stdout == "main done\n", proc.stderr
    steps = read_trace(trace).steps
    assert steps[-1].op.kind == "exit_process" and len(steps) < 20000


def test_pyrsan_run_samples_a_prebuilt_instrumented_binary(built, run_pyrsan, tmp_path):
    """A binary built by make with the compiler wrappers (here pyrsan build) gets the same
    sampling as a source: `pyrsan run ./binary`. An uninstrumented one is refused in one line."""
    executable = built(LITMUS / "iriw_rlx.c")
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--seed", "1", "--json", out, executable, cwd=tmp_path)
    assert proc.returncode == 66, proc.stderr
    document = json.loads(out.read_text())
    assert document["verdict"] == "violations" and document["schedule"]["sched"] == "auto"
    plain = tmp_path / "plain"
    subprocess.run(["cp", "/bin/true", str(plain)], check=True)
    proc = run_pyrsan("run", plain, cwd=tmp_path)
    assert proc.returncode == 2 and "is not instrumented" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
