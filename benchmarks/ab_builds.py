"""A/B of two pyrsan versions on the same programs, runs alternated (and ThreadSanitizer beside
them): for a change whose effect is smaller than this machine's noise between runs, compare
each run with the other version's run next to it.

Each program is built with `BEFORE -m pyrsan build` (another checkout's python, e.g. python3
for /work/main), with this checkout's pyrsan, and with clang -fsanitize=thread. Every round runs
each variant once, in alternating order; reported per variant: median wall time, CPU time
(user + sys) and context switches; per pyrsan pair: the median and range of the per-round
ratios new / before. The load average is printed before and after.

    python benchmarks/ab_builds.py --before python3 [--runs 5] [--scale 1.0]
        [--only mpmc_queue,counters,message_passing,spin_handoff] [--no-tsan]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _bench import PROGRAMS_DIR, BenchError, find_clang, machine_load, main_guard, workdir

PROGRAMS = {"mpmc_queue": 20000, "counters": 10_000_000, "message_passing": 4_000_000,
            "spin_handoff": 200_000}
OPTIONS = "print_reports=0:halt_on_error=0"


def build(variant: str, python: str, clang: str, src: Path, out: Path) -> None:
    if variant == "tsan":
        cmd = [clang, "-O1", "-g", "-fsanitize=thread", str(src), "-o", str(out), "-pthread"]
    else:
        cmd = [python, "-m", "pyrsan", "build", str(src), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=out.parent)
    if proc.returncode != 0:
        raise BenchError(f"{variant} build of {src.name} failed: {proc.stderr.strip()[-300:]}")


def run_once(exe: Path, arg: int, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s, context switches) of one run, which must print "ok"."""
    start = time.perf_counter()
    proc = subprocess.Popen([str(exe), str(arg)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # reaped here: Popen must not wait for it again
    if code not in (0, 66) or not out.startswith(b"ok"):
        raise BenchError(f"{exe.name} {arg}: exit {code}, output {out[:80]!r}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_nvcsw + usage.ru_nivcsw


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="python whose `-m pyrsan` is the base version")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", default=",".join(PROGRAMS))
    ap.add_argument("--no-tsan", action="store_true")
    args = ap.parse_args()
    clang = find_clang()
    names = [n for n in args.only.split(",") if n]
    for n in names:
        if n not in PROGRAMS:
            raise BenchError(f"unknown program {n!r} (known: {', '.join(PROGRAMS)})")
    variants = ["before", "new"] + ([] if args.no_tsan else ["tsan"])
    pythons = {"before": args.before, "new": sys.executable, "tsan": ""}
    env = {k: v for k, v in os.environ.items() if k not in ("PYRSAN_OPTIONS", "TSAN_OPTIONS")}
    env["PYRSAN_OPTIONS"] = OPTIONS
    print(f"ab_builds: {machine_load()}", flush=True)
    tmp = workdir(False, "pyrsan-ab-")
    for name in names:
        src = PROGRAMS_DIR / f"{name}.c"
        exes = {v: tmp / f"{name}.{v}" for v in variants}
        for v in variants:
            build(v, pythons[v], clang, src, exes[v])
        arg = max(1, int(PROGRAMS[name] * args.scale))
        res: dict[str, list[tuple[float, float, int]]] = {v: [] for v in variants}
        for r in range(args.runs):
            for v in (variants if r % 2 == 0 else variants[::-1]):
                res[v].append(run_once(exes[v], arg, env))
        print(f"{name} {arg}:")
        for v in variants:
            wall = statistics.median(x[0] for x in res[v])
            cpu = statistics.median(x[1] for x in res[v])
            cs = statistics.median(x[2] for x in res[v])
            print(f"  {v:7s} wall {wall:7.2f} s  cpu {cpu:7.2f} s  context switches {cs:9.0f}")
        for what, i in (("wall", 0), ("cpu", 1)):
            ratios = sorted(n[i] / b[i] for n, b in zip(res["new"], res["before"]))
            print(f"  new / before, {what}: median {statistics.median(ratios):.3f} "
                  f"[{ratios[0]:.2f} .. {ratios[-1]:.2f}]")
        if "tsan" in res:
            tw = statistics.median(x[0] for x in res["tsan"])
            for v in ("before", "new"):
                print(f"  {v} / tsan, wall: {statistics.median(x[0] for x in res[v]) / tw:.2f}x")
        sys.stdout.flush()
    print(f"ab_builds: {machine_load()}")
    return 0


if __name__ == "__main__":
    main_guard(main)
