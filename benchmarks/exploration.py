"""Exploration power (issue 15): `--explore` on every robust program of the litmus corpus
(testsuite/litmus, header `// robust: yes`) and on the robust versions of
benchmarks/programs/sched (-DROBUST): complete or not, verdict, schedules, sleep-blocked runs,
wall time of the exploration (the build excluded) and milliseconds per schedule.

Each program is built once (`pyrsan build`), then explored through the driver's own code path
(runner.explore_program, as `pyrsan run --explore`). With the fork server (default where the
driver has it) and without it (PYRSAN_FORK_SERVER=0: one process per schedule), interleaved
per program. Run it with another checkout's Python to compare commits (a driver without a fork
server runs the same mode twice).

    python benchmarks/exploration.py [--max-schedules 1000] [--only TEXT] [--no-exec]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import PROGRAMS_DIR, REPO_ROOT, main_guard, machine_load, print_table, pyrsan_cmd

LITMUS = REPO_ROOT / "testsuite" / "litmus"
SCHED = [("dekker.c", ()), ("peterson.c", ("-DNTHREADS=2",)), ("peterson.c", ("-DNTHREADS=3",)),
         ("lamport_fast.c", ("-DNTHREADS=2",)), ("lamport_fast.c", ("-DNTHREADS=3",)), ("seqlock.c", ("-DNTHREADS=3",)),
         ("bakery.c", ("-DNTHREADS=2",)), ("bakery.c", ("-DNTHREADS=3",)), ("dekker_tree.c", ())]


def cases() -> list[tuple[str, Path, tuple[str, ...]]]:
    out = []
    for path in sorted(LITMUS.glob("*.c")):
        if "// robust: yes" in path.read_text(errors="replace"):
            out.append((path.stem, path, ()))
    for name, defines in SCHED:
        label = Path(name).stem + "".join(d.replace("-DNTHREADS=", ",") for d in defines)
        out.append((label + " (ROBUST)", PROGRAMS_DIR / "sched" / name, ("-DROBUST",) + defines))
    return out


def build(source: Path, defines: tuple[str, ...], out: Path) -> None:
    cmd = pyrsan_cmd("build", "-o", str(out), *defines, str(source))
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def explore_once(exe: Path, work: Path, max_schedules: int, fork_server: bool) -> tuple[str, str, float, int, int]:
    from pyrsan.runner import ExploreOptions, RunOptions, explore_program

    os.environ["PYRSAN_FORK_SERVER"] = "1" if fork_server else "0"
    options = RunOptions(timeout=60, work_dir=str(work), quiet=True)
    start = time.perf_counter()
    result = explore_program(str(exe), [], options, ExploreOptions(max_schedules=max_schedules, jobs=1))
    wall = time.perf_counter() - start
    exploration = result.exploration
    verdict = "robust" if exploration.complete and not result.reports else (
        "REPORTED" if result.reports else "bound")
    return verdict, "complete" if exploration.complete else str(exploration.bound), wall, exploration.schedules, \
        exploration.sleep_blocked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-schedules", type=int, default=1000)
    parser.add_argument("--only", help="programs whose name contains TEXT")
    parser.add_argument("--no-exec", action="store_true", help="skip the runs without the fork server")
    args = parser.parse_args()
    import pyrsan

    print(f"# exploration.py: pyrsan from {Path(pyrsan.__file__).parent}; --max-schedules {args.max_schedules}; "
          f"{machine_load()}")
    rows = []
    proved = 0
    with tempfile.TemporaryDirectory(prefix="pyrsan-explore-bench-") as tmp:
        work = Path(tmp)
        for name, source, defines in cases():
            if args.only and args.only not in name:
                continue
            exe = work / "prog"
            try:
                build(source, defines, exe)
            except subprocess.CalledProcessError:
                rows.append([name, "build failed", "", "", "", "", ""])
                continue
            verdict, how, wall, schedules, blocked = explore_once(exe, work / "runs", args.max_schedules, True)
            proved += verdict == "robust"
            row = [name, verdict, how, str(schedules), str(blocked), f"{wall:.2f}",
                   f"{wall / max(schedules, 1) * 1000:.1f}"]
            if not args.no_exec:
                _, _, wall_exec, schedules_exec, _ = explore_once(exe, work / "runs", args.max_schedules, False)
                row.append(f"{wall_exec / max(schedules_exec, 1) * 1000:.1f}")
            rows.append(row)
            print("  " + " | ".join(row), file=sys.stderr, flush=True)
    headers = ["program", "verdict", "explored", "schedules", "sleep-blocked", "wall s", "ms/schedule (fork server)"]
    if not args.no_exec:
        headers.append("ms/schedule (exec)")
    print_table(headers, rows)
    print(f"proved (complete, robust): {proved} of {len(rows)}; {machine_load()}")


if __name__ == "__main__":
    main_guard(main)
