"""`pyrsan run --sched/--seed/--replay/--explore` end to end (docs/scheduling.md, "Driver side")."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from pyrsan.schedule import read_schedule, read_trace

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
LITMUS = HERE.parent / "litmus"


def run_json(run_pyrsan, tmp_path, *args, timeout=300):
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--json", out, "--schedule-dir", tmp_path / "schedules", *args, timeout=timeout)
    document = json.loads(out.read_text()) if out.exists() else None
    return proc, document


def test_a_pct_report_says_how_to_reproduce_it_and_the_replay_gives_the_same_report(run_pyrsan, tmp_path):
    proc, found = run_json(run_pyrsan, tmp_path, "--sched", "pct", "--seed", "11", "--runs", "10",
                           LITMUS / "sb_relacq.c")
    assert proc.returncode == 66, proc.stderr
    report = found["reports"][0]
    reproduce = report["reproduce"]
    assert reproduce["sched"] == "pct" and reproduce["seed"] >= 11
    assert f"pyrsan run --replay {reproduce['schedule_file']}" in proc.stderr
    assert f"--sched pct --seed {reproduce['seed']}" in proc.stderr
    assert read_schedule(reproduce["schedule_file"])

    replay_dir = tmp_path / "replay"
    replay_dir.mkdir()
    again, replayed = run_json(run_pyrsan, replay_dir, "--replay", reproduce["schedule_file"], LITMUS / "sb_relacq.c")
    assert again.returncode == 66, again.stderr
    assert [r["key"] for r in replayed["reports"]] == [r["key"] for r in found["reports"]][:len(replayed["reports"])]
    assert replayed["reports"][0]["step"] == report["step"]
    assert replayed["runs"] == 1 and replayed["schedule"]["replay"] == reproduce["schedule_file"]


def test_the_same_seed_gives_the_same_schedule(run_pyrsan, tmp_path):
    decisions = []
    for attempt in ("first", "second"):
        directory = tmp_path / attempt
        directory.mkdir()
        proc, document = run_json(run_pyrsan, directory, "--sched", "random", "--seed", "5",
                                  PROGRAMS / "deadlock_after_violation.c")
        assert proc.returncode in (3, 66), proc.stderr
        (saved,) = (directory / "schedules").iterdir()
        decisions.append(read_schedule(saved))
    assert decisions[0] == decisions[1]


def test_a_fresh_seed_is_chosen_and_printed(run_pyrsan, tmp_path):
    proc, document = run_json(run_pyrsan, tmp_path, "--sched", "random", "--runs", "2", PROGRAMS / "same_stores.c")
    assert proc.returncode == 0, proc.stderr
    seed = document["schedule"]["seed"]
    assert isinstance(seed, int) and f"pyrsan: sched=random, seeds {seed}..{seed + 1}" in proc.stderr


@pytest.mark.parametrize("program, schedules", [("distinct_stores.c", 1), ("same_stores.c", 2)])
def test_exploration_runs_one_schedule_per_interleaving_class(run_pyrsan, tmp_path, program, schedules):
    proc, document = run_json(run_pyrsan, tmp_path, "--explore", PROGRAMS / program)
    assert proc.returncode == 0, proc.stderr
    assert document["verdict"] == "robust"
    assert document["exploration"]["complete"] is True
    assert document["exploration"]["schedules"] == schedules
    assert document["exploration"]["bound"] is None
    assert "the program is robust for this input" in proc.stderr and "Thm 3.1" in proc.stderr


def test_exploration_finds_store_buffering_with_release_acquire(run_pyrsan, tmp_path):
    proc, document = run_json(run_pyrsan, tmp_path, "--explore", LITMUS / "sb_relacq.c")
    assert proc.returncode == 66, proc.stderr
    assert document["verdict"] == "violations"
    assert document["exploration"]["complete"] is False
    assert document["reports"][0]["reproduce"]["sched"] == "dfs"


def test_exploration_proves_store_buffering_with_seq_cst_robust(run_pyrsan, tmp_path):
    proc, document = run_json(run_pyrsan, tmp_path, "--explore", "--jobs", "2", LITMUS / "sb_sc.c")
    assert proc.returncode == 0, proc.stderr
    assert document["verdict"] == "robust" and document["reports"] == []
    # one schedule per class of the real locations' orders (3), each run's SC-fence orders
    # searched by the runtime (docs/design/exploration.md, the F-order closure)
    assert document["exploration"]["complete"] is True and document["exploration"]["schedules"] >= 3


@pytest.mark.parametrize("name", ["dekker_fenced.c", "peterson_fenced.c"])
def test_exploration_proves_mutual_exclusion_with_two_spinning_threads_robust(name, run_pyrsan, tmp_path):
    # both threads may spin at once, each re-reading two locations: the scheduler must give each
    # spinner a turn (round-robin), or the default continuation re-reads for ever (max_steps)
    proc, document = run_json(run_pyrsan, tmp_path, "--explore", "--jobs", "2", LITMUS / name)
    assert proc.returncode == 0, proc.stderr
    assert document["verdict"] == "robust" and document["exploration"]["complete"] is True
    assert not document["timeouts"]


def test_a_schedule_bound_makes_the_exploration_a_sample_not_a_proof(run_pyrsan, tmp_path):
    proc, document = run_json(run_pyrsan, tmp_path, "--explore", "--max-schedules", "2", LITMUS / "sb_sc.c")
    assert proc.returncode == 0, proc.stderr
    assert document["verdict"] == "clean"
    assert document["exploration"] == {**document["exploration"], "complete": False, "schedules": 2,
                                       "bound": "max-schedules=2"}
    assert "not a proof" in proc.stderr


def test_a_deadlock_alone_exits_3_with_each_thread_and_its_stack(run_pyrsan, tmp_path):
    proc, document = run_json(run_pyrsan, tmp_path, "--sched", "dfs", PROGRAMS / "self_deadlock.c")
    assert proc.returncode == 3, proc.stderr
    assert "waits for the end of thread T1 (join)" in proc.stderr
    assert "self_deadlock.c:9" in proc.stderr and "self_deadlock.c:18" in proc.stderr
    assert document["verdict"] == "error" and document["reports"] == []
    (deadlock,) = document["deadlocks"]
    assert {t["thread"] for t in deadlock["threads"]} == {0, 1}
    assert deadlock["reproduce"]["schedule_file"]


def test_exploration_reverses_the_races_of_a_thread_left_blocked_at_the_exit(run_pyrsan, tmp_path):
    """main returns holding the mutex its thread waits for: the first run ends with the thread
    blocked, its lock never ran. Its race with main's lock must still be reversed: the thread
    that locks first forms store buffering with main (not robust), never a proof after 1 run."""
    proc, document = run_json(run_pyrsan, tmp_path, "--explore", PROGRAMS / "exit_holding_lock.c")
    assert proc.returncode == 66, proc.stderr
    assert document["verdict"] == "violations"
    assert "robust for this input" not in proc.stderr


def test_an_exploration_that_deadlocks_is_never_a_proof_and_exits_3(run_pyrsan, tmp_path):
    proc, document = run_json(run_pyrsan, tmp_path, "--explore", "--keep-going", PROGRAMS / "self_deadlock.c")
    assert proc.returncode == 3, proc.stderr
    assert document["verdict"] == "error" and document["deadlocks"]
    assert "robust for this input" not in proc.stderr


def test_a_deadlock_after_a_violation_exits_66(run_pyrsan, tmp_path):
    proc, document = run_json(run_pyrsan, tmp_path, "--sched", "dfs", PROGRAMS / "deadlock_after_violation.c")
    assert proc.returncode == 66, proc.stderr
    assert document["reports"] and document["deadlocks"]
    assert "deadlock" in proc.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory, pyrsan_cli, pyrsan_env):
    """build(name) -> path of the instrumented program (built once per module)."""
    directory = tmp_path_factory.mktemp("built")
    cache: dict[str, Path] = {}

    def build(name: str) -> Path:
        if name not in cache:
            output = directory / Path(name).stem
            subprocess.run([*pyrsan_cli, "build", "-o", str(output), str(PROGRAMS / name)], env=pyrsan_env,
                           check=True, capture_output=True, timeout=300)
            cache[name] = output
        return cache[name]

    return build


@pytest.mark.parametrize("program", ["spin_flag.c", "spin_two_locations.c"])
def test_spin_loops_terminate_under_every_strategy(built, pyrsan_env, tmp_path, program):
    executable = built(program)
    for sched in ("os", "random", "pct", "dfs"):
        for seed in range(3 if sched in ("random", "pct") else 1):
            trace = tmp_path / f"{sched}-{seed}.trace"
            env = dict(pyrsan_env, PYRSAN_OPTIONS=f"sched={sched}:seed={seed}:trace_path={trace}")
            proc = subprocess.run([str(executable)], env=env, capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, (sched, seed, proc.stderr)
            if sched != "os":
                assert read_trace(trace).end == "exit"


def test_spin_loops_terminate_under_exploration(run_pyrsan, tmp_path):
    proc, document = run_json(run_pyrsan, tmp_path, "--timeout", "60", "--explore", PROGRAMS / "spin_two_locations.c")
    assert proc.returncode == 0, proc.stderr
    assert document["verdict"] == "robust" and document["timeouts"] == []


@pytest.mark.parametrize("args, message", [
    (["--sched", "os", "--seed", "3"], "--seed applies to --sched auto, random or pct"),
    (["--sched", "dfs", "--pct-depth", "2"], "--pct-depth applies to --sched pct or auto only"),
    (["--explore", "--sched", "pct"], "--explore runs under --sched dfs"),
    (["--explore", "--runs", "3"], "no --runs"),
    (["--jobs", "2"], "--jobs applies to --explore only"),
    (["--replay", "missing.sched"], "cannot read schedule missing.sched"),
])
def test_bad_schedule_options_are_one_line_and_exit_2(run_pyrsan, tmp_path, args, message):
    proc = run_pyrsan("run", *args, PROGRAMS / "same_stores.c", cwd=tmp_path)
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def _line_of(path: Path, marker: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


@pytest.mark.parametrize("defines", [(), ("-DEXIT_FENCE",)])
def test_a_suggested_repair_never_names_a_fence_that_is_already_there(run_pyrsan, tmp_path, defines):
    """The 3-thread filter lock has an SC fence right after its victim store (and, with
    EXIT_FENCE, right after its exit store) and still reports: naming those fences again would
    send the maintainer round in circles."""
    program = PROGRAMS / "filter_lock_fenced.c"
    proc, document = run_json(run_pyrsan, tmp_path, "--explore", *defines, program)
    assert proc.returncode == 66, proc.stderr
    name = program.name
    victim, exit_store = _line_of(program, "VICTIM STORE"), _line_of(program, "EXIT STORE")
    for report in document["reports"]:
        text = report["suggestion"] if "suggestion" in report else proc.stderr
        assert not re.search(rf"in thread \d+ between {name}:{victim} ", text), text
        if defines:
            assert f"right after {name}:{exit_store} " not in text, text
            assert (report.get("repair") or {}).get("after", {}).get("line") != exit_store
    assert "Suggestion:" in proc.stderr
