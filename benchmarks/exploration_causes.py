"""What makes an exploration's schedule count explode (issue 15): for each program `--explore`
does not prove, the schedules attributed to the race whose reversal queued them, and the same
exploration under relations that drop one cause (measurement only: they are not sound).

Every schedule after the first is started from a backtrack point that one of three things
queued (pyrsan/explore.py): the reversal of a race between two dependent steps (i, j), the
"give every other thread a turn" of a process exit, or the first awake thread of a run cut as
sleep-blocked. The race's kind names the cause:

- ``F-F``: two SC fences that are not both clean (their order in F);
- ``F-F spin``: the same, where the later fence's thread had already loaded that location before
  in the run (a spin loop's second or later iteration);
- ``mem``: two accesses of one location (rf/mo/fr of the real locations);
- ``mem spin``: the same, later access a re-read of its thread;
- ``mem failed``: the same, where a load of the pair is not its thread's last load of the location
  in the run (a waiting loop's failed iteration, which reads the location again later): the
  races that blocked iterations (docs/design/exploration.md §9) leave out;
- ``thread``: spawn/join/exit of a thread; ``exit``: the process exit's races and turns;
- ``sleep-blocked``: the awake thread queued when a run's continuation ran a sleeping thread.

The trace columns are per run, averaged: steps, SC fences not clean, clean ones, loads that
re-read a location their thread loaded before in the run (spin iterations), and runs with a
process exit among their steps.

``--variants`` re-runs each exploration with every two SC fences independent (``[fences
free]``): what is left are the other causes. It is a measurement, not a sound relation.

``--blocked`` adds, for each program, the exploration with a thread blocked for ever after any
failed iteration of an await loop (``[blocked]``, ``PYRSAN_OPTIONS=sched_await=-1``; with
``--closure`` under both relations), a measurement of the classes a reads-from exploration of
waiting loops leaves (docs/design/exploration.md §9: not exact as it stands).

``--closure`` explores each program twice, interleaved: with today's relation (``[today]``,
PYRSAN_CLOSURE=0) and with the F-order closure (``[closure]``, PYRSAN_CLOSURE=1: the coarse
relation, each run's closure searched by the runtime, docs/design/exploration.md); the last
columns are the closures' branching states and the schedules run to confirm closure reports.
Without it the explorations use today's relation.

    python benchmarks/exploration_causes.py [--max-schedules 1000] [--only TEXT]
        [--variants | --fences-free | --closure] [--blocked]
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import PROGRAMS_DIR, REPO_ROOT, machine_load, main_guard, print_table, pyrsan_cmd

LITMUS = REPO_ROOT / "testsuite" / "litmus"
PROGRAMS = [
    ("bcas_spinlock", LITMUS / "bcas_spinlock.c", ()),
    ("corr_sc", LITMUS / "corr_sc.c", ()),
    ("dekker_sc", LITMUS / "dekker_sc.c", ()),
    ("iriw_sc", LITMUS / "iriw_sc.c", ()),
    ("peterson_sc", LITMUS / "peterson_sc.c", ()),
    ("wrc_sc", LITMUS / "wrc_sc.c", ()),
    ("peterson,3", PROGRAMS_DIR / "sched" / "peterson.c", ("-DROBUST", "-DNTHREADS=3")),
    ("lamport_fast,3", PROGRAMS_DIR / "sched" / "lamport_fast.c", ("-DROBUST", "-DNTHREADS=3")),
    ("seqlock,3", PROGRAMS_DIR / "sched" / "seqlock.c", ("-DROBUST", "-DNTHREADS=3")),
    ("bakery,3", PROGRAMS_DIR / "sched" / "bakery.c", ("-DROBUST", "-DNTHREADS=3")),
    ("dekker_tree,3", PROGRAMS_DIR / "sched" / "dekker_tree.c", ("-DROBUST",)),
]
CAUSES = ["F-F", "F-F spin", "mem", "mem spin", "mem failed", "thread", "exit", "sleep-blocked", "other"]


def classify(steps, i: int, j: int, rereads: set[int], failed: set[int] = frozenset()) -> str:
    a, b = steps[i].op, steps[j].op
    spin = " spin" if j in rereads else ""
    if a.kind == "exit_process" or b.kind == "exit_process":
        return "exit"
    if a.kind == "fence_sc" and b.kind == "fence_sc":
        return "F-F" + spin
    if a.kind in ("spawn", "join", "exit") or b.kind in ("spawn", "join", "exit"):
        return "thread"
    if a.addr == b.addr:
        return "mem failed" if i in failed or j in failed else "mem" + spin
    return "other"


def failed_reads(steps) -> set[int]:
    """Indices of loads that their thread follows, later in the run, by another load of the
    same location (the reads of a waiting loop's failed iterations)."""
    later: set[tuple[int, str]] = set()
    out: set[int] = set()
    for k in range(len(steps) - 1, -1, -1):
        op = steps[k].op
        if op.kind == "load" or op.kind == "rmw" and not op.writes:
            if (steps[k].tid, op.addr) in later:
                out.add(k)
            later.add((steps[k].tid, op.addr))
    return out


def spin_steps(steps) -> set[int]:
    """Indices of steps whose thread has loaded, earlier in the run, a location it loads again
    (or of an SC fence whose thread is in such an iteration: the fences around a re-read)."""
    seen: dict[int, set[str]] = collections.defaultdict(set)
    rereading: dict[int, bool] = collections.defaultdict(bool)
    out: set[int] = set()
    for k, step in enumerate(steps):
        op = step.op
        if op.kind == "fence_sc":
            if rereading[step.tid]:
                out.add(k)
            continue
        if op.kind == "load" or op.kind == "rmw" and not op.writes:
            again = op.addr in seen[step.tid]
            rereading[step.tid] = again
            if again:
                out.add(k)
            seen[step.tid].add(op.addr)
    return out


class Probe:
    """Wraps explore._Search to attribute each queued backtrack point to its cause."""

    def __init__(self, fences_free: bool) -> None:
        import pyrsan.explore as ex
        self.ex = ex
        self.fences_free = fences_free
        self.cause: dict[tuple[int, int], str] = {}
        self.schedules: collections.Counter[str] = collections.Counter()
        self.current: str | None = None
        self.runs = 0
        self.totals: collections.Counter[str] = collections.Counter()
        self.saved: dict[str, object] = {}
        self.cpu = 0.0

    def install(self) -> None:
        ex, probe = self.ex, self
        search = ex._Search
        self.saved = {name: getattr(search, name) for name in ("_reverse_race", "add_backtrack", "start",
                                                                "add_race_backtracks", "absorb")}
        self.saved["dependent"] = ex.dependent
        original = dict(self.saved)

        def reverse(s, i, j, steps, *rest):
            probe.current = classify(steps, i, j, probe.rereads, probe.failed)
            try:
                return original["_reverse_race"](s, i, j, steps, *rest)
            finally:
                probe.current = None

        def add_backtrack(s, node, prefix, tid):
            key = (id(node), tid)
            fresh = tid not in node.backtrack and tid not in node.sleep
            original["add_backtrack"](s, node, prefix, tid)
            if fresh and tid in node.backtrack and key not in probe.cause:
                probe.cause[key] = probe.current or probe.fallback

        def start(s, item):
            out = original["start"](s, item)
            if out is not None:
                probe.schedules[probe.cause.get((id(item.node), item.tid), "first")] += 1
            return out

        def races(s, steps, decisions, path, first, cut, blocked={}):
            probe.rereads = spin_steps(steps)
            probe.failed = failed_reads(steps[:cut])
            probe.fallback = "exit"
            return original["add_race_backtracks"](s, steps, decisions, path, first, cut, blocked)

        def absorb(s, prefix, child_sleep, trace):
            probe.fallback = "sleep-blocked"
            steps = trace.steps
            probe.runs += 1
            spins = spin_steps(steps)
            probe.totals["steps"] += len(steps)
            probe.totals["fence"] += sum(1 for st in steps if st.op.kind == "fence_sc" and st.op.addr != "0x1")
            probe.totals["clean"] += sum(1 for st in steps if st.op.kind == "fence_sc" and st.op.addr == "0x1")
            probe.totals["reread"] += sum(1 for k in spins if steps[k].op.kind != "fence_sc")
            probe.totals["exit"] += any(st.op.kind == "exit_process" for st in steps)
            return original["absorb"](s, prefix, child_sleep, trace)

        def dependent(ta, a, tb, b):
            if a.kind == "fence_sc" and b.kind == "fence_sc" and ta != tb:
                return False
            return original["dependent"](ta, a, tb, b)

        search._reverse_race = reverse
        search.add_backtrack = add_backtrack
        search.start = start
        search.add_race_backtracks = races
        search.absorb = absorb
        if self.fences_free:
            ex.dependent = dependent

    def uninstall(self) -> None:
        for name, value in self.saved.items():
            if name == "dependent":
                self.ex.dependent = value
            else:
                setattr(self.ex._Search, name, value)


def explore(exe: Path, work: Path, max_schedules: int, fences_free: bool, closure: str = "0",
            blocked: bool = False):
    from pyrsan.runner import ExploreOptions, RunOptions, explore_program

    probe = Probe(fences_free)
    probe.install()
    saved = os.environ.get("PYRSAN_OPTIONS")
    if blocked:   # the fork server's environment
        os.environ["PYRSAN_OPTIONS"] = ((saved + " ") if saved else "") + "sched_await=-1"
    try:
        options = RunOptions(timeout=60, work_dir=str(work), quiet=True, closure=closure)
        start = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = explore_program(str(exe), [], options, ExploreOptions(max_schedules=max_schedules, jobs=1))
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        probe.uninstall()
        if saved is None:
            os.environ.pop("PYRSAN_OPTIONS", None)
        else:
            os.environ["PYRSAN_OPTIONS"] = saved
    # the runs' CPU (the fork server, its runs and their closure searches, all waited for by
    # the time explore_program returns): a figure the machine's load does not inflate
    probe.cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return result, wall, probe


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-schedules", type=int, default=1000)
    parser.add_argument("--only", help="programs whose name contains TEXT")
    parser.add_argument("--variants", action="store_true", help="also explore with every two SC fences independent")
    parser.add_argument("--fences-free", action="store_true", help="only the exploration with every two SC fences "
                        "independent")
    parser.add_argument("--blocked", action="store_true", help="also explore with threads blocked after a failed "
                        "await-loop iteration (sched_await=-1, not exact: a measurement)")
    parser.add_argument("--closure", action="store_true", help="today's relation and the F-order closure, "
                        "interleaved per program")
    args = parser.parse_args()
    os.environ.setdefault("PYRSAN_FORK_SERVER", "1")
    print(f"# exploration_causes.py --max-schedules {args.max_schedules}; {machine_load()}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="pyrsan-causes-") as tmp:
        work = Path(tmp)
        for name, source, defines in PROGRAMS:
            if args.only and args.only not in name:
                continue
            exe = work / "prog"
            subprocess.run(pyrsan_cmd("build", "-o", str(exe), *defines, str(source)), check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if args.closure:
                variants = [(False, "0", " [today]"), (False, "1", " [closure]")]
            elif args.fences_free:
                variants = [(True, "0", " [fences free]")]
            else:
                variants = [(False, "0", "")] + ([(True, "0", " [fences free]")] if args.variants else [])
            variants = [(free, closure, label, False) for free, closure, label in variants]
            if args.blocked:
                variants += [(free, closure, label + " [blocked]", True) for free, closure, label, _ in variants]
            for free, closure, label, blocked in variants:
                result, wall, probe = explore(exe, work / "runs", args.max_schedules, free, closure, blocked)
                exploration = result.exploration
                verdict = "REPORTED" if result.reports else "robust" if exploration.complete else "bound"
                runs = max(probe.runs, 1)
                row = [name + label, verdict, str(exploration.schedules),
                       str(exploration.sleep_blocked), f"{wall:.2f}", f"{probe.cpu:.2f}"]
                row += [str(probe.schedules.get(c, 0)) for c in CAUSES]
                row += [f"{probe.totals[k] / runs:.1f}" for k in ("steps", "fence", "clean", "reread")]
                row.append(str(probe.totals["exit"]))
                row += [str(exploration.closure_states), str(exploration.closure_reruns)]
                rows.append(row)
                print("  " + " | ".join(row), file=sys.stderr, flush=True)
    print_table(["program", "verdict", "schedules", "sleep-blocked", "wall s", "CPU s", *CAUSES,
                 "steps/run", "SC fences/run", "clean/run", "re-reads/run", "runs with exit", "closure states",
                 "closure re-runs"], rows)
    print(f"# {machine_load()}")
    return 0


if __name__ == "__main__":
    main_guard(main)
