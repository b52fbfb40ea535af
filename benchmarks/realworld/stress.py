"""Issue 14, item 8: the stress program (stress.c) built native, with ThreadSanitizer and with
`pyrsan build`, run once each with the same arguments: wall time, peak RSS, and pyrsan's ratios
to TSan. The issue's full size is OPS=1e8 LOCS=1e6 THREADS=1000 ALIVE=256 (the default);
smaller sizes show how time and memory grow. A run over --timeout is reported, not waited for.
Besides the ratios it prints the per-unit costs of pyrsan over native: microseconds per
operation, and bytes per atomic location (all LOCS of them: the workers' operations pick
locations at random, about LOCS * (1 - exp(-OPS / LOCS)) of them, and main's final sum loads
every one). --sweep runs the scaled-down series used in the
closing note of issue 14 (locations, alive threads) instead of one size. --massif also runs the
pyrsan build once under valgrind's massif and prints where the runtime's heap is at its peak:
the bytes of each caller of the runtime's allocator (alloc.c), per location. --census also runs
the pyrsan build with verbosity=1 (the measured run itself: the census only reads, at exit) and
prints the runtime's census of its location records at exit (location.c rsan_loc_print_census:
records by class, their satellites' bytes, the bytes of alloc.c's size classes), which costs no
valgrind and no second run, and so works at the full size.

    python benchmarks/realworld/stress.py [--ops N] [--locs N] [--threads N] [--alive N] [--timeout S]
    python benchmarks/realworld/stress.py --sweep
    python benchmarks/realworld/stress.py --ops 1000000 --locs 100000 --massif
    python benchmarks/realworld/stress.py --census
"""
from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
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
    ap.add_argument("--massif", action="store_true",
                    help="also print the runtime's heap at its peak by allocating function (valgrind)")
    ap.add_argument("--census", action="store_true",
                    help="also print the runtime's census of its location records at exit (verbosity=1)")
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
        measure(exes, size, args.timeout, args.census)
        if args.massif:
            heap_by_caller(exes["pyrsan"], size, tmp, args.timeout)
    print(f"load average at end: {machine_load()}")
    return 0


def measure(exes: dict[str, str], size: tuple[int, int, int, int], timeout: float, with_census: bool) -> None:
    """One size, the three builds run one after the other (same load): table and ratios; with
    with_census, the pyrsan run's census lines (verbosity=1) after them."""
    ops, locs = size[0], size[1]
    argv = [str(x) for x in size]
    env = dict(pyrsan_env())
    env["PYRSAN_OPTIONS"] = "print_reports=0" + (":verbosity=1" if with_census else "")
    rows, results = [], {}
    census_lines: list[str] = []
    for variant in ("native", "tsan", "pyrsan"):
        res = run_measured([exes[variant], *argv], env=env, timeout=timeout, rss=True)
        if variant == "pyrsan" and with_census:
            census_lines = [ln for ln in res.stderr.splitlines() if ln.startswith(("pyrsan: location", "pyrsan: race"))]
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
        by_workers = locs * (1 - math.exp(-ops / locs))
        print(f"pyrsan per unit over native: {(p.wall - n.wall) / ops * 1e6:.2f} us per operation, "
              f"{(p.maxrss_kb - n.maxrss_kb) * 1024 / locs:.0f} bytes per location "
              f"({locs} locations, ~{by_workers:.0f} of them touched by the workers)")
    if with_census:
        if not p or not census_lines:
            print("census: the run did not finish or printed none; skipped")
            return
        print(f"census at exit ({locs} locations):")
        for ln in census_lines:
            print("  " + ln[len("pyrsan: "):])


#: massif's heap tree: "n<children>: <bytes> <address>: <function> (...)", indented by depth
MASSIF_NODE = re.compile(r"^( *)n\d+: (\d+) (?:0x[0-9A-Fa-f]+: )?(\S+)")


def heap_by_caller(exe: str, size: tuple[int, int, int, int], tmp: Path, timeout: float) -> None:
    """The pyrsan build once under massif (DWARF stripped: valgrind 3.19 cannot read clang-22's):
    at the peak snapshot, the bytes each function got from the runtime's allocator (the
    callers of rsan_alloc*, rsan_realloc), and per location (LOCS records)."""
    if not shutil.which("valgrind"):
        print("massif: valgrind not found (apt-get install valgrind); skipped")
        return
    stripped, out = tmp / "pyrsan.stripped", tmp / "massif.out"
    subprocess.run(["strip", "--strip-debug", "-o", str(stripped), exe], check=True)
    env = dict(pyrsan_env())
    env["PYRSAN_OPTIONS"] = "print_reports=0"
    cmd = ["valgrind", "--tool=massif", f"--massif-out-file={out}", "--depth=3", "--threshold=0.1",
           str(stripped), *map(str, size)]
    res = run_measured(cmd, env=env, timeout=timeout * 20)
    if res.timed_out or not out.exists():
        print("massif: the run did not finish; skipped")
        return
    snapshots = out.read_text(errors="replace").split("snapshot=")
    peak = next((s for s in snapshots if "heap_tree=peak" in s), None)
    if peak is None:
        print("massif: no peak snapshot; skipped")
        return
    total, rows, under = 0, {}, None
    for line in peak.splitlines():
        m = MASSIF_NODE.match(line)
        if not m:
            continue
        depth, nbytes, fn = len(m.group(1)), int(m.group(2)), m.group(3)
        if depth == 0:
            total = nbytes
        elif depth == 1:
            under = fn if fn.startswith("rsan_") else None
            if under is None:
                rows[fn] = rows.get(fn, 0) + nbytes
        elif depth == 2 and under is not None:
            rows[fn] = rows.get(fn, 0) + nbytes
    locs = size[1]
    print(f"runtime heap at the peak (massif): {total / 1e6:.1f} MB, {total / locs:.0f} bytes per location")
    print_table(["allocated by", "MB", "bytes per location"],
                [[fn, f"{b / 1e6:.1f}", f"{b / locs:.0f}"] for fn, b in sorted(rows.items(), key=lambda r: -r[1])
                 if b >= total / 200])


if __name__ == "__main__":
    main_guard(main)
