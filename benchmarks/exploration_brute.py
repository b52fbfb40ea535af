"""Brute force against `--explore` (issue 15 item 5): random small programs with seq_cst
accesses, release/acquire/relaxed accesses and SC fences, every interleaving run through the real
runtime (testsuite/sched/brute.py: the whole schedule tree, no reduction, no closure), against
`--explore --keep-going` with the F-order closure (sched_closure=1, what `--explore` does) and,
with `--modes 1,0`, today's relation too.

    python benchmarks/exploration_brute.py [--count 30] [--seed 1] [--max-interleavings 3000]
        [--threads 3] [--min-threads 2] [--ops 3] [--non-robust 0.5] [--modes 1,0] [--rc20] [--keep]

Per program: threads, the interleavings run, the reports (keys) all of them made, and each
exploration's schedules and keys (with the closure: the schedules run to confirm reports that a
closure found, i.e. reports made only under some orders of SC fences). A *disagreement* is a
complete exploration whose verdict or report keys (or groups) are not those of every
interleaving, or an exploration report that no interleaving makes. `--rc20` also prints the
RC20 model's verdict (testsuite/reference/rc20.py) beside the monitor's over every interleaving
(a difference there is the engine's, not the explorer's; the exit status ignores it). Exit status 1
when an exploration disagrees.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time

from _bench import REPO_ROOT, check_pyrsan, machine_load, main_guard, print_table, pyrsan_cmd, pyrsan_env, workdir

sys.path.insert(0, str(REPO_ROOT / "testsuite" / "reference"))
sys.path.insert(0, str(REPO_ROOT))

import rc20  # noqa: E402
from end_to_end import unrolled  # noqa: E402
from testsuite.sched.brute import TooManyInterleavings, compare, programs, source  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=30, help="programs to compare")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-interleavings", type=int, default=3000,
                    help="skip programs whose estimated interleavings exceed this")
    ap.add_argument("--threads", type=int, default=3, help="at most this many threads (2-4)")
    ap.add_argument("--min-threads", type=int, default=2, help="at least this many threads")
    ap.add_argument("--ops", type=int, default=3, help="at most this many operations a thread")
    ap.add_argument("--non-robust", type=float, default=0.5,
                    help="the share of programs the RC20 model calls non-robust (they are rare at random)")
    ap.add_argument("--modes", default="1", help="sched_closure modes to explore with, comma-separated (0, 1)")
    ap.add_argument("--rc20", action="store_true", help="also the RC20 model's verdict")
    ap.add_argument("--keep", action="store_true", help="keep the programs (and print where)")
    args = ap.parse_args()
    modes = tuple(m for m in args.modes.split(",") if m)
    check_pyrsan()
    tmp = workdir(args.keep, "pyrsan-brute-")
    print(f"load average at start: {machine_load()}")
    rng = random.Random(args.seed)
    rows, bad = [], []
    totals = {"programs": 0, "non-robust": 0, "interleavings": 0, "skipped (too many)": 0}
    totals |= {f"schedules closure={m}": 0 for m in modes}
    totals |= {"closure re-runs": 0, "disagreements": 0, "rc20 differs": 0}
    start = time.monotonic()
    chosen = programs(rng, args.count, args.max_interleavings, args.non_robust, args.threads, args.ops,
                      args.min_threads)
    for n, threads in enumerate(chosen, 1):
        source_text = source(threads)
        path = tmp / f"p{n}.c"
        path.write_text(source_text)
        exe = tmp / f"p{n}"
        subprocess.run(pyrsan_cmd("build", "-o", str(exe), str(path)), env=pyrsan_env(), check=True,
                       capture_output=True, timeout=300)
        try:
            result = compare(str(exe), tmp / f"w{n}", modes, max_runs=4 * args.max_interleavings)
        except TooManyInterleavings:
            totals["skipped (too many)"] += 1
            continue
        totals["programs"] += 1
        totals["non-robust"] += bool(result.brute_keys)
        totals["interleavings"] += result.interleavings
        row = [f"p{n}", str(len(threads)), str(result.interleavings), str(len(result.brute_keys))]
        for mode in modes:
            schedules, complete, keys, _, reruns = result.explored[mode]
            totals[f"schedules closure={mode}"] += schedules
            totals["closure re-runs"] += reruns
            row += [f"{schedules}{'' if complete else ' (bound)'}", str(len(keys))]
            row += [str(reruns)] if mode == "1" else []
        if args.rc20:
            model = rc20.robust([unrolled(ops) for ops in threads])
            differs = model != (not result.brute_keys)
            totals["rc20 differs"] += differs
            row.append(("robust" if model else "not robust") + (" DIFFERS" if differs else ""))
        problems = result.disagreements()
        totals["disagreements"] += bool(problems)
        row.append("; ".join(problems) or "-")
        rows.append(row)
        if problems:
            bad.append((path, problems))
            print(f"p{n}: DISAGREEMENT {problems}\n{source_text}", flush=True)
    header = ["program", "threads", "interleavings", "keys"]
    for mode in modes:
        header += [f"schedules closure={mode}", f"keys closure={mode}"] + (["closure re-runs"] if mode == "1" else [])
    header += ["rc20"] if args.rc20 else []
    print_table(header + ["disagreement"], rows)
    print(", ".join(f"{k}: {v}" for k, v in totals.items()) + f" ({time.monotonic() - start:.0f} s)")
    print(f"load average at end: {machine_load()}")
    if args.keep:
        print(f"programs in {tmp}")
    return 1 if bad else 0


if __name__ == "__main__":
    main_guard(main)
