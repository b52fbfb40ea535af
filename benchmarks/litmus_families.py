"""Generated litmus families through the real CLI, checked against the reference model.

    python benchmarks/litmus_families.py [--family SB,MP] [--flavour rlx,sc] [--variant plain]
        [--spawn pthread,cxx] [--all-spawns] [--seeds 3] [--limit N] [--jobs 1] [--json out.json]
        [--keep DIR] [--python PY] [--shuffle SEED] [--rows ROWS.jsonl] [--only NAME,...]
    python benchmarks/litmus_families.py --summary ROWS.jsonl

Programs come from benchmarks/litmus_gen.py (families x flavours x RMW variants x spawn
styles). For each program the expected verdict is the reference model's
(testsuite/reference/rc20.py, sc_accesses=fenced); a program whose model search exceeds
--graph-limit graphs has no verdict and is only checked for crashes. Then:

  default  `pyrsan run --seed S --json` for S = 1..--seeds: a non-robust program must be
           reported (exit 66, the access on a read line of the program, the stale write on a
           write line or the initial value) by every seed (the detection rate is printed);
           a robust one must give exit 0, verdict clean/robust, no report.
  explore  `pyrsan run --explore --json`: a robust program must be proved (verdict robust,
           exploration complete); a non-robust one reported. Its CPU time (user+sys of the
           process tree, getrusage) and schedules are recorded: target < 1 s CPU.

Prints one line per failing program and a summary table per family; exit status 1 when a
verdict was wrong, a report named a foreign line, or pyrsan crashed (exit 2/3, traceback).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import litmus_gen as gen  # noqa: E402


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _wait(cmd: list, tmp: str, timeout: float) -> tuple[int, str, float, float]:
    """Runs cmd in its own session -> (exit status or -1 when killed at `timeout`, stderr, wall s,
    CPU s of the process tree: os.wait4's rusage of the command, which waits for its own
    children, so that concurrent jobs do not mix their figures)."""
    err_path = Path(tmp) / "stderr"
    env = dict(os.environ)
    env.pop("PYRSAN_OPTIONS", None)
    t = time.time()
    with open(err_path, "w") as err, open(os.devnull, "w") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=err, env=env, cwd=tmp, start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        _pid, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
    code = os.waitstatus_to_exitcode(status)
    return (-1 if code == -signal.SIGKILL else code), err_path.read_text(errors="replace"), \
        time.time() - t, usage.ru_utime + usage.ru_stime


def build_cli(python: str, source: Path, out: Path, timeout: float = 300) -> tuple[int, str, float]:
    """`python -m pyrsan build SOURCE -o OUT` -> (exit status, stderr, CPU s)."""
    with tempfile.TemporaryDirectory(prefix="litmus-fam-") as tmp:
        code, err, _wall, cpu = _wait([python, "-m", "pyrsan", "build", str(source), "-o", str(out)], tmp, timeout)
        return code, err, cpu


def run_cli(python: str, args: list, timeout: float = 300) -> tuple[int, dict | None, str, float, float]:
    """`python -m pyrsan run ARGS... --json OUT PROGRAM` (PROGRAM: the last of ARGS, a source or
    an instrumented binary) -> (exit status, --json document, stderr, wall s, CPU s)."""
    with tempfile.TemporaryDirectory(prefix="litmus-fam-") as tmp:
        out = Path(tmp) / "r.json"
        cmd = [python, "-m", "pyrsan", "run", *map(str, args[:-1]), "--json", str(out), str(args[-1])]
        code, err, wall, cpu = _wait(cmd, tmp, timeout)
        doc = json.loads(out.read_text()) if out.exists() else None
        return code, doc, err, wall, cpu


def check_reports(case: gen.Case, path: Path, doc: dict) -> list[str]:
    """Each report names an access line of the program of its type and a write line (or the
    initial value) as the stale write."""
    problems = []
    for rep in doc.get("reports", []):
        if rep.get("kind") != "robustness":
            problems.append(f"a {rep.get('kind')} report")
            continue
        acc = rep.get("access", {})
        # a read-type report names a read, a write-type one (RSAN's write check) a write
        lines = case.read_lines if rep.get("type") == "read" else case.write_lines
        if Path(acc.get("file") or "?").name != path.name or acc.get("line") not in lines:
            problems.append(f"{rep.get('type')} access at {Path(acc.get('file') or '?').name}:"
                            f"{acc.get('line')} (lines {sorted(lines)})")
        prev = rep.get("previous", {})
        if prev.get("initial") or "line" not in prev:
            continue
        if Path(prev.get("file") or "?").name != path.name or prev.get("line") not in case.write_lines:
            problems.append(f"stale write at {Path(prev.get('file') or '?').name}:{prev.get('line')} "
                            f"(write lines {sorted(case.write_lines)})")
    return problems


def _crash(code: int, stderr: str) -> str | None:
    if code == -1:
        return "pyrsan timed out"
    if "Traceback" in stderr:
        return "traceback: " + stderr.strip().splitlines()[-1][:200]
    if code in (2, 3) or code not in (0, 66):
        return f"exit {code}: " + (stderr.strip().splitlines() or ["?"])[-1][:200]
    return None


def check_case(case: gen.Case, expected: bool | None, python: str, seeds: int, where: Path,
               extra: tuple = ()) -> dict:
    path = where / (case.name + case.suffix)
    path.write_text(case.source)
    binary = where / case.name
    row = {"name": case.name, "family": case.family, "flavour": case.flavour,
           "variant": case.variant, "spawn": case.spawn, "expected": expected, "problems": []}
    code, err, row["build_cpu"] = build_cli(python, path, binary)
    if code != 0:
        row["problems"].append(f"build: exit {code}: " + (err.strip().splitlines() or ["?"])[-1][:200])
        return row
    detected = 0
    verdicts = []
    for seed in range(1, seeds + 1):
        code, doc, err, _wall, _cpu = run_cli(python, [*extra, "--seed", seed, binary])
        crash = _crash(code, err)
        if crash or doc is None:
            row["problems"].append(f"default seed {seed}: {crash or 'no json'}")
            continue
        verdicts.append(doc.get("verdict"))
        row["problems"] += [f"default seed {seed}: {p}" for p in check_reports(case, path, doc)]
        reported = code == 66 and doc.get("verdict") == "violations"
        detected += reported
        if expected is True and (reported or code != 0 or doc.get("verdict") not in ("clean", "robust")):
            row["problems"].append(f"default seed {seed}: false report (exit {code}, "
                                   f"verdict {doc.get('verdict')})")
        if expected is False and not reported:
            row["problems"].append(f"default seed {seed}: missed (exit {code}, verdict {doc.get('verdict')})")
        if seed == 1:
            row["default_runs"] = doc.get("runs")
    row["detected"], row["seeds"], row["default_verdicts"] = detected, seeds, verdicts
    code, doc, err, wall, cpu = run_cli(python, [*extra, "--explore", binary])
    crash = _crash(code, err)
    row["explore_cpu"], row["explore_wall"] = cpu, wall
    if crash or doc is None:
        row["problems"].append(f"explore: {crash or 'no json'}")
        return row
    exp = doc.get("exploration") or {}
    row["explore_verdict"], row["schedules"] = doc.get("verdict"), exp.get("schedules")
    row["complete"] = exp.get("complete")
    row["problems"] += [f"explore: {p}" for p in check_reports(case, path, doc)]
    if expected is True and not (doc.get("verdict") == "robust" and exp.get("complete") and code == 0):
        row["problems"].append(f"explore: not proved (exit {code}, verdict {doc.get('verdict')}, "
                               f"complete {exp.get('complete')}, bound {exp.get('bound')})")
    if expected is False and not (code == 66 and doc.get("verdict") == "violations"):
        row["problems"].append(f"explore: missed (exit {code}, verdict {doc.get('verdict')})")
    if expected is None and doc.get("verdict") == "robust" and not exp.get("complete"):
        row["problems"].append("explore: verdict robust without a complete exploration")
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", default="", help="comma-separated families (default: all)")
    ap.add_argument("--flavour", default="", help="comma-separated flavours (default: all)")
    ap.add_argument("--variant", default="", help="comma-separated variants (default: all)")
    ap.add_argument("--spawn", default="", help="comma-separated spawn styles (default: all, rotating)")
    ap.add_argument("--all-spawns", action="store_true", help="every program in every spawn style")
    ap.add_argument("--mixed", type=int, default=2, help="random per-thread flavour mixes per family")
    ap.add_argument("--seeds", type=int, default=3, help="default runs per program (seeds 1..N)")
    ap.add_argument("--graph-limit", type=int, default=200_000, help="reference model graph limit")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--sc-accesses", choices=("fenced", "ra"), default="fenced",
                    help="pyrsan run --sc-accesses, and the model's mode (default fenced)")
    ap.add_argument("--python", default=sys.executable, help="the python whose pyrsan runs")
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--keep", help="write the generated sources to this directory")
    ap.add_argument("--list", action="store_true", help="only list the programs and verdicts")
    ap.add_argument("--shuffle", type=int, default=0,
                    help="run the programs in a random order of this seed (0: generation order)")
    ap.add_argument("--only", default="", help="comma-separated program names (a rerun of some)")
    ap.add_argument("--summary", metavar="ROWS", help="only print the table of a --rows file")
    ap.add_argument("--rows", help="append each row to this JSON-lines file as it completes")
    a = ap.parse_args(argv)

    if a.summary:
        summary([json.loads(line) for line in Path(a.summary).read_text().splitlines() if line.strip()])
        return 0

    def pick(text):
        return tuple(s for s in text.split(",") if s) or None

    cases = gen.generate(pick(a.family), pick(a.flavour), pick(a.variant) or gen.VARIANTS,
                         pick(a.spawn) or gen.SPAWNS, mixed=a.mixed, all_spawns=a.all_spawns)
    if a.only:
        cases = [c for c in cases if c.name in set(a.only.split(","))]
    if a.shuffle:
        random.Random(a.shuffle).shuffle(cases)
    print(f"load average {os.getloadavg()[0]:.1f}; {len(cases)} programs", flush=True)
    t0 = time.time()
    verdict_of: dict[str, bool | None] = {}
    expected = []
    for case in cases:
        key = repr(case.threads)
        if key not in verdict_of:
            verdict_of[key] = gen.reference_verdict(case, a.graph_limit, a.sc_accesses)
        expected.append(verdict_of[key])
    print(f"reference model: {time.time() - t0:.1f}s, {sum(v is False for v in expected)} not robust, "
          f"{sum(v is True for v in expected)} robust, {sum(v is None for v in expected)} too large",
          flush=True)
    if a.list:
        for case, exp in zip(cases, expected):
            print(f"{case.name:50} {exp}")
        return 0
    where = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="litmus-fam-src-"))
    where.mkdir(parents=True, exist_ok=True)
    cpu0 = _cpu_children()
    with ThreadPoolExecutor(max(1, a.jobs)) as pool:
        extra = ("--sc-accesses", a.sc_accesses) if a.sc_accesses != "fenced" else ()
        futures = [pool.submit(check_case, c, e, a.python, a.seeds, where, extra)
                   for c, e in zip(cases, expected)]
        rows = []
        for f in futures:
            row = f.result()
            rows.append(row)
            if a.rows:
                with open(a.rows, "a") as f_rows:
                    f_rows.write(json.dumps(row) + "\n")
            print(f"{len(rows)}/{len(cases)} {row['name']} expected={row['expected']} "
                  f"detected={row['detected']}/{row['seeds']} explore={row.get('explore_verdict')} "
                  f"cpu={row.get('explore_cpu', float('nan')):.2f} sch={row.get('schedules')}", flush=True)
            if row["problems"]:
                print(f"FAIL {row['name']} (expected robust={row['expected']}): " + "; ".join(row["problems"]),
                      flush=True)
    summary(rows)
    print(f"total {time.time() - t0:.0f}s wall, load average {os.getloadavg()[0]:.1f}, "
          f"CPU of the CLI runs {_cpu_children() - cpu0:.0f}s")
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 1 if any(r["problems"] for r in rows) else 0


def summary(rows: list[dict]) -> None:
    fam: dict[str, list] = defaultdict(list)
    for r in rows:
        fam[r["family"]].append(r)
    print(f"\n{'family':10} {'progs':>5} {'robust':>6} {'nonrob':>6} {'unk':>4} {'detect':>8} "
          f"{'proved':>7} {'max cpu':>8} {'>1s':>4} {'max sch':>7} {'fail':>4} {'build':>6}")
    tot = defaultdict(float)
    for name, rs in fam.items():
        rob = [r for r in rs if r["expected"] is True]
        non = [r for r in rs if r["expected"] is False]
        unk = [r for r in rs if r["expected"] is None]
        det = sum(r["detected"] for r in non)
        tries = sum(r["seeds"] for r in non)
        proved = sum(r.get("explore_verdict") == "robust" and bool(r.get("complete")) for r in rob)
        cpus = [r["explore_cpu"] for r in rob if r.get("explore_cpu") == r.get("explore_cpu")]
        sch = [r.get("schedules") or 0 for r in rob]
        over = sum(c >= 1.0 for c in cpus)
        fails = sum(bool(r["problems"]) for r in rs)
        builds = [r["build_cpu"] for r in rs if "build_cpu" in r]
        print(f"{name:10} {len(rs):5} {len(rob):6} {len(non):6} {len(unk):4} {det:>3}/{tries:<4} "
              f"{proved:>3}/{len(rob):<3} {max(cpus, default=0):8.2f} {over:4} {max(sch, default=0):7} {fails:4} "
              f"{max(builds, default=0):6.2f}")
        for k, v in (("progs", len(rs)), ("rob", len(rob)), ("non", len(non)), ("unk", len(unk)),
                     ("det", det), ("tries", tries), ("proved", proved), ("over", over), ("fails", fails)):
            tot[k] += v
        tot["maxcpu"] = max(tot["maxcpu"], max(cpus, default=0))
        tot["maxsch"] = max(tot["maxsch"], max(sch, default=0))
    print(f"{'total':10} {int(tot['progs']):5} {int(tot['rob']):6} {int(tot['non']):6} {int(tot['unk']):4} "
          f"{int(tot['det']):>3}/{int(tot['tries']):<4} {int(tot['proved']):>3}/{int(tot['rob']):<3} "
          f"{tot['maxcpu']:8.2f} {int(tot['over']):4} {int(tot['maxsch']):7} {int(tot['fails']):4}")
    print("max cpu, >1s: CPU (user+sys) of `pyrsan run --explore` on the built binary, robust programs; "
          "build: the most CPU one `pyrsan build` took")


if __name__ == "__main__":
    sys.exit(main())
