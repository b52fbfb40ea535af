"""What a report says about real code: the stack of an access in a function the optimiser inlined
(passes/inlined.py) and the names of members and elements of globals (passes/debuginfo.py
global_members, registered by passes/registration.py). Session 18 qa (benchmarks/README.md)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
QA = Path(__file__).resolve().parents[1] / "corpus" / "qa"


def _reports(run_pyrsan, tmp_path, *args, cwd=None):
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "--seed", 1, "--json", out, *args, cwd=cwd, timeout=600)
    assert out.exists() and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc, json.loads(out.read_text())["reports"]


def _stack(side):
    return [(Path(f["file"]).name, f["line"], f["function"]) for f in side["stack"]]


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_race_in_an_inlined_helper_shows_the_inlined_callers(run_pyrsan, tmp_path, opt):
    """The plain hooks are placed before optimisation, in stats_add; the optimiser inlines it
    into record and worker. Both sides' stacks name the three functions, as TSan's do (the
    site registered before inlining named stats_add alone)."""
    proc, reports = _reports(run_pyrsan, tmp_path, opt, QA / "inlined_helper_race.c")
    (race,) = [r for r in reports if r["kind"] == "race"]
    want = [("inlined_helper_race.c", 15, "stats_add"), ("inlined_helper_race.c", 19, "record"),
            ("inlined_helper_race.c", 24, "worker")]
    assert _stack(race["access"]) == want and _stack(race["previous"]) == want, proc.stderr[-3000:]


def test_a_race_inside_an_inlined_library_call_reaches_the_program(run_pyrsan, tmp_path):
    """std::atomic<std::shared_ptr>::store's swap of the pointer (libstdc++ 12) races with
    load(): the writing side's stack goes from std::swap through store to this program's
    lambda (line 13), and the summary names the program, not move.h."""
    proc, reports = _reports(run_pyrsan, tmp_path, "-std=c++20", PROGRAMS / "atomic_shared_ptr_swap.cpp")
    races = [r for r in reports if r["kind"] == "race"]
    assert races, proc.stderr[-3000:]
    for race in races:
        for side in ("access", "previous"):
            frames = _stack(race[side])
            assert len(frames) >= 3 and any(f[0] == "atomic_shared_ptr_swap.cpp" for f in frames), frames
    assert "SUMMARY: pyrsan: data race " in proc.stderr
    summary = proc.stderr.split("SUMMARY: pyrsan: data race ", 1)[1].split("\n", 1)[0]
    assert "atomic_shared_ptr_swap.cpp:" in summary, summary


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_members_and_elements_of_a_global_are_named_as_written(run_pyrsan, tmp_path, opt):
    """member_names_sb.c: SB on ctl.side[0].want / ctl.side[1].want, a race on
    ctl.stats[1].hits (not `ctl+24`, `ctl+56`)."""
    proc, reports = _reports(run_pyrsan, tmp_path, opt, QA / "member_names_sb.c")
    names = {(r["kind"], r["location"]["name"]) for r in reports}
    assert ("race", "ctl.stats[1].hits") in names, names
    robustness = {n for k, n in names if k == "robustness"}
    assert robustness and robustness <= {"ctl.side[0].want", "ctl.side[1].want"}, names
    assert "'ctl+" not in proc.stderr and "ctl.side[" in proc.stderr


def test_std_atomic_members_of_a_global_in_another_unit(run_pyrsan, tmp_path):
    """ring_two_tu/: an SPSC ring (release/acquire, not robust under RC20) defined in prod.cpp,
    used from main.cpp: its indices are `ring.tail` / `ring.head`, never `ring+20` nor the
    library's `ring.tail._M_i`."""
    work = tmp_path / "ring"
    shutil.copytree(PROGRAMS / "ring_two_tu", work)
    proc, reports = _reports(run_pyrsan, tmp_path, "main.cpp", "prod.cpp", cwd=work)
    names = {r["location"]["name"] for r in reports if r["kind"] == "robustness"}
    assert names and names <= {"ring.tail", "ring.head"}, (names, proc.stderr[-3000:])


def test_a_cycle_through_the_librarys_waiter_count_is_reported_at_the_programs_load(run_pyrsan, tmp_path):
    """atomic_wait_semaphore.cpp (session 17's 'flaky' report, triaged in session 18): a real
    RC20 non-SC execution through libstdc++'s waiter count (the header argues it), found by a
    bounded exploration at schedule ~200 (the default run finds it when its time budget reaches
    that far: the verdict of a default run under heavy load can differ, the analysis cannot). The
    report names the program's relaxed load and suggests the fence after the library's fetch_sub,
    at the program's own call of wait() (line 19): the library's waiter code that holds atomics
    in a loop is inlined there (passes/inline_o0.py `mark_atomic_accessors`), so the fence goes
    where the user can write it."""
    src = tmp_path / "atomic_wait_semaphore.cpp"
    shutil.copy(PROGRAMS / "atomic_wait_semaphore.cpp", src)
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "-std=c++20", "--explore", "--keep-going", "--max-schedules", 600, "--json", out,
                      src.name, cwd=tmp_path, timeout=900)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    reports = json.loads(out.read_text())["reports"]
    assert not [r for r in reports if r["kind"] == "race"], proc.stderr[-3000:]
    robustness = [r for r in reports if r["kind"] == "robustness"]
    assert robustness, proc.stderr[-3000:]
    for r in robustness:
        assert (Path(r["access"]["file"]).name, r["access"]["line"]) == ("atomic_wait_semaphore.cpp", 17), r
        assert r["location"]["name"] == "sem" and "atomic_wait_semaphore.cpp:19 (fetch_sub" in r["suggestion"], r


def test_a_negative_value_of_a_signed_atomic_is_shown_as_written(run_pyrsan, tmp_path):
    """seqlock_atomic_words.c stores -i into an atomic_int: a report naming that store shows
    `value -1 (0xffffffff)`, not `value 4294967295` (report.c rsan_value_text)."""
    proc, reports = _reports(run_pyrsan, tmp_path, "--keep-going", QA / "seqlock_atomic_words.c")
    assert any(r["location"]["name"] == "d2" for r in reports), proc.stderr[-3000:]
    assert "value -1 (0xffffffff)" in proc.stderr and "value 4294967295" not in proc.stderr, proc.stderr[-3000:]


def test_a_chase_lev_owner_polling_take_is_not_a_livelock(run_pyrsan, tmp_path):
    """The owner's take() on an empty deque stores bottom and restores it in every iteration, so
    the wait rules never park it; the scheduler's fairness bound (docs/scheduling.md, max_steps)
    must resume the thief instead of ending the run at max_steps as a hang (exit 3)."""
    src = tmp_path / "chase_lev_template_heap.cpp"
    shutil.copy(PROGRAMS / "chase_lev_template_heap.cpp", src)
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "--explore", "--max-schedules", 100, "--json", out, src.name, cwd=tmp_path, timeout=900)
    assert proc.returncode == 0 and json.loads(out.read_text())["verdict"] in ("clean", "robust"), proc.stderr[-2000:]


def test_a_race_on_a_threads_stack_names_the_thread(run_pyrsan, tmp_path):
    """stack_var_race.c: races on a local of main and on a local of a spawned thread are
    `stack of thread T0` / `stack of thread T3` (object "stack"), as ThreadSanitizer says "stack
    of main thread" / "stack of thread T3", not "not a global or heap block"."""
    proc, reports = _reports(run_pyrsan, tmp_path, "--keep-going", QA / "stack_var_race.c")
    names = sorted((r["location"].get("object"), r["location"].get("name")) for r in reports if r["kind"] == "race")
    assert names == [("stack", "stack of thread T0"), ("stack", "stack of thread T3")], (names, proc.stderr[-3000:])
    assert "Location is stack of thread T3 at 0x" in proc.stderr
