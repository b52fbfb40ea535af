"""Issue 12, item 2: scout samples (docs/scheduling.md "Scout samples"). An instrumented binary
run with no options tries several seeds in forked, confined scouts at its first scheduling
point and runs with the first seed whose schedule reported; the scouts leave no trace outside
the process, and the report names a seed that reproduces it without scouting."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
LITMUS = HERE.parent / "litmus"
SCOUT_LINE = "scout sample(s)"


@pytest.fixture(scope="module")
def built(tmp_path_factory, pyrsan_cli, pyrsan_env):
    directory = tmp_path_factory.mktemp("scouts")
    cache: dict[Path, Path] = {}

    def build(path: Path) -> Path:
        if path not in cache:
            output = directory / path.stem
            subprocess.run([*pyrsan_cli, "build", "-o", str(output), str(path)], env=pyrsan_env,
                           check=True, capture_output=True, timeout=300)
            cache[path] = output
        return cache[path]

    return build


def run_binary(executable: Path, env: dict[str, str], options: str = "", args=(), stdin: str = "",
               timeout: float = 60) -> subprocess.CompletedProcess:
    full = dict(env)
    if options:
        full["PYRSAN_OPTIONS"] = options
    return subprocess.run([str(executable), *map(str, args)], env=full, input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def first_report(path: Path) -> dict:
    return json.loads(path.read_text().splitlines()[0])


def test_scouts_leave_no_output_input_or_file_behind(built, pyrsan_env, tmp_path):
    """stdout (with a buffered line from before the fork), stdin (an offset shared with forks)
    and a file appended to by each thread: the program's effects happen exactly once."""
    executable = built(PROGRAMS / "scout_effects.c")
    for k in range(3):
        out = tmp_path / f"out{k}.txt"
        proc = run_binary(executable, pyrsan_env, "verbosity=1:print_reports=0", (out,), stdin="hello\nworld\n")
        assert proc.returncode == 66, proc.stderr
        assert SCOUT_LINE in proc.stderr
        assert proc.stdout == "start\ngot hello sigchld 0\n"
        assert sorted(out.read_text().splitlines()) == ["t1 1", "t2 1"]


def test_a_sigchld_handler_turns_scouting_off(built, pyrsan_env, tmp_path):
    """A scout's end would reach the program's handler: no scouts, and the handler saw nothing."""
    executable = built(PROGRAMS / "scout_effects.c")
    proc = run_binary(executable, pyrsan_env, "verbosity=1:print_reports=0", (tmp_path / "o.txt", "handler"),
                      stdin="hello\n")
    assert SCOUT_LINE not in proc.stderr
    assert proc.stdout == "start\ngot hello sigchld 0\n"


@pytest.mark.parametrize("options", ["seed=7", "samples=0", "sched=pct", "sched=os"])
def test_an_explicit_seed_samples_0_or_another_scheduler_do_not_scout(built, pyrsan_env, tmp_path, options):
    executable = built(PROGRAMS / "scout_effects.c")
    proc = run_binary(executable, pyrsan_env, f"{options}:verbosity=1:print_reports=0", (tmp_path / "o.txt",),
                      stdin="hello\n")
    assert SCOUT_LINE not in proc.stderr
    assert proc.stdout == "start\ngot hello sigchld 0\n"


def test_iriw_binary_reports_in_nearly_every_process_run(built, pyrsan_env):
    """One PCT sample finds IRIW about one time in four (samples=0); the scouts find it in
    nearly every process run."""
    executable = built(LITMUS / "iriw_relacq.c")
    hits = sum(run_binary(executable, pyrsan_env, "print_reports=0").returncode == 66 for _ in range(10))
    assert hits >= 8


def test_a_scouted_report_names_a_seed_that_reproduces_it(built, pyrsan_env, tmp_path):
    executable = built(LITMUS / "iriw_relacq.c")
    for k in range(6):
        json_path = tmp_path / f"r{k}.jsonl"
        proc = run_binary(executable, pyrsan_env, f"json_path={json_path}:verbosity=1")
        if proc.returncode == 66:
            break
    assert proc.returncode == 66, proc.stderr
    report = first_report(json_path)
    seed = report["schedule"]["seed"]
    assert report["schedule"]["sched"] == "auto" and f"the run uses seed {seed}" in proc.stderr
    for k in range(2):
        again = tmp_path / f"again{k}.jsonl"
        proc = run_binary(executable, pyrsan_env, f"seed={seed}:json_path={again}:verbosity=1")
        assert proc.returncode == 66 and SCOUT_LINE not in proc.stderr
        repeated = first_report(again)
        assert (repeated["access"]["line"], repeated["step"], repeated["schedule"]) == \
            (report["access"]["line"], report["step"], report["schedule"])


def test_a_program_whose_threads_talk_through_a_pipe_still_works(built, pyrsan_env):
    """In a scout the pipe fails (EPERM); the real run hands over on the stall as before."""
    executable = built(PROGRAMS / "pipe_handoff.c")
    proc = run_binary(executable, pyrsan_env, "verbosity=1")
    assert proc.returncode == 0 and "got a" in proc.stdout, proc.stderr


def test_threads_that_share_no_atomic_pay_one_scout(built, pyrsan_env, tmp_path, pyrsan_cli):
    """No two threads' operations conflict (the reads after the joins are ordered): every seed
    runs an equivalent schedule, so the scouting stops after the first scout."""
    executable = built(PROGRAMS / "private_atomics.c")
    proc = run_binary(executable, pyrsan_env, "verbosity=1")
    assert proc.returncode == 0 and proc.stdout == "total 200\n", proc.stderr
    assert "sched=auto: 1 scout sample(s)" in proc.stderr
    shared = tmp_path / "shared"
    subprocess.run([*pyrsan_cli, "build", "-DSHARED", "-o", str(shared), str(PROGRAMS / "private_atomics.c")],
                   env=pyrsan_env, check=True, capture_output=True, timeout=300)
    proc = run_binary(shared, pyrsan_env, "verbosity=2")
    assert proc.returncode == 0 and proc.stdout == "total 200\n", proc.stderr
    assert "scout 2:" in proc.stderr, "a shared counter: the scouts go on"
