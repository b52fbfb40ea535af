"""The F-order closure on simulated programs (issue 15, docs/design/exploration.md §2): for the
seq_cst litmus shapes (robust: the closure must find nothing) and random straight-line
programs, the explorer's schedules with today's relation (clean SC fences commute), with the
coarse relation (every two SC fences commute), and the monitor states the closures of the
coarse runs expand in all (testsuite/sched/lc_model.py
`class_reports`). A random program's reports are checked against every interleaving
(`lc_model.all_reports`); a difference ends the script with status 1.

    python benchmarks/closure_sim.py [--random 100] [--seed 8300] [--no-today]
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from _bench import REPO_ROOT, machine_load, main_guard, print_table

sys.path.insert(0, str(REPO_ROOT))
from testsuite.sched import lc_model  # noqa: E402
from testsuite.sched import test_dpor_monitor as monitor  # noqa: E402  (puts testsuite/reference on the path)
from explore import split_fenced  # noqa: E402  (testsuite/reference/explore.py)


def sc(*threads):
    return [[(op[0], op[1], *op[2:], "sc") for op in t] for t in threads]


SHAPES = {
    "SB": sc([("st", "x", 1), ("ld", "y")], [("st", "y", 1), ("ld", "x")]),
    "WRC": sc([("st", "x", 1)], [("ld", "x"), ("st", "y", 1)], [("ld", "y"), ("ld", "x")]),
    "IRIW": sc([("st", "x", 1)], [("st", "y", 1)], [("ld", "x"), ("ld", "y")], [("ld", "y"), ("ld", "x")]),
    "CoRR (2 writers, 2 readers of 2 loads)": sc([("st", "x", 1)], [("st", "x", 2)], [("ld", "x"), ("ld", "x")],
                                                [("ld", "x"), ("ld", "x")]),
}


def measure(split, today: bool, robust: bool = False) -> tuple[str, int, int, float]:
    """``robust``: a litmus shape known robust, whose every-interleaving search (lc_model.
    all_reports) takes minutes (IRIW): the closure must find nothing."""
    start = time.perf_counter()
    expected = frozenset() if robust else lc_model.all_reports(split)[0]
    found, coarse, states, _ = monitor.lc_closed(split)
    if found != expected:
        raise SystemExit(f"closure lost reports on {split}: {sorted(expected - found)}")
    old = str(monitor.lc_explored(split)[1]) if today else "-"
    return old, coarse, states, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=100, help="random programs (bigger_random_program, 14 steps)")
    parser.add_argument("--seed", type=int, default=8300)
    parser.add_argument("--no-today", action="store_true", help="skip today's relation")
    args = parser.parse_args()
    print(f"# closure_sim.py; {machine_load()}")
    rows = []
    for name, program in SHAPES.items():
        today = not args.no_today and name == "SB"   # WRC: 7,470 schedules, minutes in Python
        old, coarse, states, wall = measure(split_fenced(program), today, robust=True)
        rows.append([name, old, str(coarse), str(states), f"{wall:.1f}"])
    rng = random.Random(args.seed)
    totals = [0, 0, 0, 0.0]
    for k in range(args.random):
        split = split_fenced(monitor.bigger_random_program(rng, 14, 0.5 if k % 2 else 0.3))
        old, coarse, states, wall = measure(split, not args.no_today)
        totals[0] += int(old) if old != "-" else 0
        totals[1] += coarse
        totals[2] += states
        totals[3] += wall
    if args.random:
        rows.append([f"{args.random} random programs (seed {args.seed})", str(totals[0]) if not args.no_today else "-",
                     str(totals[1]), str(totals[2]), f"{totals[3]:.1f}"])
    print_table(["program", "schedules today", "coarse schedules", "closure states", "wall s"], rows)
    print(f"# {machine_load()}")
    return 0


if __name__ == "__main__":
    main_guard(main)
