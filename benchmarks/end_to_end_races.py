"""End-to-end differential run of race detection: random straight-line C programs with plain
and atomic accesses, built with `pyrsan build` and run with `pyrsan run --no-robustness` (the
defaults) and with `--explore`, against the C11 race model (testsuite/runtime/race_model.py:
happens-before from po and synchronises-with, seq_cst as acquire/release) over every SC
interleaving. Where test_race_differential.py drives the runtime in-process along given
interleavings, this checks what a user gets: the passes' plain-access hooks, the scheduler and
the driver's verdict.

    python benchmarks/end_to_end_races.py [--count 100] [--seed 1] [--max-events 8]
        [--max-schedules 3000] [--racy] [--keep]

Per program the model's verdict is "racy" when some SC interleaving has two conflicting accesses
(one plain, one a write) unordered by happens-before. Counted: false alarms (a race report on a
program no SC interleaving of which races: every pyrsan run is one SC interleaving, so this is a
pyrsan bug), false proofs (a complete exploration of a racy program without a report), and the
misses of the default and of the exploration. --racy keeps only racy programs (the misses are
then the detection rate). Exit status 1 on a false alarm or a false proof.
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testsuite" / "runtime"))

import race_model  # noqa: E402
from _bench import check_pyrsan, machine_load, main_guard, print_table, pyrsan_cmd, pyrsan_env, workdir  # noqa: E402
from end_to_end import ORDERS, c_main, pyrsan_run  # noqa: E402

RACE_EXIT = 66


def racy(threads: list[list[tuple]]) -> bool:
    """Some SC interleaving has a C11 data race (race_model.py)."""
    return any(race_model.racy_locations(threads, s) for s in race_model.all_schedules(threads))


def c_source(threads: list[list[tuple]]) -> str:
    """The program in C: plain `int` globals for the model's plain variables, `atomic_int` for
    its atomics; a plain read stores into a global of its own, so no compiler drops it."""
    reads = sum(1 for ops in threads for op in ops if op[0] in ("read", "ld", "rmw", "cas")) or 1
    out = ["#include <pthread.h>", "#include <stdatomic.h>", "#include <stdio.h>", "",
           f"int {', '.join(race_model.PLAIN_VARS)};", f"atomic_int {', '.join(race_model.ATOMIC_VARS)};",
           f"int {', '.join(f'r{i}' for i in range(reads))};", ""]
    r = 0
    for k, ops in enumerate(threads):
        out += [f"static void *t{k}(void *arg) {{", "  (void)arg;"]
        for op in ops:
            kind = op[0]
            if kind == "read":
                out.append(f"  r{r} = {op[1]};")
            elif kind == "write":
                out.append(f"  {op[1]} = {k + 1};")
            elif kind == "ld":
                out.append(f"  r{r} = atomic_load_explicit(&{op[1]}, {ORDERS[op[2]]});")
            elif kind == "st":
                out.append(f"  atomic_store_explicit(&{op[1]}, {op[2]}, {ORDERS[op[3]]});")
            elif kind == "rmw":
                fn = "atomic_fetch_add_explicit" if op[2] == "add" else "atomic_exchange_explicit"
                out.append(f"  r{r} = {fn}(&{op[1]}, {op[3]}, {ORDERS[op[4]]});")
            elif kind == "cas":
                out.append(f"  {{ int e = {op[2]}; r{r} = atomic_compare_exchange_strong_explicit(&{op[1]}, &e, "
                           f"{op[3]}, {ORDERS[op[4]]}, {ORDERS[op[5]]}); }}")
            else:
                out.append(f"  atomic_thread_fence({ORDERS[op[1]]});")
            r += kind in ("read", "ld", "rmw", "cas")
        out += ["  return NULL;", "}", ""]
    return "\n".join(out + c_main(len(threads), reads)) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-events", type=int, default=8, help="at most this many operations in all")
    ap.add_argument("--max-schedules", type=int, default=3000)
    ap.add_argument("--racy", action="store_true", help="keep only programs the model calls racy")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    check_pyrsan()
    tmp = workdir(args.keep, "pyrsan-e2e-races-")
    print(f"load average at start: {machine_load()}")
    rows, counts = [], {"programs": 0, "racy": 0, "false alarms": 0, "false proofs": 0,
                        "default misses": 0, "exploration misses": 0}
    start = time.monotonic()
    seed = args.seed
    while counts["programs"] < args.count:
        seed += 1
        threads = race_model.random_program(random.Random(seed), args.max_events)
        model = racy(threads)
        if args.racy and not model:
            continue
        source = tmp / f"p{seed}.c"
        source.write_text(c_source(threads))
        executable = tmp / f"p{seed}"
        subprocess.run(pyrsan_cmd("build", "-o", str(executable), str(source)), env=pyrsan_env(), check=True,
                       capture_output=True, timeout=300)
        default, _ = pyrsan_run(executable, tmp / f"p{seed}.default.json", "--no-robustness")
        explored, document = pyrsan_run(executable, tmp / f"p{seed}.explore.json", "--no-robustness",
                                        "--explore", "--max-schedules", str(args.max_schedules))
        complete = bool(document.get("exploration", {}).get("complete"))
        problems = []
        if not model and RACE_EXIT in (default, explored):
            problems.append("FALSE ALARM")
        if model and default != RACE_EXIT:
            problems.append("default miss")
        if model and explored != RACE_EXIT:
            problems.append("FALSE PROOF" if complete else "exploration miss")
        if {default, explored} - {0, RACE_EXIT}:
            problems.append(f"exit status {default}/{explored}")
        counts["programs"] += 1
        counts["racy"] += model
        counts["false alarms"] += "FALSE ALARM" in problems
        counts["false proofs"] += "FALSE PROOF" in problems
        counts["default misses"] += "default miss" in problems
        counts["exploration misses"] += "exploration miss" in problems
        if problems:
            rows.append([f"p{seed}", str(len(threads)), "racy" if model else "race-free",
                         str(default), str(explored), ", ".join(problems)])
            print(f"p{seed}: {', '.join(problems)}: {threads}", flush=True)
    print()
    if rows:
        print_table(["program", "threads", "model", "default", "explore", "problem"], rows)
    print(", ".join(f"{k}: {v}" for k, v in counts.items()) + f" ({time.monotonic() - start:.0f} s)")
    print(f"load average at end: {machine_load()}")
    return 1 if counts["false alarms"] or counts["false proofs"] else 0


if __name__ == "__main__":
    main_guard(main)
