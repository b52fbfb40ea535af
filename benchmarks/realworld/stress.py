"""Issue 14, item 8: the stress program (stress.c) built native, with ThreadSanitizer and with
`pyrsan build`, run once each with the same arguments: wall time, peak RSS, and pyrsan's ratios
to TSan. The issue's full size is OPS=1e8 LOCS=1e6 THREADS=1000 ALIVE=256 (the default);
smaller sizes show how time and memory grow. A run over --timeout is reported, not waited for.
Besides the ratios it prints the per-unit costs of pyrsan over native: microseconds per
operation, and bytes per atomic location touched (about LOCS * (1 - exp(-OPS / LOCS)) of them:
each operation picks a location at random). --sweep runs the scaled-down series used in the
closing note of issue 14 (locations, alive threads) instead of one size.

    python benchmarks/realworld/stress.py [--ops N] [--locs N] [--threads N] [--alive N] [--timeout S]
    python benchmarks/realworld/stress.py --sweep
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _bench import (COMPILE_FLAGS, find_clang, fmt_mb, fmt_s, machine_load, main_guard,  # noqa: E402
                    print_table, pyrsan_cmd, pyrsan_env, ratio, run_measured, workdir)

SOURCE = Path(__file__).resolve().parent / "stress.c"
#: --sweep: (ops, locs, threads, alive), from the issue's shape scaled down to minutes.
SWEEP = [(1_000_000, 1_000, 1000, 256), (1_000_000, 100_000, 1000, 256), (1_000_000, 1_000_000, 1000, 256),
         (1_000_000, 1_000_000, 1000, 16), (4_000_000, 1_000, 1000, 256)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=100_000_000)
    ap.add_argument("--locs", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=1000)
    ap.add_argument("--alive", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--sweep", action="store_true", help="run the scaled-down series (SWEEP) instead")
    args = ap.parse_args()
    clang = find_clang()
    tmp = workdir(args.keep, "pyrsan-stress-")
    print(f"load average at start: {machine_load()}")
    exes = {}
    for variant, cmd, env in (
            ("native", [clang, *COMPILE_FLAGS, str(SOURCE), "-pthread", "-o", str(tmp / "native")], None),
            ("tsan", [clang, *COMPILE_FLAGS, "-fsanitize=thread", str(SOURCE), "-pthread", "-o", str(tmp / "tsan")],
             None),
            ("pyrsan", pyrsan_cmd("build", str(SOURCE), "-o", str(tmp / "pyrsan")), pyrsan_env())):
        res = run_measured(cmd, env=env, timeout=300)
        if res.returncode != 0:
            print(f"error: building the {variant} binary failed: {res.stderr.strip().splitlines()[-1:]}")
            return 2
        exes[variant] = str(tmp / variant)
    sizes = SWEEP if args.sweep else [(args.ops, args.locs, args.threads, args.alive)]
    for size in sizes:
        measure(exes, size, args.timeout)
    print(f"load average at end: {machine_load()}")
    return 0


def measure(exes: dict[str, str], size: tuple[int, int, int, int], timeout: float) -> None:
    """One size, the three builds run one after the other (same load): table and ratios."""
    ops, locs = size[0], size[1]
    argv = [str(x) for x in size]
    env = dict(pyrsan_env())
    env["PYRSAN_OPTIONS"] = "print_reports=0"
    rows, results = [], {}
    for variant in ("native", "tsan", "pyrsan"):
        res = run_measured([exes[variant], *argv], env=env, timeout=timeout, rss=True)
        ok = not res.timed_out and res.stdout.startswith("ok")
        results[variant] = res if ok else None
        status = "ok" if ok else ("timed out" if res.timed_out else f"exit {res.returncode}")
        rows.append([variant, status, fmt_s(res.wall), fmt_mb(res.maxrss_kb) if res.maxrss_kb >= 0 else "?"])
    print(f"stress {' '.join(argv)} (ops locs threads alive)")
    print_table(["build", "result", "time", "peak RSS"], rows)
    p, t, n = results["pyrsan"], results["tsan"], results["native"]
    if p and t:
        print(f"pyrsan / TSan: time {ratio(p.wall, t.wall)}, memory {ratio(p.maxrss_kb, t.maxrss_kb)} "
              f"(target: memory within 2x: {'MET' if p.maxrss_kb <= 2 * t.maxrss_kb else 'NOT MET'})")
    else:
        print("pyrsan / TSan: no ratio (a run did not finish); target NOT MET")
    if p and n:
        touched = locs * (1 - math.exp(-ops / locs))
        print(f"pyrsan per unit over native: {(p.wall - n.wall) / ops * 1e6:.2f} us per operation, "
              f"{(p.maxrss_kb - n.maxrss_kb) * 1024 / touched:.0f} bytes per location touched "
              f"(~{touched:.0f} touched)")


if __name__ == "__main__":
    main_guard(main)
