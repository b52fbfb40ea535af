"""The explorer's driver apart from the runs (issue 15; benchmarks/README.md "Session 18:
exploration"): record an exploration's runs once, then replay them through `explore` and
`parse_trace` alone, as often as wanted, on one checkout or another.

    python benchmarks/exploration_driver.py record EXE N FILE   # explore EXE (built by `pyrsan build`) for N schedules
    python benchmarks/exploration_driver.py replay FILE [REPS]  # CPU of absorb and of the trace parse

`record` runs `explore_program` (the fork server, the closure, PYRSAN_OPTIONS as given:
sched_await=-2 unless set) and keeps, for every run, the prefix, the sleep set and the parsed
trace the explorer absorbed, and the trace's text. `replay` runs `explore` with a run function
that hands back the recorded trace of each prefix, so the search makes the same schedules in the
same order as long as the driver's decisions are unchanged: it prints a fingerprint of every
prefix and sleep set it ran (equal fingerprints: equal decisions) and the process CPU time of the
search, then of parsing the recorded texts again (the step cache emptied first). A driver whose
decisions differ asks for a prefix that was not recorded: a KeyError.
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

    def reading(path):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                raw.append(handle.read())
        except OSError:
            pass
        return read(path)

    ex._Search.absorb = absorbing   # type: ignore[method-assign]
    runner._read_trace = reading
    work = f"/tmp/exploration_driver.{os.getpid()}"
    result = explore_program(exe, [], RunOptions(work_dir=work, quiet=True, timeout=60, keep_going=False,
                                                 closure="1"), ExploreOptions(max_schedules=n))
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
        parsed = [sc.parse_trace(text.split("\n")) for text in raw]
    parse = (time.process_time() - start) / reps
    print(f"parse_trace: {parse:.3f} s of CPU a round, {len(parsed)} traces")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "record":
        record(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif len(sys.argv) >= 3 and sys.argv[1] == "replay":
        replay(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    else:
        sys.exit(__doc__)
