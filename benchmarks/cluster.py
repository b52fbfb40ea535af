"""Scaling out (pyrsan run --explore --cluster): one exploration with many schedule classes
(programs/counters3.c: 3 threads x 4 acq_rel RMWs on one counter, 34,650 classes), bounded at
--schedules schedules, with 1, 2 and 4 local Dask workers (one thread each, started on the
loopback address), and on one machine without Dask (--jobs 1) as the reference. Prints
schedules per second, per worker, and the speed-up over one worker.

    python benchmarks/cluster.py                  # 3,000 schedules per configuration
    python benchmarks/cluster.py --schedules 500 --workers 1,2

Needs the optional dependency (scripts/setup-cluster.sh). On the 2-core machine, more than two
workers share the cores: the speed-up measures the driver's and Dask's overheads as much as
the hardware.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from _bench import PROGRAMS_DIR, BenchError, check_pyrsan, main_guard, pyrsan_cmd, pyrsan_env


def explore(program: Path, schedules: int, extra: list[str], work: Path) -> tuple[float, dict]:
    out = work / "out.json"
    start = time.monotonic()
    proc = subprocess.run(pyrsan_cmd("run", "--explore", "--max-schedules", str(schedules), "--json", str(out),
                                     *extra, str(program)), cwd=work, capture_output=True, text=True, env=pyrsan_env())
    elapsed = time.monotonic() - start
    if proc.returncode not in (0, 66):
        raise BenchError(f"pyrsan run failed ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
    return elapsed, json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=3000)
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()
    try:
        from pyrsan.cluster import LocalCluster
        import distributed  # noqa: F401
    except ImportError:
        raise BenchError("needs the optional dependency 'distributed' (scripts/setup-cluster.sh)") from None
    check_pyrsan()
    program = PROGRAMS_DIR / "counters3.c"
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {args.schedules} schedules of {program.name}")
    print(f"{'configuration':<22} {'seconds':>8} {'schedules':>10} {'sched/s':>8} {'per worker':>11} {'speed-up':>9}")
    with tempfile.TemporaryDirectory(prefix="pyrsan-bench-cluster-") as tmp:
        work = Path(tmp)
        elapsed, doc = explore(program, args.schedules, ["--jobs", "1"], work)
        made = doc["exploration"]["schedules"]
        print(f"{'one machine, --jobs 1':<22} {elapsed:8.1f} {made:10d} {made / elapsed:8.1f} {'':>11} {'':>9}")
        base = None
        for count in (int(w) for w in args.workers.split(",")):
            cluster = LocalCluster(workers=count, log=work / f"dask-{count}.log")
            try:
                elapsed, doc = explore(program, args.schedules, ["--cluster", cluster.address], work)
            finally:
                cluster.stop()
            made = doc["exploration"]["schedules"]
            rate = made / elapsed
            base = base or rate
            print(f"{f'{count} worker(s)':<22} {elapsed:8.1f} {made:10d} {rate:8.1f} {rate / count:11.1f} "
                  f"{rate / base:8.2f}x")
    return 0


if __name__ == "__main__":
    main_guard(main)
