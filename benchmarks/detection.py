"""Detection-power benchmark of schedule control (issues 5 and 12).

`--defaults` (issue 12): for every program of the litmus corpus (testsuite/litmus, testsuite/cpp),
the probability that ONE `pyrsan run FILE` with no options reports it (non-robust programs) or
stays clean (robust ones), over --invocations invocations with fresh seeds, and the median wall
time of an invocation (the program's build, done once, excluded and shown apart); the same for
the old default (`--sched os`, one run) as "before"; and the share of process runs of the
instrumented binary (`pyrsan build`, no PYRSAN_OPTIONS) that report (--binary-runs each; "before":
PYRSAN_OPTIONS=sched=os). `--busy` keeps a busy-loop process running on the side (the other core
busy). An invocation is made through pyrsan's own runner with the CLI's defaults (the same code
path as the command after its build); `--cli K` adds K real `pyrsan run FILE` commands per
program as a check of that. Target: >= 99% per non-robust program; binaries >= 9 of 10.

    python benchmarks/detection.py --defaults [--invocations 100] [--binary-runs 20] [--busy] [--only TEXT]

`--binaries` (issue 12, item 2): for every program of the litmus corpus and of
benchmarks/programs/sched (its release/acquire versions; `--with-robust` adds the robust
litmus programs and the -DROBUST versions, where "right" means no report), the share of process
runs of the instrumented binary that report with no PYRSAN_OPTIONS but the column's: `sched=os`
(the OS scheduler), `samples=0` (one PCT sample per process run, the default before the scout
samples) and the default (scout samples), interleaved, with the median wall time of a process
run. Target: >= 9 of 10 for every non-robust program.

    python benchmarks/detection.py --binaries [--binary-runs 20] [--with-robust] [--busy] [--only TEXT]

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
import os
import secrets
import statistics
import subprocess
import sys
import time
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
    Case("bakery, 2 threads", SCHED_DIR / "bakery.c", ("-DNTHREADS=2",)),
    Case("bakery, 3 threads", SCHED_DIR / "bakery.c", ("-DNTHREADS=3",), proof_target=60.0),
    Case("Dekker-Tsay tree, 3 threads", SCHED_DIR / "dekker_tree.c", proof_target=60.0),
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
    schedules = exploration.get("schedules") or 0
    blocked = exploration.get("sleep_blocked") or 0
    # every run that was not cut as sleep-blocked ran a class of its own
    per_class = f"{schedules / (schedules - blocked):.2f} sch/class" if schedules > blocked else "-"
    # issue 15 item 2: runs cut as sleep-blocked, at most 5% (none with wakeup trees, --jobs 1)
    cut = f"{blocked} sleep-blocked ({100 * blocked / schedules:.1f}%)" if schedules else "-"
    if exploration.get("complete"):
        covered = f"complete, {schedules} schedules, {cut}, {per_class}"
    else:
        covered = f"bound {exploration.get('bound')}, {schedules} schedules, {cut}, {per_class}, " \
                  f"{exploration.get('pending', '?')} queued"
    explore_time = max(0.0, result.wall - build)
    if schedules:   # issue 15: the cost of one schedule (fork server: no process start per schedule)
        covered += f", {explore_time / schedules * 1000:.1f} ms/schedule"
    if case.proof_target is None:
        met = "-"
    else:
        met = "MET" if verdict == "robust" and explore_time < case.proof_target else "NOT MET"
    return [verdict, covered, fmt_s(result.wall), fmt_s(explore_time), met]


# ---------------------------------------------------------------------------- --defaults (issue 12)

CORPUS_DIRS = (REPO_ROOT / "testsuite" / "litmus", REPO_ROOT / "testsuite" / "cpp")


@dataclass(frozen=True)
class LitmusCase:
    path: Path
    robust: bool
    options: tuple[str, ...]


def litmus_corpus() -> list[LitmusCase]:
    sys.path.insert(0, str(REPO_ROOT / "testsuite" / "litmus"))
    from litmus_header import parse_program
    cases = []
    for directory in CORPUS_DIRS:
        for path in sorted([*directory.glob("*.c"), *directory.glob("*.cpp")]):
            program = parse_program(path)
            cases.append(LitmusCase(path, program.robust, program.options))
    return cases


def _runner():
    try:
        from pyrsan import runner
    except ImportError:
        sys.path.insert(0, str(REPO_ROOT))
        from pyrsan import runner
    return runner


def default_invocation(exe: Path, case: LitmusCase, work: Path, before: bool) -> tuple[bool, float, int]:
    """What `pyrsan run FILE` does after its build, with no options (before: the old default,
    `--sched os`, one run): (reported, wall seconds, runs made)."""
    runner = _runner()
    sc = case.options[case.options.index("--sc-accesses") + 1] if "--sc-accesses" in case.options else None
    if before:
        schedule, runs, budget = runner.ScheduleOptions(sched="os"), 1, None
    else:
        schedule = runner.ScheduleOptions(sched=runner.DEFAULT_SCHED, seed=secrets.randbits(32),
                                          schedule_dir=str(work / "schedules"))
        runs, budget = runner.DEFAULT_SAMPLED_RUNS, runner.DEFAULT_TIME_BUDGET
    options = runner.RunOptions(runs=runs, time_budget=budget, sc_accesses=sc, work_dir=str(work / "runs"),
                                quiet=True, schedule=schedule)
    start = time.monotonic()
    result = runner.run_program(str(exe), (), options)
    wall = time.monotonic() - start
    subprocess.run(["rm", "-rf", str(work / "runs")], check=False)
    return bool(result.reports), wall, len(result.runs)


def binary_reports(exe: Path, case: LitmusCase, before: bool) -> bool:
    """One process run of the instrumented binary with no options (before: sched=os)."""
    options = ["print_reports=0"]
    if "--sc-accesses" in case.options:
        options.append("sc_accesses=" + case.options[case.options.index("--sc-accesses") + 1])
    if before:
        options.append("sched=os")
    env = dict(os.environ, PYRSAN_OPTIONS=":".join(options))
    proc = subprocess.run([str(exe)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return proc.returncode == 66


def cli_reports(case: LitmusCase, work: Path, env: dict[str, str]) -> bool:
    out = work / "cli.json"
    run_measured(pyrsan_cmd("run", "--json", str(out), "--schedule-dir", str(work / "schedules"),
                            *case.options, str(case.path)), env=env, timeout=600)
    return _document(out).get("verdict") == "violations"


def defaults_section(args: argparse.Namespace) -> int:
    env = pyrsan_env()
    cases = [c for c in litmus_corpus() if not args.only or args.only.lower() in c.path.name.lower()]
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    try:
        print(f"# detection.py --defaults: {args.invocations} invocations per non-robust program, "
              f"{args.robust_invocations} per robust one, {args.binary_runs} binary runs; "
              f"busy loop on the side: {'yes' if busy else 'no'}; {machine_load()}", flush=True)
        rows = []
        worst = 1.0
        worst_binary = 1.0
        for index, case in enumerate(cases):
            work = workdir(args.keep, f"pyrsan-defaults-{index}-")
            exe = work / case.path.stem
            build = run_checked(pyrsan_cmd("build", "-o", str(exe), str(case.path)), f"pyrsan build {case.path.name}",
                                env=env, timeout=600).wall
            n = args.robust_invocations if case.robust else args.invocations
            cells = [case.path.name, "robust" if case.robust else "not robust"]
            for before in (True, False):
                outcomes = [default_invocation(exe, case, work, before) for _ in range(n)]
                hits = sum(reported for reported, _, _ in outcomes)
                wall = statistics.median(w for _, w, _ in outcomes)
                good = n - hits if case.robust else hits
                if not before and not case.robust:
                    worst = min(worst, good / n)
                cells += [f"{good}/{n}", fmt_s(wall)]
                if not before:
                    cells.append(f"{statistics.mean(r for _, _, r in outcomes):.1f}")
            for before in (True, False):
                hits = sum(binary_reports(exe, case, before) for _ in range(args.binary_runs))
                good = args.binary_runs - hits if case.robust else hits
                if not before and not case.robust:
                    worst_binary = min(worst_binary, good / args.binary_runs)
                cells.append(f"{good}/{args.binary_runs}")
            if args.cli:
                hits = sum(cli_reports(case, work, env) for _ in range(args.cli))
                cells.append(f"{args.cli - hits if case.robust else hits}/{args.cli}")
            cells.append(fmt_s(build))
            rows.append(cells)
            print("  " + "  ".join(cells), flush=True)
        headers = ["program", "expected", "before: right", "wall", "default: right", "wall", "runs (mean)",
                   "binary before", "binary default", *(["cli check"] if args.cli else []), "build"]
        print_table(headers, rows)
        print(f"least detection probability of a default invocation: {worst:.2f} (target 0.99: "
              f"{'MET' if worst >= 0.99 else 'NOT MET'}); of a default binary run: {worst_binary:.2f}")
        print(f"end: {machine_load()}")
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    return 0


# ---------------------------------------------------------------------------- --binaries (issue 12, item 2)

@dataclass(frozen=True)
class BinaryCase:
    name: str
    source: Path
    robust: bool
    defines: tuple[str, ...] = ()
    options: tuple[str, ...] = ()     # PYRSAN_OPTIONS the program needs (sc_accesses=...)


def binary_corpus() -> list[BinaryCase]:
    """The litmus corpus (testsuite/litmus, testsuite/cpp) and benchmarks/programs/sched (its
    release/acquire versions are not robust, -DROBUST ones are)."""
    cases = []
    for case in litmus_corpus():
        options = ()
        if "--sc-accesses" in case.options:
            options = ("sc_accesses=" + case.options[case.options.index("--sc-accesses") + 1],)
        cases.append(BinaryCase(case.path.name, case.path, case.robust, options=options))
    for c in CASES:
        if c.robust_only:
            continue
        name = c.source.name + "".join(" " + d.removeprefix("-D") for d in c.defines)
        cases.append(BinaryCase(name, c.source, False, c.defines))
        cases.append(BinaryCase(name + " ROBUST", c.source, True, (*c.defines, "-DROBUST")))
    return cases


#: the columns of --binaries: PYRSAN_OPTIONS added to every process run
BINARY_MODES = (("os", ("sched=os",)), ("1 sample", ("samples=0",)), ("default", ()))


def binary_run(exe: Path, case: BinaryCase, extra: tuple[str, ...]) -> tuple[bool, float]:
    """One process run with no options but `extra`: (reported, wall seconds)."""
    env = dict(os.environ, PYRSAN_OPTIONS=":".join(("print_reports=0", *case.options, *extra)))
    start = time.monotonic()
    proc = subprocess.run([str(exe)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return proc.returncode == 66, time.monotonic() - start


def binaries_section(args: argparse.Namespace) -> int:
    env = pyrsan_env()
    cases = [c for c in binary_corpus() if not args.only or args.only.lower() in c.name.lower()]
    if not args.with_robust:
        cases = [c for c in cases if not c.robust]
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    try:
        print(f"# detection.py --binaries: {args.binary_runs} process runs per program and column "
              f"(interleaved), no PYRSAN_OPTIONS but the column's; busy loop on the side: "
              f"{'yes' if busy else 'no'}; {machine_load()}", flush=True)
        rows = []
        worst = {name: 1.0 for name, _ in BINARY_MODES}
        for index, case in enumerate(cases):
            work = workdir(args.keep, f"pyrsan-binaries-{index}-")
            exe = work / "prog"
            run_checked(pyrsan_cmd("build", "-o", str(exe), *case.defines, str(case.source)),
                        f"pyrsan build {case.name}", env=env, timeout=600)
            hits = {name: 0 for name, _ in BINARY_MODES}
            walls: dict[str, list[float]] = {name: [] for name, _ in BINARY_MODES}
            for _ in range(args.binary_runs):
                for name, extra in BINARY_MODES:
                    reported, wall = binary_run(exe, case, extra)
                    hits[name] += reported
                    walls[name].append(wall)
            cells = [case.name, "robust" if case.robust else "not robust"]
            for name, _ in BINARY_MODES:
                good = args.binary_runs - hits[name] if case.robust else hits[name]
                if not case.robust:
                    worst[name] = min(worst[name], good / args.binary_runs)
                cells += [f"{good}/{args.binary_runs}", fmt_s(statistics.median(walls[name]))]
            rows.append(cells)
            print("  " + "  ".join(cells), flush=True)
        headers = ["program", "expected"]
        for name, _ in BINARY_MODES:
            headers += [f"{name}: right", "wall"]
        print_table(headers, rows)
        print("least share of process runs that report, per non-robust program: " +
              ", ".join(f"{name} {value:.2f}" for name, value in worst.items()) +
              f" (target 0.90 for default: {'MET' if worst['default'] >= 0.9 else 'NOT MET'})")
        print(f"end: {machine_load()}")
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--defaults", action="store_true", help="issue 12: detection by `pyrsan run FILE` "
                        "with no options, and by instrumented binaries, over the litmus corpus")
    parser.add_argument("--invocations", type=int, default=100, help="--defaults: per non-robust program")
    parser.add_argument("--robust-invocations", type=int, default=10, help="--defaults: per robust program")
    parser.add_argument("--binary-runs", type=int, default=20, help="--defaults: process runs per binary")
    parser.add_argument("--binaries", action="store_true", help="issue 12 item 2: the share of process runs of "
                        "each instrumented binary (no options) that report, against sched=os and one sample "
                        "(samples=0), interleaved; the litmus corpus and benchmarks/programs/sched")
    parser.add_argument("--with-robust", action="store_true", help="--binaries: robust programs too (right = clean)")
    parser.add_argument("--busy", action="store_true", help="--defaults, --binaries: a busy loop on the side")
    parser.add_argument("--cli", type=int, default=0, metavar="K",
                        help="--defaults: also K real `pyrsan run FILE` commands per program")
    parser.add_argument("--seed", type=int, default=1, help="pct seed of the first run (run k: seed+k-1)")
    parser.add_argument("--max-schedules", type=int, default=5000, help="bound of each exploration")
    parser.add_argument("--jobs", type=int, default=2, help="--explore --jobs (1: optimal DPOR with wakeup "
                        "trees; more: source-DPOR, docs/design/exploration.md §21)")
    parser.add_argument("--only", metavar="TEXT", help="only the cases whose name contains TEXT")
    parser.add_argument("--quick", action="store_true", help="two cases, 200 schedules (checks the harness)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    check_pyrsan()
    if args.defaults:
        return defaults_section(args)
    if args.binaries:
        return binaries_section(args)
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
