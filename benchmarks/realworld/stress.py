"""Issue 14, item 8: the stress program (stress.c) built native, with ThreadSanitizer and with
`pyrsan build`, run once each with the same arguments: wall time, peak RSS, and pyrsan's ratios
to TSan. The issue's full size is OPS=1e8 LOCS=1e6 THREADS=1000 ALIVE=256 (the default);
smaller sizes show how time and memory grow. A run over --timeout is reported, not waited for.

    python benchmarks/realworld/stress.py [--ops N] [--locs N] [--threads N] [--alive N] [--timeout S]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _bench import (COMPILE_FLAGS, find_clang, fmt_mb, fmt_s, machine_load, main_guard,  # noqa: E402
                    print_table, pyrsan_cmd, pyrsan_env, ratio, run_measured, workdir)

SOURCE = Path(__file__).resolve().parent / "stress.c"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=100_000_000)
    ap.add_argument("--locs", type=int, default=1_000_000)
    ap.add_argument("--threads", type=int, default=1000)
    ap.add_argument("--alive", type=int, default=256)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--keep", action="store_true")
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
    argv = [str(args.ops), str(args.locs), str(args.threads), str(args.alive)]
    env = dict(pyrsan_env())
    env["PYRSAN_OPTIONS"] = "print_reports=0"
    rows, results = [], {}
    for variant in ("native", "tsan", "pyrsan"):
        res = run_measured([exes[variant], *argv], env=env, timeout=args.timeout, rss=True)
        ok = not res.timed_out and res.stdout.startswith("ok")
        results[variant] = res if ok else None
        status = "ok" if ok else ("timed out" if res.timed_out else f"exit {res.returncode}")
        rows.append([variant, status, fmt_s(res.wall), fmt_mb(res.maxrss_kb) if res.maxrss_kb >= 0 else "?"])
    print(f"stress {' '.join(argv)} (ops locs threads alive)")
    print_table(["build", "result", "time", "peak RSS"], rows)
    p, t = results["pyrsan"], results["tsan"]
    if p and t:
        print(f"pyrsan / TSan: time {ratio(p.wall, t.wall)}, memory {ratio(p.maxrss_kb, t.maxrss_kb)} "
              f"(target: memory within 2x: {'MET' if p.maxrss_kb <= 2 * t.maxrss_kb else 'NOT MET'})")
    else:
        print("pyrsan / TSan: no ratio (a run did not finish); target NOT MET")
    return 0


if __name__ == "__main__":
    main_guard(main)
