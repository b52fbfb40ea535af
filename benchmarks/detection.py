"""Detection-power benchmark of schedule control (issue 5).

Non-robust programs (release/acquire, `benchmarks/programs/sched/*.c`): `pyrsan run --sched pct
--runs 10` until the first report; how many runs it took and the wall time. Their robust
versions (`-DROBUST`: seq_cst fences, or seq_cst accesses for the seqlock): `pyrsan run
--explore` to completion or to `--max-schedules`; whether it completed (a proof, verdict
`robust`), the schedules run and the wall time. Every wall time includes `pyrsan`'s build of the
program, also shown on its own ("build").

Targets (issue 5): every non-robust program reported within 10 pct runs; a litmus proof
(SB with seq_cst) in under 1 s and a 3-thread mutex proof in under 1 min (exploration only,
the build time subtracted).

    python benchmarks/detection.py [--seed 1] [--max-schedules 5000] [--jobs 2] [--only NAME] [--quick]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from _bench import (PROGRAMS_DIR, REPO_ROOT, check_pyrsan, fmt_s, machine_load, main_guard, print_table,
                    pyrsan_cmd, pyrsan_env, run_checked, run_measured, workdir)

SCHED_DIR = PROGRAMS_DIR / "sched"
PCT_RUNS = 10


@dataclass(frozen=True)
class Case:
    name: str
    source: Path
    defines: tuple[str, ...] = ()
    robust_only: bool = False     # a robust program with no non-robust version (a litmus test)
    proof_target: float | None = None   # seconds for the exploration (build excluded)


CASES = [
    Case("SB seq_cst (litmus)", REPO_ROOT / "testsuite" / "litmus" / "sb_sc.c", robust_only=True, proof_target=1.0),
    Case("SB fenced (litmus)", REPO_ROOT / "testsuite" / "litmus" / "sb_fenced.c", robust_only=True,
         proof_target=1.0),
    Case("seqlock, 1 writer 2 readers", SCHED_DIR / "seqlock.c", ("-DNTHREADS=3",)),
    Case("Lamport fast mutex, 2 threads", SCHED_DIR / "lamport_fast.c", ("-DNTHREADS=2",)),
    Case("Lamport fast mutex, 3 threads", SCHED_DIR / "lamport_fast.c", ("-DNTHREADS=3",), proof_target=60.0),
    Case("Lamport fast mutex, 4 threads", SCHED_DIR / "lamport_fast.c", ("-DNTHREADS=4",)),
    Case("Dekker, 2 threads", SCHED_DIR / "dekker.c"),
    Case("Peterson, 2 threads", SCHED_DIR / "peterson.c", ("-DNTHREADS=2",)),
    Case("Peterson (filter), 3 threads", SCHED_DIR / "peterson.c", ("-DNTHREADS=3",), proof_target=60.0),
    Case("Peterson (filter), 4 threads", SCHED_DIR / "peterson.c", ("-DNTHREADS=4",)),
    Case("event counter, 8 threads", SCHED_DIR / "event_counter.c", ("-DNTHREADS=8",)),
]


def _document(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def build_time(case: Case, work: Path, env: dict[str, str], robust: bool) -> float:
    flags = [*case.defines, *(("-DROBUST",) if robust else ())]
    result = run_checked(pyrsan_cmd("build", "-o", str(work / "build-probe"), *flags, str(case.source)),
                         f"pyrsan build {case.source.name}", env=env, timeout=600)
    return result.wall


def detect(case: Case, work: Path, env: dict[str, str], seed: int) -> list[str]:
    out = work / "pct.json"
    result = run_measured(pyrsan_cmd("run", "--sched", "pct", "--seed", str(seed), "--runs", str(PCT_RUNS),
                                     "--timeout", "60", "--json", str(out), "--schedule-dir", str(work / "schedules"),
                                     *case.defines, str(case.source)), env=env, timeout=1800)
    document = _document(out)
    runs = document.get("runs", "?")
    if document.get("verdict") == "violations":
        found = f"run {runs}"
        met = "MET" if isinstance(runs, int) and runs <= PCT_RUNS else "NOT MET"
    else:
        found = f"not in {runs} runs ({document.get('verdict', 'exit ' + str(result.returncode))})"
        met = "NOT MET"
    return [found, fmt_s(result.wall), met]


def prove(case: Case, work: Path, env: dict[str, str], max_schedules: int, jobs: int,
          build: float) -> list[str]:
    out = work / "explore.json"
    defines = case.defines if case.robust_only else (*case.defines, "-DROBUST")
    result = run_measured(pyrsan_cmd("run", "--explore", "--max-schedules", str(max_schedules), "--jobs", str(jobs),
                                     "--timeout", "60", "--json", str(out), "--schedule-dir", str(work / "schedules"),
                                     *defines, str(case.source)), env=env, timeout=7200)
    document = _document(out)
    exploration = document.get("exploration") or {}
    verdict = document.get("verdict", f"exit {result.returncode}")
    if exploration.get("complete"):
        covered = f"complete, {exploration.get('schedules')} schedules"
    else:
        covered = f"bound {exploration.get('bound')}, {exploration.get('schedules')} schedules"
    explore_time = max(0.0, result.wall - build)
    if case.proof_target is None:
        met = "-"
    else:
        met = "MET" if verdict == "robust" and explore_time < case.proof_target else "NOT MET"
    return [verdict, covered, fmt_s(result.wall), fmt_s(explore_time), met]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1, help="pct seed of the first run (run k: seed+k-1)")
    parser.add_argument("--max-schedules", type=int, default=5000, help="bound of each exploration")
    parser.add_argument("--jobs", type=int, default=2, help="--explore --jobs")
    parser.add_argument("--only", metavar="TEXT", help="only the cases whose name contains TEXT")
    parser.add_argument("--quick", action="store_true", help="two cases, 200 schedules (checks the harness)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    check_pyrsan()
    env = pyrsan_env()
    cases = [c for c in CASES if not args.only or args.only.lower() in c.name.lower()]
    max_schedules = args.max_schedules
    if args.quick:
        cases, max_schedules = [CASES[0], CASES[6]], 200
    print(f"# detection.py: pct seed {args.seed}, --max-schedules {max_schedules}, --jobs {args.jobs}; "
          f"{machine_load()}")
    rows = []
    for index, case in enumerate(cases):
        work = workdir(args.keep, f"pyrsan-detect-{index}-")
        build = build_time(case, work, env, robust=not case.robust_only)
        detection = ["-", "-", "-"] if case.robust_only else detect(case, work, env, args.seed)
        proof = prove(case, work, env, max_schedules, args.jobs, build)
        rows.append([case.name, *detection, *proof, fmt_s(build)])
        print(f"  done: {case.name}", flush=True)
    print_table(["program", "pct: first report", "wall", f"<= {PCT_RUNS} runs",
                 "robust version: verdict", "explored", "wall", "explore only", "proof target", "build"], rows)
    return 0


if __name__ == "__main__":
    main_guard(main)
