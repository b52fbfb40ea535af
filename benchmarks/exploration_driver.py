"""The explorer's driver apart from the runs (issue 15; benchmarks/README.md "Session 18:
exploration"): record an exploration's runs once, then replay them through `explore` and
`parse_trace` alone, as often as wanted, on one checkout or another.

    python benchmarks/exploration_driver.py record EXE N FILE   # explore EXE (built by `pyrsan build`) for N schedules
    python benchmarks/exploration_driver.py replay FILE [REPS]  # CPU of absorb and of the trace parse
    python benchmarks/exploration_driver.py classes FILE        # schedules per class, races per kind
    python benchmarks/exploration_driver.py parts EXE N [plain] # the driver's CPU per part, on real runs

`record` runs `explore_program` (the fork server, the closure unless PYRSAN_CLOSURE says otherwise
(2: the coarse relation alone, the same decisions without the closure's cost), PYRSAN_OPTIONS as
given: sched_await=-2 unless set) and keeps, for every run, the prefix, the sleep set and the parsed
trace the explorer absorbed, and the trace's text. `replay` runs `explore` with a run function
that hands back the recorded trace of each prefix, so the search makes the same schedules in the
same order as long as the driver's decisions are unchanged: it prints a fingerprint of every
prefix and sleep set it ran (equal fingerprints: equal decisions) and the process CPU time of the
search, then of parsing the recorded texts again (the step cache emptied first). A driver whose
decisions differ asks for a prefix that was not recorded: a KeyError.

`classes` replays the recorded runs once and counts, among the runs the explorer did not cut as
sleep-blocked, the distinct classes of the explorer's relation (a run's class: each thread's
operations in order, the order of every two dependent operations of different threads, how the
run ended): schedules per class, and the races whose reversal queued a schedule by the kinds of
their two operations (`failed`: a load of the pair that its thread follows by another load of
that location in the run, a waiting loop's failed iteration; docs/design/exploration.md §17).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import time


def record(exe: str, n: int, out: str) -> None:
    os.environ.setdefault("PYRSAN_OPTIONS", "sched_await=-2")
    from pyrsan import explore as ex, runner
    from pyrsan.runner import ExploreOptions, RunOptions, explore_program

    log: list = []
    raw: list[str] = []
    absorb = ex._Search.absorb
    read = runner._read_trace

    def absorbing(self, prefix, child_sleep, trace):
        log.append((prefix, child_sleep, trace))
        return absorb(self, prefix, child_sleep, trace)

    def reading(path, known=()):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                raw.append((handle.read(), tuple(known)))   # the run's lines, and the steps it left out
        except OSError:
            pass
        return read(path, known)

    ex._Search.absorb = absorbing   # type: ignore[method-assign]
    runner._read_trace = reading
    work = f"/tmp/exploration_driver.{os.getpid()}"
    result = explore_program(exe, [], RunOptions(work_dir=work, quiet=True, timeout=60, keep_going=False,
                                                 closure=os.environ.get("PYRSAN_CLOSURE", "1")),
                              ExploreOptions(max_schedules=n))
    print(result.exploration)
    with open(out, "wb") as handle:
        pickle.dump((log, raw), handle)


def replay(path: str, reps: int) -> None:
    from pyrsan import explore as ex, schedule as sc

    with open(path, "rb") as handle:
        log, raw = pickle.load(handle)
    traces = {prefix: trace for prefix, _, trace in log}
    order: list = []

    def run(prefix, sleep):
        order.append((prefix, tuple(sorted((t, o.kind, o.addr, o.writes) for t, o in sleep.items()))))
        return traces[prefix], None

    start = time.process_time()
    for _ in range(reps):
        order.clear()
        exploration = ex.explore(run, max_schedules=len(log), sleep_aware=True)
    search = (time.process_time() - start) / reps
    print(exploration)
    print(f"explore: {search:.3f} s of CPU a round, {len(order)} runs, "
          f"fingerprint {hashlib.sha1(repr(order).encode()).hexdigest()[:16]}")
    start = time.process_time()
    for _ in range(reps):
        sc._STEP_CACHE.clear()
        sc._OP_CACHE.clear()
        # a recording of session 18 kept the text alone (every step traced)
        parsed = [sc.parse_trace(text.split("\n"), known)
                  for text, known in (entry if isinstance(entry, tuple) else (entry, ()) for entry in raw)]
    seconds = (time.process_time() - start) / reps
    print(f"parse_trace: {seconds:.3f} s of CPU a round, {len(parsed)} traces")


def classes(path: str) -> None:
    import collections

    from pyrsan import explore as ex

    with open(path, "rb") as handle:
        log, _ = pickle.load(handle)
    traces = {prefix: trace for prefix, _, trace in log}
    cut: set = set()
    races: collections.Counter = collections.Counter()
    search = ex._Search
    absorb, reverse = search.absorb, search._reverse_race

    def absorbing(self, prefix, child_sleep, trace):
        before, queued = self.sleep_blocked, len(self.stack) + self.inserted
        absorb(self, prefix, child_sleep, trace)
        if self.sleep_blocked > before:
            cut.add(tuple(prefix))
            races["sleep-blocked: its first awake thread"] += len(self.stack) + self.inserted > queued

    def reloaded(steps, k):
        return any(s.tid == steps[k].tid and s.op.kind == "load" and s.op.addr == steps[k].op.addr
                   for s in steps[k + 1:])

    def reversing(self, i, j, steps, decisions, path, clocks, position):
        queued = len(self.stack) + self.inserted   # a backtrack queued, or a wakeup-tree branch inserted
        reverse(self, i, j, steps, decisions, path, clocks, position)
        if len(self.stack) + self.inserted > queued:
            a, b = steps[i].op, steps[j].op
            failed = any(steps[k].op.kind == "load" and reloaded(steps, k) for k in (i, j))
            races[f"{a.kind}-{b.kind}" + (" failed" if failed else "")] += 1

    search.absorb, search._reverse_race = absorbing, reversing   # type: ignore[method-assign]
    exploration = ex.explore(lambda prefix, sleep: (traces[prefix], None), max_schedules=len(log), sleep_aware=True)
    search.absorb, search._reverse_race = absorb, reverse   # type: ignore[method-assign]
    keys = set()
    for prefix, _, trace in log:
        if tuple(prefix) in cut:
            continue
        count: collections.Counter = collections.Counter()
        events = []
        for step in trace.steps:
            count[step.tid] += 1
            events.append((step.tid, count[step.tid], step.op))
        pairs = frozenset((ti, ni, tj, nj) for j, (tj, nj, oj) in enumerate(events)
                          for ti, ni, oi in events[:j] if ex.dependent(ti, oi, tj, oj))
        threads = tuple(sorted((t, tuple((o.kind, o.addr) for u, _, o in events if u == t)) for t in count))
        keys.add((threads, pairs, trace.end, tuple(sorted(trace.blocked.items()))))
    print(exploration)
    print(f"{len(log)} runs, {len(cut)} cut as sleep-blocked, {len(keys)} classes among the {len(log) - len(cut)} "
          f"others: {len(log) / max(len(keys), 1):.3f} schedules per class")
    for kind, n in races.most_common():
        print(f"  queued by {kind}: {n}")


def parts(exe: str, n: int, plain: bool = False) -> None:
    """Explore EXE for N schedules as `record` does and print the thread CPU time
    (time.thread_time) the driver spent in each of its parts per schedule, with the process CPU
    of the driver and of its children (the runs): the parts of the driver on real runs, whose
    caches the runs share, unlike a replay's. ``plain``: no part timed (no wrapper's cost), the
    process CPU alone."""
    import resource

    os.environ.setdefault("PYRSAN_OPTIONS", "sched_await=-2")
    from pyrsan import explore as ex, forkserver as fs, runner
    from pyrsan.runner import ExploreOptions, RunOptions, explore_program

    spent: dict[str, float] = {}

    def timed(owner, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.thread_time() - start

        setattr(owner, name, wrapper)

    for owner, name, label in ((ex._Search, "absorb", "absorb (explore.py)"),
                               (ex._Search, "prefix_of", "prefix_of"),
                               (ex._Search, "next_item", "next_item"),
                               (ex._Search, "start", "start"),
                               (fs.ForkServer, "execute", "the fork server's round trip"),
                               (fs.ForkServer, "_line", "  of it: its waits for a line"),
                               (runner, "_read_trace", "  of it: the trace's read and parse"),
                               (fs, "format_schedule", "  of it: the schedule's text"),
                               (runner.ClosureStats, "absorb", "ClosureStats.absorb (runner.py)")):
        if not plain:
            timed(owner, name, label)
    start = time.thread_time()
    result = explore_program(exe, [], RunOptions(work_dir=f"/tmp/exploration_driver.{os.getpid()}", quiet=True,
                                                 timeout=60, keep_going=False,
                                                 closure=os.environ.get("PYRSAN_CLOSURE", "1")),
                             ExploreOptions(max_schedules=n))
    total = time.thread_time() - start
    runs = result.exploration.schedules
    print(result.exploration)
    for label, seconds in spent.items():
        print(f"{label:36s} {seconds:7.3f} s  {1000 * seconds / runs:.3f} ms a schedule")
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"explore_program {total:.2f} s of thread CPU; the driver's process {own.ru_utime + own.ru_stime:.2f} s "
          f"({own.ru_minflt} page faults, {own.ru_maxrss // 1024} MB resident at most), its children "
          f"{children.ru_utime + children.ru_stime:.2f} s; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "record":
        record(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) == 3 and sys.argv[1] == "classes":
        classes(sys.argv[2])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "parts":
        parts(sys.argv[2], int(sys.argv[3]), sys.argv[4:] == ["plain"])
    elif len(sys.argv) >= 3 and sys.argv[1] == "replay":
        replay(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    else:
        sys.exit(__doc__)
