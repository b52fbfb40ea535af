"""End-to-end race detection (issue 4): every program in this directory through the real CLI.

A program starts with `//` comment lines:

    // race: yes|no          expected race verdict under the default options (required)
    // robust: yes|no        expected robustness verdict (required)
    // env: NAME=VALUE ...   environment of the run (optional)
    // runs: N               executions (optional, default 1)
    // opt: -O0 -O1          optimisation levels, one run of the test each (optional, default:
                             the CLI's default)
    // reason: ...           why the verdict holds (C11 / algorithm.md §5)
    // One line describing the test.

A racy program marks the source lines a race report may name with `// pyrsan: race`; every
reported race must name marked lines on both sides.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted([*HERE.glob("*.c"), *HERE.glob("*.cpp")])
_FIELD = re.compile(r"^//\s*([a-z]+)\s*:\s*(.*?)\s*$")
_MARK = re.compile(r"//.*\bpyrsan:\s*race\b")


@dataclass(frozen=True)
class RaceProgram:
    path: Path
    race: bool
    robust: bool
    env: dict
    runs: int
    opts: tuple
    description: str
    race_lines: frozenset


def parse(path: Path) -> RaceProgram:
    lines = path.read_text(encoding="utf-8").splitlines()
    fields, description = {}, ""
    for line in lines:
        if not line.startswith("//"):
            break
        m = _FIELD.match(line)
        if m and m.group(1) in ("race", "robust", "env", "runs", "opt", "reason"):
            fields[m.group(1)] = m.group(2)
        elif not description:
            description = line[2:].strip()
    for key in ("race", "robust"):
        assert fields.get(key) in ("yes", "no"), f"{path.name}: '// {key}: yes|no' missing"
    assert description, f"{path.name}: no description line"
    marks = frozenset(i for i, line in enumerate(lines, 1) if _MARK.search(line))
    race = fields["race"] == "yes"
    assert race == bool(marks), f"{path.name}: a racy program marks its racing lines, a race-free one none"
    env = dict(item.split("=", 1) for item in fields.get("env", "").split())
    opts = tuple(fields.get("opt", "").split())
    assert all(re.fullmatch(r"-O[0-3s]", o) for o in opts), f"{path.name}: bad '// opt:' field"
    return RaceProgram(path, race, fields["robust"] == "yes", env, int(fields.get("runs", "1")),
                       opts or ("",), description, marks)


CASES = [(p, opt) for p in PROGRAMS for opt in parse(p).opts]


@pytest.mark.parametrize("path,opt", CASES, ids=[p.name + opt for p, opt in CASES])
def test_race_verdict_and_reported_lines(path, opt, run_pyrsan, tmp_path):
    prog = parse(path)
    out = tmp_path / "result.json"
    proc = run_pyrsan("run", "--runs", prog.runs, "--timeout", 60, "--json", out,
                      *([opt] if opt else []), path, env=prog.env, timeout=300)
    assert out.exists(), proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    reports = doc["reports"]
    races = [r for r in reports if r["kind"] == "race"]
    robustness = [r for r in reports if r["kind"] == "robustness"]
    context = f"{path.name}{opt} ({prog.description})\n{proc.stderr[-3000:]}"
    assert bool(races) == prog.race, context
    assert (not robustness) == prog.robust, context
    assert proc.returncode == (66 if reports else 0), context
    for r in races:
        for side in ("access", "previous"):
            assert Path(r[side]["file"]).name == path.name, context
            assert r[side]["line"] in prog.race_lines, context
        assert {r["access"]["type"], r["previous"]["type"]} & {"write"}, context
        assert r["access"]["thread"] != r["previous"]["thread"], context


def test_the_suite_covers_the_issue_4_scenarios():
    names = {p.stem for p in PROGRAMS}
    assert {"mp_relacq", "mp_rlx", "mp_fences", "relseq_fetch_add", "relseq_broken",
            "mutex_counter", "counter_unprotected", "cond_handoff", "heap_queue",
            "free_remalloc", "mixed_atomic_plain"} <= names
    verdicts = [parse(p).race for p in PROGRAMS]
    assert 0 < sum(verdicts) < len(verdicts)


def test_race_report_names_the_object_the_threads_and_their_creation(run_pyrsan, tmp_path):
    out = tmp_path / "result.json"
    run_pyrsan("run", "--json", out, HERE / "mp_rlx.c", timeout=300)
    (race,) = [r for r in json.loads(out.read_text())["reports"] if r["kind"] == "race"]
    assert race["location"]["name"] == "data" and race["location"]["object"] == "global"
    assert (race["access"]["function"], race["previous"]["function"]) == ("reader", "writer")
    assert (race["access"]["size"], race["previous"]["size"]) == (4, 4)
    threads = {t["thread"]: t for t in race["threads"]}
    assert set(threads) == {race["access"]["thread"], race["previous"]["thread"]}
    for t in threads.values():
        assert t["created_by"] == 0 and t["function"] == "main"


def test_heap_block_of_a_race_is_named_with_its_allocation(run_pyrsan, tmp_path):
    src = tmp_path / "heap_race.c"
    src.write_text(
        "#include <pthread.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
        "int *p;\n"
        "void *w(void *a) { p[1] = 1; return a; }\n"
        "int main(void) {\n"
        "  p = calloc(4, sizeof *p);\n"
        "  pthread_t t; pthread_create(&t, 0, w, 0);\n"
        "  p[1] = 2;\n"
        "  pthread_join(t, 0);\n"
        "  printf(\"%d\\n\", p[1]);\n"
        "  return 0;\n}\n")
    out = tmp_path / "result.json"
    proc = run_pyrsan("run", "--json", out, src, timeout=300)
    races = [r for r in json.loads(out.read_text())["reports"] if r["kind"] == "race"]
    assert len(races) == 1, proc.stderr
    loc = races[0]["location"]
    assert loc["object"] == "heap"
    assert loc["block"]["size"] == 16 and loc["block"]["thread"] == 0 and loc["block"]["line"] == 7
    assert int(loc["address"], 16) == int(loc["block"]["address"], 16) + 4
    assert loc["name"] == "offset 4 of heap block allocated at heap_race.c:7"


def test_no_races_option_turns_race_reports_off(run_pyrsan, tmp_path):
    out = tmp_path / "result.json"
    proc = run_pyrsan("run", "--no-races", "--json", out, HERE / "counter_unprotected.c", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["reports"] == []


def _tsan_build(src: Path, exe: Path) -> bool:
    cc = shutil.which("clang-22")
    if not cc:
        return False
    res = subprocess.run([cc, "-fsanitize=thread", "-g", "-O1", str(src), "-o", str(exe)],
                         capture_output=True, text=True)
    return res.returncode == 0


def test_thread_sanitizer_reports_the_fenced_mp_that_pyrsan_proves_race_free(run_pyrsan, tmp_path):
    """ThreadSanitizer ignores standalone fences (issue 4): on mp_fences.c it reports a race
    that C11 rules out; pyrsan, following algorithm.md §5.2's fence rules, does not."""
    src = HERE / "mp_fences.c"
    exe = tmp_path / "mp_fences_tsan"
    if not _tsan_build(src, exe):
        pytest.skip("clang-22 -fsanitize=thread is not available")
    tsan = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                          env={"TSAN_OPTIONS": "halt_on_error=0 exitcode=0"})
    assert "WARNING: ThreadSanitizer: data race" in tsan.stderr, tsan.stderr[-2000:]
    out = tmp_path / "result.json"
    proc = run_pyrsan("run", "--json", out, src, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["reports"] == []


def test_race_suppression_silences_the_race_and_is_counted(run_pyrsan, tmp_path):
    supp = tmp_path / "supp.txt"
    supp.write_text("race:writer\n")
    out = tmp_path / "result.json"
    proc = run_pyrsan("run", "--suppressions", supp, "--json", out, HERE / "mp_rlx.c", timeout=300)
    doc = json.loads(out.read_text())
    assert proc.returncode == 0, proc.stderr
    assert doc["reports"] == [] and doc["suppressed"] == 1


def test_no_robustness_option_keeps_race_reports(run_pyrsan, tmp_path):
    out = tmp_path / "result.json"
    proc = run_pyrsan("run", "--no-robustness", "--json", out, HERE / "counter_unprotected.c", timeout=300)
    assert proc.returncode == 66, proc.stderr
    assert {r["kind"] for r in json.loads(out.read_text())["reports"]} == {"race"}


@pytest.mark.parametrize("sched", ["random", "pct", "dfs"])
def test_static_local_initialisation_terminates_cleanly_under_controlled_schedulers(sched, run_pyrsan,
                                                                                    tmp_path):
    # a second thread must wait for the initialiser in the scheduler, not in libstdc++'s futex
    out = tmp_path / "out.json"
    seed = () if sched == "dfs" else ("--seed", 7)
    proc = run_pyrsan("run", "--sched", sched, *seed, "--runs", 3, "--timeout", 60, "--json", out,
                      HERE / "static_local_yielding_ctor.cpp", timeout=300)
    document = json.loads(out.read_text())
    assert proc.returncode == 0, proc.stderr
    assert document["verdict"] == "clean" and not document["timeouts"]


def test_the_dead_racy_read_is_unseen_when_plain_accesses_are_instrumented_after_opt(run_pyrsan, tmp_path):
    """The contrast of dead_read_race.c: with PYRSAN_PLAIN_AFTER_OPT=1 (instrumentation after
    clang's -O1, the pre-issue-13 pipeline) the load is gone before it could be hooked."""
    out = tmp_path / "result.json"
    proc = run_pyrsan("run", "--json", out, HERE / "dead_read_race.c",
                      env={"PYRSAN_PLAIN_AFTER_OPT": "1"}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["reports"] == []
