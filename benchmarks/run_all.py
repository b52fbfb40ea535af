"""Run the pyrsan benchmarks one after the other (each prints its own table).

    python benchmarks/run_all.py [--quick]

--quick passes small settings (one run, smaller programs) to check the harness; the real
measurement uses each script's defaults. Exit status: 0 when every script ran (whether or not
its target was met), otherwise the first non-zero status.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

SCRIPTS = (
    ("build_time.py", ["--repeat", "1", "--lines", "2000"]),
    ("overhead.py", ["--runs", "1", "--scale", "0.2"]),
    ("memory_growth.py", ["--runs", "1", "--large", "1000000"]),
    ("race_overhead.py", ["--runs", "1", "--scale", "0.2"]),
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small settings, for harness checks")
    args = ap.parse_args()
    status = 0
    for script, quick_args in SCRIPTS:
        cmd = [sys.executable, str(HERE / script), *(quick_args if args.quick else [])]
        print(f"=== {script} {' '.join(cmd[2:])}".rstrip(), flush=True)
        start = time.perf_counter()
        rc = subprocess.run(cmd).returncode
        print(f"=== {script}: exit {rc}, {time.perf_counter() - start:.0f} s\n", flush=True)
        status = status or rc
    return status


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130)
