"""Instructions per atomic operation of overhead.py's programs under pyrsan (issue 11).

Each program is built with `python -m pyrsan build` (this Python's pyrsan; with --before PYTHON
also with that Python's), stripped of DWARF (`strip --strip-debug`: valgrind 3.19 cannot read
clang-22's), and run once under `valgrind --tool=callgrind`. Instruction counts do not depend
on the machine's load, unlike times: the measure to compare runtimes by while other jobs run.
Callgrind serialises the threads (one runs at a time, for long stretches), so the cache-line
traffic of contended atomics is not measured. Atomic operations = calls of the runtime's
`__rsan_{load,store,rmw,cas,wait,spin_load,spin_load_ne,bcas}_N` entry points (or their
target clones). Besides overhead.py's three programs, `turns` (benchmarks/programs/turns.c) runs
the same op mix with its threads one after another: its count is the same on every run, so a
change of a few instructions per operation shows there first.

With --tsan, each program is also built with ThreadSanitizer (`clang-22 -O1 -g
-fsanitize=thread`, as overhead.py does) and run under callgrind with the same argument: its
whole count, and pyrsan's count over it (issue 11's overhead target in instructions, which the
machine's load does not move). The concurrent programs' spin loops make both counts move by a
few percent from run to run; `turns` does not.

    python benchmarks/instructions.py [--before PYTHON] [--tsan] [--only counters] [--keep]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from _bench import (COMPILE_FLAGS, PROGRAMS_DIR, BenchError, check_pyrsan, find_clang, machine_load,
                    main_guard, workdir)

PROGRAMS = (("counters", "100000"), ("mpmc_queue", "1000"), ("message_passing", "50000"),
            ("turns", "20000"))  # turns: threads in turn, the same count on every run
# (a clone's name when the entry point is built for several targets: atomic.c target_clones)
ENTRY = re.compile(r"__rsan_(load|store|rmw|cas|wait|spin_load|spin_load_ne|bcas)_\d+(\.avx2\.0|\.default\.1)?")


def count(callgrind_out: Path) -> tuple[int, int]:
    """(instructions, atomic operations) of a callgrind output file."""
    names: dict[str, str] = {}
    calls: collections.Counter[str] = collections.Counter()
    cfn = None
    total = 0
    with open(callgrind_out, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3).strip()
                if m.group(1) == "cfn":
                    cfn = names.get(m.group(2))
                continue
            if line.startswith("calls=") and cfn and ENTRY.fullmatch(cfn):
                calls[cfn] += int(line.split("=")[1].split()[0])
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
    return total, sum(calls.values())


def measure(python: str, name: str, arg: str, work: Path, tag: str) -> tuple[int, int]:
    """(instructions, atomic operations) of one run of `name arg` built by `python`'s pyrsan,
    or by ThreadSanitizer when tag is "tsan" (its operations are not counted: 0)."""
    exe = work / f"{name}.{tag}"
    src = str(PROGRAMS_DIR / f"{name}.c")
    cmd = ([find_clang(), *COMPILE_FLAGS, "-fsanitize=thread", src, "-o", str(exe), "-pthread"]
           if tag == "tsan" else [python, "-m", "pyrsan", "build", src, "-o", str(exe)])
    build = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    if build.returncode != 0:
        raise BenchError(f"{tag} build of {name} failed: {build.stderr.strip()[:300]}")
    stripped = work / f"{name}.{tag}.s"
    subprocess.run(["strip", "--strip-debug", "-o", str(stripped), str(exe)], check=True)
    out = work / f"callgrind.{name}.{tag}"
    env = dict(os.environ, PYRSAN_OPTIONS="print_reports=0:halt_on_error=0")
    run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(stripped), arg],
                         capture_output=True, text=True, env=env, cwd=work)
    if not out.exists():
        raise BenchError(f"callgrind on {name} produced no output: {run.stderr.strip()[-300:]}")
    return count(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", metavar="PYTHON", help="also measure this Python's pyrsan (variant before)")
    ap.add_argument("--tsan", action="store_true", help="also count ThreadSanitizer's build of each program")
    ap.add_argument("--only", action="append", choices=[p for p, _ in PROGRAMS], help="only these programs")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    for tool in ("valgrind", "strip"):
        if not shutil.which(tool):
            raise BenchError(f"{tool} not found on PATH")
    check_pyrsan()
    work = workdir(args.keep, "rsan-instr-")
    print(f"instructions: callgrind, {machine_load()}")
    variants = [("pyrsan", sys.executable)] + ([("before", args.before)] if args.before else [])
    head = "  ".join(f"{v:>34s}" for v, _ in variants)
    if args.tsan:
        head += f"  {'tsan':>10s}  {'pyrsan/tsan':>11s}"
    print(f"{'program':16s} {'argument':>8s}  " + head)
    for name, arg in PROGRAMS:
        if args.only and name not in args.only:
            continue
        cells = []
        totals = []
        for tag, python in variants:
            instr, ops = measure(python, name, arg, work, tag)
            totals.append(instr)
            per = f"{instr / ops:,.0f}/op" if ops else "no ops"
            cells.append(f"{instr / 1e6:,.1f} M, {ops:,} ops, {per}".rjust(34))
        if args.tsan:
            tsan, _ = measure(sys.executable, name, arg, work, "tsan")
            cells.append(f"{tsan / 1e6:,.1f} M".rjust(10))
            cells.append(f"{totals[0] / tsan:.2f}x".rjust(11) if tsan else "n/a".rjust(11))
        print(f"{name:16s} {arg:>8s}  " + "  ".join(cells))
    if args.keep:
        print(f"work directory: {work}")
    return 0


if __name__ == "__main__":
    main_guard(main)
