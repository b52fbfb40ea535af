"""Await loops (passes/awaitloops.py, runtime/src/sched_await.c, docs/design/exploration.md §7):
a waiting loop over several locations, with SC fences between its reads, is marked by the
passes, and under ``--explore`` a thread whose iterations repeat themselves waits for a write
to what they read. Checked against the brute force without that (``sched_await=0``: every
iteration is a step the schedule tree enumerates): the same verdict, every report key and
group, and no other; and the exploration takes fewer schedules."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .brute import TooManyInterleavings, await_program, compare, every_interleaving
from .test_brute_force import build

FENCE = "atomic_thread_fence(memory_order_seq_cst)"
HEAD = "#include <pthread.h>\n#include <stdatomic.h>\natomic_int x, y, z;\n"
MAIN2 = """
int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t1, 0);
  t0();
  pthread_join(a, 0);
  return 0;
}
"""
MAIN3 = """
int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  t0();
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
"""

#: name -> (source, robust, default test). Each waits in a loop over two locations with SC fences
#: between its reads (marked as an await loop).
PROGRAMS = {
    # robust: message passing with release/acquire
    "two_flags": (HEAD + f"""
static void t0(void) {{ atomic_store_explicit(&x, 1, memory_order_release);
  atomic_store_explicit(&y, 1, memory_order_release); }}
static void *t1(void *p) {{ for (;;) {{ {FENCE}; int a = atomic_load_explicit(&x, memory_order_acquire);
  {FENCE}; int b = atomic_load_explicit(&y, memory_order_acquire); if (a && b) break; }} return p; }}
""" + MAIN2, True, True),
    # not robust (MP): relaxed flags, the waiter reads x after seeing y
    "message_passing": (HEAD + f"""
static void t0(void) {{ atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_relaxed); }}
static void *t1(void *p) {{ for (;;) {{ {FENCE}; int a = atomic_load_explicit(&y, memory_order_relaxed);
  {FENCE}; int b = atomic_load_explicit(&z, memory_order_relaxed); if (a || b) break; }}
  (void)atomic_load_explicit(&x, memory_order_relaxed); return p; }}
""" + MAIN2, False, True),
    # ACQUIRED_GAP (docs/scheduling.md) with T1 as a waiting loop: its acquire load of y gives it
    # SC-only knowledge of z, which only its next iteration's fence hands to F
    "acquired_gap_loop": (HEAD + f"""
static void t0(void) {{ atomic_store_explicit(&z, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_relaxed); }}
static void *t1(void *p) {{ for (;;) {{ {FENCE}; int a = atomic_load_explicit(&y, memory_order_acquire);
  int b = atomic_load_explicit(&x, memory_order_relaxed); if (b) break; (void)a; }} return p; }}
static void *t2(void *p) {{ {FENCE}; (void)atomic_load_explicit(&z, memory_order_relaxed);
  atomic_store_explicit(&x, 1, memory_order_relaxed); return p; }}
""" + MAIN3, None, False),
    # not robust only across iterations (docs/design/exploration.md §9): a failed iteration reads
    # z = 1, which gives its thread SC-only knowledge of y = 1, and a later iteration reads y = 0.
    # No single iteration reads both stale: dropping the failed iteration (blocking the thread
    # after it) without its monitor effects loses the report. The load of x registers T1 with
    # the scheduler before the loop (a thread's first await head comes before that).
    "mp_across_iterations": (HEAD + """
static void t0(void) { atomic_store_explicit(&y, 1, memory_order_relaxed);
  atomic_store_explicit(&z, 1, memory_order_relaxed); }
static void *t1(void *p) { (void)atomic_load_explicit(&x, memory_order_relaxed);
  for (;;) { int a = atomic_load_explicit(&y, memory_order_relaxed);
  int b = atomic_load_explicit(&z, memory_order_relaxed); if (a + b == 2) break; } return p; }
""" + MAIN2, False, True),
    # not robust through an iteration's SC fence (docs/design/exploration.md §9, condition (ii)):
    # T2 reads x = 1 and fences, which puts y = 1 into F's hb_SC clock but not into its hb clock;
    # T1's loop starts with a load of y and fences in the middle. An iteration that read y = 0
    # before that and fenced after imports y = 1 on the hb_SC side only, and the next
    # iteration's first load, of y, is the violation. Blocking T1 after the first would lose it:
    # no load of T1 imports y = 1 (T2 writes z before it reads x). (T1's load of z before the
    # loop registers it with the scheduler.)
    "fence_in_the_middle": (HEAD + f"""
static void *t1(void *p) {{ (void)atomic_load_explicit(&z, memory_order_relaxed);
  for (;;) {{ int a = atomic_load_explicit(&y, memory_order_relaxed); {FENCE};
    int b = atomic_load_explicit(&z, memory_order_relaxed); if (a && b) break; }} return p; }}
static void *t2(void *p) {{ atomic_store_explicit(&z, 1, memory_order_relaxed);
  (void)atomic_load_explicit(&x, memory_order_relaxed); {FENCE}; return p; }}
static void t0(void) {{ atomic_store_explicit(&y, 1, memory_order_relaxed);
  atomic_store_explicit(&x, 1, memory_order_relaxed); }}
""" + MAIN3, False, False),
}


def marked(pyrsan_cli, pyrsan_env, src: Path, work: Path) -> str:
    proc = subprocess.run([*pyrsan_cli, "build", "--keep-temps", str(src), "-o", str(work / "k")],
                          env=pyrsan_env, capture_output=True, text=True, timeout=600, check=True)
    kept = Path(proc.stderr.strip().split()[-1])
    return "\n".join(p.read_text() for p in kept.glob("*.rsan.ll"))


@pytest.mark.parametrize("name", [n for n, p in sorted(PROGRAMS.items()) if p[2]])
def test_await_loops_keep_every_report(name, tmp_path, pyrsan_cli, pyrsan_env):
    text, robust, _ = PROGRAMS[name]
    exe = build(pyrsan_cli, pyrsan_env, text, tmp_path, name)
    assert "@__rsan_await_head(" in marked(pyrsan_cli, pyrsan_env, tmp_path / f"{name}.c", tmp_path)
    result = compare(str(exe), tmp_path / "w", modes=("1", "0"), max_runs=60000, brute_await=False)
    assert not result.disagreements(), result.disagreements()
    assert all(complete for _, complete, *_ in result.explored.values())
    if robust is not None:
        assert result.brute_keys == set() if robust else result.brute_keys


def test_the_waiting_thread_takes_an_await_step(tmp_path, pyrsan_cli, pyrsan_env):
    """The waiter runs first (the continuation keeps it): after its iterations repeat it takes the
    await step, enabled by main's store, and the run goes on; with sched_await=0 it does not."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS["two_flags"][0], tmp_path, "p")
    kinds = {}
    for flag in ("1", "0"):
        trace = tmp_path / f"t{flag}.jsonl"
        (tmp_path / "s").write_text("pyrsan-schedule 1\n0 1\n")
        env = dict(pyrsan_env, PYRSAN_OPTIONS=f"sched=dfs schedule={tmp_path / 's'} trace_path={trace} "
                                              f"sched_await={flag}")
        subprocess.run([str(exe)], env=env, check=True, timeout=60)
        lines = [json.loads(line) for line in trace.read_text().splitlines()]
        kinds[flag] = [op[1] for line in lines if "step" in line for op in line["enabled"] if op[0] == line["tid"]]
    assert "await" in kinds["1"] and "await" not in kinds["0"]


#: T1 loads y first and fences after it (docs/design/exploration.md §10: its units are rotated)
FENCE_LATER = HEAD + f"""
static void t0(void) {{ atomic_store_explicit(&y, 1, memory_order_release);
  atomic_store_explicit(&z, 1, memory_order_release); }}
static void *t1(void *p) {{ (void)atomic_load_explicit(&x, memory_order_relaxed);
  for (;;) {{ int a = atomic_load_explicit(&y, memory_order_acquire); {FENCE};
    int b = atomic_load_explicit(&z, memory_order_acquire); if (a && b) break; }} return p; }}
""" + MAIN2


def test_a_rotated_unit_takes_its_await_step_before_its_fence(tmp_path, pyrsan_cli, pyrsan_env):
    """§10: the waiter of a loop whose first step is a load and that fences runs first (the
    continuation keeps it); its units, rotated to begin at the SC fence, repeat, and it takes
    the await step right before that fence (not at the header, before its load: there §7's
    argument does not hold), then runs on once main's store wakes it."""
    exe = build(pyrsan_cli, pyrsan_env, FENCE_LATER, tmp_path, "p")
    trace = tmp_path / "t.jsonl"
    (tmp_path / "s").write_text("pyrsan-schedule 1\n0 1\n")
    env = dict(pyrsan_env, PYRSAN_OPTIONS=f"sched=dfs schedule={tmp_path / 's'} trace_path={trace}")
    subprocess.run([str(exe)], env=env, check=True, timeout=60)
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    own = [op[1] for line in lines if "step" in line for op in line["enabled"] if op[0] == line["tid"] == 1]
    awaits = [i for i, kind in enumerate(own) if kind == "await"]
    assert awaits, own
    assert all(i + 1 < len(own) and own[i + 1] == "fence_sc" for i in awaits), own


def _explore(exe: Path, work: Path, await_flag: str, closure: str):
    """The result of ``--explore --keep-going`` with sched_await=await_flag."""
    from pyrsan.runner import ExploreOptions, RunOptions, explore_program

    saved = os.environ.get("PYRSAN_OPTIONS")
    os.environ["PYRSAN_OPTIONS"] = f"sched_await={await_flag}"
    try:
        options = RunOptions(work_dir=str(work), quiet=True, timeout=60, keep_going=True, closure=closure)
        return explore_program(str(exe), [], options, ExploreOptions(max_schedules=20000, jobs=1))
    finally:
        if saved is None:
            os.environ.pop("PYRSAN_OPTIONS", None)
        else:
            os.environ["PYRSAN_OPTIONS"] = saved


def explored(exe: Path, work: Path, await_flag: str, closure: str = "1"):
    """(complete, report keys, schedules) of ``--explore`` with sched_await=await_flag."""
    from .brute import explored_keys

    result = _explore(exe, work, await_flag, closure)
    return result.exploration.complete, explored_keys(result)[0], result.exploration.schedules


@pytest.mark.slow
def test_await_loops_keep_the_reports_of_a_three_thread_program(tmp_path, pyrsan_cli, pyrsan_env):
    """acquired_gap_loop (too many interleavings for the brute force): the exploration with the
    await steps finds the reports of the one without them (every iteration a step of its own)."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS["acquired_gap_loop"][0], tmp_path, "p")
    for closure in ("1", "0"):
        complete0, keys0, _ = explored(exe, tmp_path / f"off{closure}", "0", closure)
        complete1, keys1, _ = explored(exe, tmp_path / f"on{closure}", "1", closure)
        assert complete0 and complete1
        assert keys1 == keys0


def test_blocked_iterations_without_their_monitor_effects_lose_a_report(tmp_path, pyrsan_cli, pyrsan_env):
    """``sched_await=-1`` (measurements only) blocks a thread for ever after any failed iteration, as
    GenMC does with a blocked spin iteration, but drops what that iteration did to the monitor:
    on mp_across_iterations its exploration is complete and finds nothing, where every interleaving
    (test_await_loops_keep_every_report) makes a report. What makes it exact is the condition of
    docs/design/exploration.md §9 on the failed iteration: its loads import nothing into its Tsc."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS["mp_across_iterations"][0], tmp_path, "p")
    for closure in ("1", "0"):
        complete, keys, schedules = explored(exe, tmp_path / f"b{closure}", "-1", closure)
        assert complete and not keys, (closure, keys)
        complete, keys, _ = explored(exe, tmp_path / f"d{closure}", "1", closure)
        assert complete and keys, closure


def explored_groups(exe: Path, work: Path, await_flag: str, closure: str = "0"):
    """(complete, report keys, report groups, schedules) of ``--explore --keep-going`` with
    sched_await=await_flag."""
    from .brute import explored_keys

    result = _explore(exe, work, await_flag, closure)
    assert not result.deadlocked   # a run whose blocked threads had news ends as an exit
    assert not any(run.hung for run in result.runs)   # no thread spins to max_steps
    keys, groups = explored_keys(result)
    return result.exploration.complete, keys, groups, result.exploration.schedules


def disagreements(brute, complete: bool, keys: set[str], groups: set[str]) -> list[str]:
    """What an exploration (complete, keys, groups) gets wrong against every interleaving
    (``sched_await=0``): an incomplete exploration, a report no interleaving makes, another
    verdict or a missed report group (docs/design/exploration.md §9 keeps groups, not every key)."""
    out = []
    if not complete:
        out.append("incomplete")
    if keys - brute.keys:
        out.append(f"reports no interleaving makes: {sorted(keys - brute.keys)}")
    if bool(keys) != bool(brute.keys):
        out.append(f"verdict {'not robust' if keys else 'robust'}, every interleaving the other")
    if brute.groups - groups:
        out.append(f"missed groups {sorted(brute.groups - groups)}")
    return out


def blocked_disagreements(exe: Path, work: Path, max_runs: int = 20000, await_flag: str = "-2",
                          closure: str = "0") -> list[str] | None:
    """``disagreements`` of ``sched_await=-2`` (blocked iterations, today's relation), or of
    await_flag under closure. None: too many interleavings for the brute force."""
    try:
        brute = every_interleaving(str(exe), work / "brute", max_runs=max_runs, await_loops=False)
    except TooManyInterleavings:
        return None
    return disagreements(brute, *explored_groups(exe, work / "explored", await_flag, closure)[:3])


@pytest.mark.parametrize("name", ["two_flags", "message_passing", "mp_across_iterations"])
def test_blocked_iterations_keep_every_group(name, tmp_path, pyrsan_cli, pyrsan_env):
    """sched_await=-2 against every interleaving: the same verdict and report groups, no other
    report; and fewer schedules than the await after three repeats."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS[name][0], tmp_path, name)
    assert blocked_disagreements(exe, tmp_path) == []
    *_, blocked = explored_groups(exe, tmp_path / "b", "-2")
    *_, awaited = explored_groups(exe, tmp_path / "a", "1")
    assert blocked < awaited


def random_blocked(seed: int, count: int, tmp_path: Path, pyrsan_cli, pyrsan_env,
                   modes: tuple[tuple[str, str], ...] = (("-2", "0"),), make=None,
                   only=None) -> tuple[int, int]:
    """The random programs of make (brute.await_program): (compared, with reports); only: the
    indices of those run. Asserts that the exploration with each (sched_await, sched_closure) of
    modes is complete (no thread spins to max_steps: explored_groups) and, where every
    interleaving fits the brute force's 20,000, that it does not disagree with them."""
    import random

    rng = random.Random(seed)
    compared = reported = 0
    for k in range(count):
        text = (make or await_program)(rng)
        if only is not None and k not in only:
            continue
        (tmp_path / f"p{k}").mkdir()
        exe = build(pyrsan_cli, pyrsan_env, text, tmp_path / f"p{k}", "p")
        try:
            brute = every_interleaving(str(exe), tmp_path / f"b{k}", max_runs=20000, await_loops=False)
        except TooManyInterleavings:
            brute = None
        for flag, closure in modes:
            complete, *explored = explored_groups(exe, tmp_path / f"e{k}_{flag}_{closure}", flag, closure)
            assert complete, (flag, closure, text)
            if brute is not None:
                wrong = disagreements(brute, complete, *explored[:2])
                assert not wrong, (flag, closure, wrong, text)
        if brute is not None:
            compared += 1
            reported += bool(brute.keys)
    return compared, reported


def test_blocked_iterations_on_random_waiting_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, _ = random_blocked(1, 3, tmp_path, pyrsan_cli, pyrsan_env)
    assert compared >= 2


@pytest.mark.slow
def test_blocked_iterations_on_more_random_waiting_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, _ = random_blocked(2, 20, tmp_path, pyrsan_cli, pyrsan_env)
    assert compared >= 8   # 10 of the 20 fit the brute force's 20,000 interleavings


#: the default await (sched_await=1) under today's relation and under the closure (`pyrsan run`)
DEFAULT_AWAIT = (("1", "0"), ("1", "1"))


def test_the_default_await_on_random_waiting_programs(tmp_path, pyrsan_cli, pyrsan_env):
    """docs/design/exploration.md §10: seed 2's first program loops with a load first and a fence
    after it, which spun to max_steps before the rotated units."""
    random_blocked(2, 1, tmp_path, pyrsan_cli, pyrsan_env, DEFAULT_AWAIT)


@pytest.mark.slow
def test_the_default_await_on_more_random_waiting_programs(tmp_path, pyrsan_cli, pyrsan_env):
    """The 20 of seed 2 (6 of them spun to max_steps before §10), each complete under the
    default, with every interleaving's verdict and groups where they fit the brute force."""
    compared, _ = random_blocked(2, 20, tmp_path, pyrsan_cli, pyrsan_env, DEFAULT_AWAIT)
    assert compared >= 8


def test_a_loop_that_fences_after_its_first_load(tmp_path, pyrsan_cli, pyrsan_env):
    """fence_in_the_middle (too many interleavings for the brute force): its iterations never
    repeat (§7: the first step is a load, and it fences), so under blocked iterations its thread
    yields as an unrecognised spin does instead of spinning to max_steps; and a failed iteration
    does not block it (§9 condition (ii)), so the next iteration's violation is found: the report
    group of the exploration with every iteration a step (sched_await=0)."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS["fence_in_the_middle"][0], tmp_path, "p")
    explorations = {flag: explored_groups(exe, tmp_path / f"e{flag}", flag) for flag in ("0", "-2")}
    assert all(complete for complete, *_ in explorations.values())
    groups = {flag: g for flag, (_, _, g, _) in explorations.items()}
    assert len(groups["0"]) == 1 and groups["-2"] == groups["0"]


def test_a_loop_that_fences_after_its_first_load_under_the_default_await(tmp_path, pyrsan_cli, pyrsan_env):
    """docs/design/exploration.md §10: under the default await (sched_await=1, today's relation and
    the closure) the iterations of fence_in_the_middle, rotated to start at their SC fence, repeat
    and park; the exploration is complete (before §10 its thread spun to max_steps: a hang) and
    finds the report group of every iteration as a step (sched_await=0)."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS["fence_in_the_middle"][0], tmp_path, "p")
    complete, _, groups, _ = explored_groups(exe, tmp_path / "every", "0")
    assert complete and len(groups) == 1
    for closure in ("0", "1"):
        complete, keys, rotated, _ = explored_groups(exe, tmp_path / f"e{closure}", "1", closure)
        assert complete and rotated == groups, (closure, rotated, groups)
