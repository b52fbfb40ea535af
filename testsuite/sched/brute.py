"""Every interleaving of a program through the real runtime (issue 15 item 5): the brute force
that ``--explore`` is checked against.

``every_interleaving`` runs the schedule tree of a program to every leaf: it runs a prefix, reads
the run's trace (every scheduling point with every enabled thread's pending operation,
docs/scheduling.md "Trace file") and queues, for each point after the prefix, each enabled thread
the run did not choose there. No relation between operations is used, no sleep set is passed and
no closure is searched (``sched_closure=0``): each maximal schedule of the controlled scheduler is
run once, and its reports are the engine's. What the scheduler itself does not offer as a choice
is not enumerated either: a thread is disabled while its wait or recognised spin load would
re-read an unchanged location (each attempt is a step: ``sched_wait_value=0``, not the
exploration's waits enabled by memory), and a yielding thread (an unrecognised spin loop) is not a choice
while others are enabled (docs/scheduling.md "Enabledness beyond the protocol text"); those
repeat reads the value a thread already read.

``random_program`` draws the small programs the differential runs on (benchmarks/end_to_end.py's
``random_litmus`` with seq_cst accesses and SC fences mixed in), ``steps_estimate`` the number of
interleavings of their threads' steps, so that a caller can skip programs too big to enumerate.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from pyrsan.forkserver import ForkServers
from pyrsan.reports import NOT_VIOLATION_KINDS, Report, RunResult
from pyrsan.runner import CLOSURE_OFF, RunOptions, exploration_options

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from end_to_end import CAS_ORDERS, _waits_that_end, c_source, unrolled  # noqa: E402


class TooManyInterleavings(Exception):
    """The schedule tree has more leaves than the caller allowed."""


@dataclass
class BruteForce:
    """What every interleaving of a program made."""

    runs: int = 0                   # maximal schedules run (leaves of the schedule tree)
    keys: set[str] = field(default_factory=set)      # report keys (counted reports: not benign)
    groups: set[str] = field(default_factory=set)    # report groups (access and type)
    witness: dict[str, tuple[int, ...]] = field(default_factory=dict)   # a schedule per key
    ends: dict[str, int] = field(default_factory=dict)   # trace end -> runs (exit, deadlock, ...)

    @property
    def robust(self) -> bool:
        return not self.keys


def counted(report: Report) -> bool:
    """A report that makes a run's verdict (runner's RunResult.reported without report_benign)."""
    return report.kind not in NOT_VIOLATION_KINDS and not report.benign


def every_interleaving(executable: str, work: Path, max_runs: int = 20000, timeout: float = 60.0,
                       await_loops: bool = True, yields: bool = False) -> BruteForce:
    """Run every maximal schedule of ``executable`` (no arguments) once. Raises
    TooManyInterleavings past ``max_runs``, AssertionError when a prefix does not replay (the
    program is not deterministic under the scheduler) or a run crashes or hangs.
    await_loops=False: the scheduler does not stop a thread whose await-loop iterations repeat
    themselves (``sched_await=0``): those iterations are enumerated as any steps (the yields of
    unrecognised spin loops still bound them). yields=True: a yielding thread (listed apart in a
    step's ``yielding``) is a choice too, as a schedule file may name it: the interleavings the
    scheduler's own continuation leaves out (its loop's repeats are bounded by the program)."""
    options = exploration_options(RunOptions(work_dir=str(work), quiet=True, timeout=timeout,
                                             closure=CLOSURE_OFF, keep_going=True))
    saved = os.environ.get("PYRSAN_OPTIONS")
    # the fork servers' environment (forkserver.py reads it when it starts one): every wait attempt
    # is a step, a failed one too (sched_wait_value=0: docs/design/exploration.md §23)
    extra = "sched_wait_value=0" + ("" if await_loops else " sched_await=0")
    os.environ["PYRSAN_OPTIONS"] = ((saved + " ") if saved else "") + extra
    servers = ForkServers(executable, [], options, work)
    out = BruteForce()
    stack: list[tuple[int, ...]] = [()]
    try:
        while stack:
            prefix = stack.pop()
            out.runs += 1
            if out.runs > max_runs:
                raise TooManyInterleavings(f"more than {max_runs} interleavings")
            result, trace = servers.execute(executable, [], out.runs, options, prefix=prefix)
            shutil.rmtree(Path(work) / f"run{out.runs:07d}", ignore_errors=True)
            _check(result, trace, prefix)
            assert trace is not None
            out.ends[str(trace.end)] = out.ends.get(str(trace.end), 0) + 1
            for report in result.reports:
                if counted(report):
                    out.keys.add(report.key)
                    out.groups.add(report.group)
                    out.witness.setdefault(report.key, trace.decisions)
            decisions = trace.decisions
            for i in range(len(prefix), len(trace.steps)):
                choices = set(trace.steps[i].enabled) | (set(trace.steps[i].yielding) if yields else set())
                for tid in sorted(choices, reverse=True):
                    if tid != decisions[i]:
                        stack.append(decisions[:i] + (tid,))
    finally:
        servers.close()
        if saved is None:
            os.environ.pop("PYRSAN_OPTIONS", None)
        else:
            os.environ["PYRSAN_OPTIONS"] = saved
    return out


def _check(result: RunResult, trace, prefix: tuple[int, ...]) -> None:
    assert trace is not None, f"no trace for prefix {prefix}"
    assert trace.diverged is None, f"prefix {prefix} diverged at step {trace.diverged}"
    assert trace.decisions[:len(prefix)] == prefix
    assert not result.crashed and not result.hung, f"prefix {prefix}: {result}"
    assert trace.end in ("exit", "deadlock"), f"prefix {prefix}: trace end {trace.end}"


def explored_keys(result) -> tuple[set[str], set[str]]:
    """The report keys and groups of every run of an exploration (SessionResult)."""
    reports = [r for run in result.runs for r in run.reports if counted(r)]
    return {r.key for r in reports}, {r.group for r in reports}


#: Scheduling points of one operation of a generated program under sc_accesses=fenced: a seq_cst
#: access is its leading SC fence, the access and its trailing SC fence.
def _points(op: tuple) -> int:
    if op[0] in ("st", "ld", "wait"):
        return 3 if op[-1] == "sc" else 1
    if op[0] == "rmw":
        return 3 if op[4] == "sc" else 1
    if op[0] == "cas":
        return 3 if op[4] == "sc" else 1
    return 1


def steps_estimate(threads: list[list[tuple]]) -> int:
    """The interleavings of the program's scheduling points: main's spawns and joins, each
    thread's operations (after its spawn) and its exit (before its join). The order of
    magnitude of the schedule tree's leaves: a wait that fails adds an attempt, and a blocked
    wait removes orders."""
    lengths = [sum(_points(op) for op in unrolled(ops)) + 1 for ops in threads]
    n = len(threads)

    @lru_cache(maxsize=None)
    def count(main: int, done: tuple[int, ...]) -> int:
        # main: its next step (spawn k for k < n, then join k - n); done: steps run per thread
        moves = 0
        if main < n or (main < 2 * n and done[main - n] == lengths[main - n]):
            moves += count(main + 1, done)
        for k in range(min(main, n)):
            if done[k] < lengths[k]:
                moves += count(main, done[:k] + (done[k] + 1,) + done[k + 1:])
        return moves or 1

    return count(0, (0,) * n)


#: Orders of a generated access: relaxed most often (what makes programs non-robust), seq_cst,
#: release/acquire.
STORE_ORDERS = ("rlx", "rlx", "rel", "sc", "sc")
LOAD_ORDERS = ("rlx", "rlx", "acq", "sc", "sc")
RMW_ORDERS = ("rlx", "acq", "rel", "ar", "sc", "sc")
FENCE_ORDERS = ("sc", "sc", "sc", "acq", "rel")


def random_program(rng: random.Random, threads: int = 3, max_ops: int = 3,
                   locations: tuple[str, ...] = ("x", "y"), min_threads: int = 2) -> list[list[tuple]]:
    """A random straight-line program of ``min_threads``-``threads`` threads of 1-``max_ops`` operations each
    (benchmarks/end_to_end.py's operation tuples, which ``c_source`` writes as C): stores of a
    value of their own, loads, fetch_adds, strong compare-exchanges, fences, over ``locations``;
    accesses relaxed, release/acquire or seq_cst, fences mostly SC. A thread may also wait
    (``while (load != v) ;``) for the value of the only write of a lower-numbered thread to a
    location (end_to_end's rule, so every run ends)."""
    value = 1
    out = []
    for _ in range(rng.randint(min_threads, threads)):
        ops: list[tuple] = []
        for _ in range(rng.randint(1, max_ops)):
            kind, x = rng.choice(("st", "st", "ld", "ld", "rmw", "cas", "fence", "wait")), rng.choice(locations)
            if kind == "st":
                ops.append(("st", x, value, rng.choice(STORE_ORDERS)))
                value += 1
            elif kind == "ld":
                ops.append(("ld", x, rng.choice(LOAD_ORDERS)))
            elif kind == "rmw":
                ops.append(("rmw", x, "add", 1, rng.choice(RMW_ORDERS)))
            elif kind == "cas":
                success, failure = rng.choice(CAS_ORDERS)
                ops.append(("cas", x, rng.choice([0, 1]), value, success, failure, False))
                value += 1
            elif kind == "wait":
                ops.append(("wait", x, 0, rng.choice(LOAD_ORDERS)))
            else:
                ops.append(("fence", rng.choice(FENCE_ORDERS)))
        out.append(ops)
    return _waits_that_end(out)


def _select(count: int, non_robust: float, max_interleavings: int,
            draw: Callable[[], list[list[tuple]]],
            keep: Callable[[list[list[tuple]]], bool] = lambda threads_ops: True) -> list[list[list[tuple]]]:
    """``count`` programs drawn by ``draw`` that ``keep`` accepts, of at most ``max_interleavings``
    (steps_estimate), a share ``non_robust`` of them non-robust for the RC20 model
    (testsuite/reference/rc20.py), the rest robust."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
    import rc20

    kept: list[list[list[tuple]]] = []
    non_robust_left = round(count * non_robust)
    robust_left = count - non_robust_left
    while robust_left or non_robust_left:
        threads_ops = draw()
        if not keep(threads_ops) or steps_estimate(threads_ops) > max_interleavings:
            continue
        robust = rc20.robust([unrolled(ops) for ops in threads_ops])
        if robust and robust_left:
            robust_left -= 1
        elif not robust and non_robust_left:
            non_robust_left -= 1
        else:
            continue
        kept.append(threads_ops)
    return kept


def programs(rng: random.Random, count: int, max_interleavings: int, non_robust: float = 0.5,
             threads: int = 3, max_ops: int = 3, min_threads: int = 2) -> list[list[list[tuple]]]:
    """``count`` random programs of at most ``max_interleavings`` (steps_estimate), a share
    ``non_robust`` of them non-robust for the RC20 model (testsuite/reference/rc20.py), the rest
    robust. Random straight-line programs are rarely non-robust (about 1 in 100 this small): the
    model picks them, so that the brute force has reports to compare."""
    return _select(count, non_robust, max_interleavings,
                   lambda: random_program(rng, threads, max_ops, min_threads=min_threads))


def source(threads: list[list[tuple]], locations: tuple[str, ...] = ("x", "y")) -> str:
    """The C program of ``threads`` (end_to_end.c_source: main spawns and joins them)."""
    return c_source(list(locations), threads)


#: A generated wait, as c_source writes it, and the bounded wait yield_source makes of it.
_WAIT_RE = re.compile(r"^(?P<pad> *)while \((?P<cond>atomic_load_explicit\(&\w+, \w+\) != -?\d+)\)\n(?P=pad)  ;$",
                      re.MULTILINE)
_JOINS = "  for (int i = 0; i < {n}; i++)\n    pthread_join(th[i], NULL);\n"


def yield_source(threads: list[list[tuple]], bound: int = 5, join: bool = True,
                 locations: tuple[str, ...] = ("x", "y")) -> str:
    """The C program of ``threads`` with each wait bounded by a counter (``for (w = 0; w < bound
    && load != v; w++) ;``): a loop the passes mark, whose header state (w) never comes back, so
    that it yields after three reads of one value and may end by its count while others run
    (docs/scheduling.md, "Yielding threads in an exploration"). ``join=False``: main returns
    without joining (and prints nothing), so the process may end while the threads run."""
    text = _WAIT_RE.sub(lambda m: f"{m['pad']}for (int w = 0; w < {bound} && {m['cond']}; w++)\n{m['pad']}  ;",
                        c_source(list(locations), threads))
    if not join:
        text = text.replace(_JOINS.format(n=len(threads)), "")
        text = re.sub(r'^  printf\(.*\);\n', "", text, flags=re.MULTILINE)
    return text


def yield_programs(rng: random.Random, count: int, max_interleavings: int, threads: int = 2,
                   max_ops: int = 3, non_robust: float = 0.5) -> list[list[list[tuple]]]:
    """``count`` random programs (random_program) with at least one wait each, of at most
    ``max_interleavings`` (steps_estimate, without the waits' repeats), a share ``non_robust``
    of them non-robust for the RC20 model with their waits unbounded (bounding a wait only adds
    behaviours: the brute force decides)."""
    return _select(count, non_robust, max_interleavings, lambda: random_program(rng, threads, max_ops),
                   keep=lambda threads_ops: any(op[0] == "wait" for ops in threads_ops for op in ops))


@dataclass
class Comparison:
    """Brute force against ``--explore`` on one program."""

    interleavings: int
    brute_keys: set[str]
    brute_groups: set[str]
    #: closure mode -> (schedules, complete, keys, groups, schedules run to confirm closure reports)
    explored: dict[str, tuple[int, bool, set[str], set[str], int]]
    witness: dict[str, tuple[int, ...]]

    def disagreements(self) -> list[str]:
        """What an exploration got wrong: a complete one whose reports (keys, or groups) are not
        every interleaving's, any report no interleaving makes, or a verdict that differs."""
        out = []
        for mode, (_, complete, keys, groups, _) in self.explored.items():
            if keys - self.brute_keys:
                out.append(f"closure={mode}: reports no interleaving makes: {sorted(keys - self.brute_keys)}")
            if not complete:
                continue   # a bounded exploration proves nothing, and may miss reports
            if bool(keys) != bool(self.brute_keys):
                out.append(f"closure={mode}: verdict {'not robust' if keys else 'robust'}, every interleaving: "
                           f"{'not robust' if self.brute_keys else 'robust'}")
            missed = self.brute_keys - keys
            if missed:
                out.append(f"closure={mode}: missed report keys {sorted(missed)} "
                           f"(witness {[self.witness[k] for k in sorted(missed)]})")
            if self.brute_groups - groups:
                out.append(f"closure={mode}: missed report groups {sorted(self.brute_groups - groups)}")
        return out


def compare(executable: str, work: Path, modes: tuple[str, ...] = ("1",), max_runs: int = 20000,
            max_schedules: int = 5000, brute_await: bool = True,
            brute_yields: bool = False) -> Comparison:
    """Every interleaving of ``executable`` against ``--explore --keep-going`` with each
    sched_closure mode of ``modes`` ("1" is what --explore does, "0" today's relation)."""
    from pyrsan.runner import ExploreOptions, explore_program

    brute = every_interleaving(executable, work / "brute", max_runs=max_runs, await_loops=brute_await,
                               yields=brute_yields)
    explored = {}
    for mode in modes:
        options = RunOptions(work_dir=str(work / f"explore{mode}"), quiet=True, timeout=60, keep_going=True,
                             closure=mode)
        result = explore_program(executable, [], options, ExploreOptions(max_schedules=max_schedules, jobs=1))
        assert result.exploration is not None
        keys, groups = explored_keys(result)
        explored[mode] = (result.exploration.schedules, result.exploration.complete, keys, groups,
                          result.exploration.closure_reruns)
    return Comparison(brute.runs, brute.keys, brute.groups, explored, brute.witness)


def await_program(rng: random.Random) -> str:
    """A random program with a waiting loop that passes/awaitloops.py marks (the blocked
    iterations of docs/design/exploration.md §9 are checked on these): T1 loads z first (so that the
    scheduler knows it before its loop's first arrival), then loops over loads of two of x, y, z,
    each with an SC fence before it or not, until both (or either) read non-zero, and may load
    once more after the loop. T0 (main) stores non-zero values to both of the loop's locations
    (so that the loop ends), in either order; T0 and, half the time, a third thread T2 add loads,
    stores and SC fences. Relaxed, release and acquire orders only (a seq_cst access is three
    scheduling points: too many interleavings for the brute force)."""
    fence = "atomic_thread_fence(memory_order_seq_cst);"
    orders = {"rlx": "memory_order_relaxed", "acq": "memory_order_acquire", "rel": "memory_order_release"}
    first, second = rng.sample(("x", "y", "z"), 2)
    value = iter(range(1, 100))

    def load(loc: str) -> str:
        return f"atomic_load_explicit(&{loc}, {orders[rng.choice(('rlx', 'rlx', 'acq'))]})"

    def op() -> str:
        kind, loc = rng.choice(("st", "ld", "fence")), rng.choice(("x", "y", "z"))
        if kind == "st":
            return f"atomic_store_explicit(&{loc}, {next(value)}, {orders[rng.choice(('rlx', 'rel'))]});"
        return f"(void){load(loc)};" if kind == "ld" else fence

    def fenced() -> str:
        return fence if rng.random() < 0.5 else ""

    cond = rng.choice(("a && b", "a || b"))
    after = f" (void){load(rng.choice(('x', 'y', 'z')))};" if rng.random() < 0.5 else ""
    t1 = (f"static void *t1(void *p) {{ (void)atomic_load_explicit(&z, memory_order_relaxed);\n"
          f"  for (;;) {{ {fenced()} int a = {load(first)}; {fenced()} int b = {load(second)};\n"
          f"    if ({cond}) break; }}{after} return p; }}\n")
    main_ops = [f"atomic_store_explicit(&{loc}, {next(value)}, {orders[rng.choice(('rlx', 'rel'))]});"
                for loc in rng.sample((first, second), 2)]
    for _ in range(rng.randint(0, 2)):
        main_ops.insert(rng.randint(0, len(main_ops)), op())
    third = rng.random() < 0.5
    t2 = ("static void *t2(void *p) { " + " ".join(op() for _ in range(rng.randint(1, 2))) + " return p; }\n"
          if third else "")
    spawn = "  pthread_create(&b, 0, t2, 0);\n" if third else ""
    join = "  pthread_join(b, 0);\n" if third else ""
    return ("#include <pthread.h>\n#include <stdatomic.h>\natomic_int x, y, z;\n" + t1 + t2 +
            "int main(void) {\n  pthread_t a" + (", b" if third else "") + ";\n  pthread_create(&a, 0, t1, 0);\n" +
            spawn +
            "  " + "\n  ".join(main_ops) + "\n  pthread_join(a, 0);\n" + join + "  return 0;\n}\n")
