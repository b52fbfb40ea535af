"""Build and run each driver of drivers/ natively, under ThreadSanitizer and under pyrsan; print
builds?, runs?, the reports (pyrsan and TSan) and the time of one run against TSan, measured
interleaved in the same run of this script.

    python benchmarks/realworld/run.py [--reps N] [--only NAME] [--no-explore] [--details]

For each driver (and, for Concurrency Kit, also in its compiler-builtins mode,
-DCK_USE_CC_BUILTINS=1):
- `pyrsan build` then one standalone run of the instrumented program (the time column: median
  of --reps runs of each tool, interleaved) and the default command `pyrsan run PROGRAM`
  (seeded runs under sched=auto; its runs and reports);
- `pyrsan run --explore` on the same driver built with -DSMALL (a few operations per thread),
  bounded by --max-schedules;
- TSan: clang -fsanitize=thread, its warnings counted.
A driver says which libraries it links with a `link: -lNAME` in its first comment. A driver
whose library header is missing (install.sh) is skipped with one line.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import DRIVERS, link_flags, missing_header  # noqa: E402
from _bench import (COMPILE_FLAGS, check_pyrsan, find_clang, machine_load, main_guard, median,  # noqa: E402
                    print_table, pyrsan_cmd, pyrsan_env, ratio, run_measured, workdir)

#: Exit statuses of the instrumented program that mean "ran to the end" (66: it reported).
FINISHED = (0, 66)


def variants(src: Path) -> list[tuple[str, list[str]]]:
    """(name, extra compile flags) per configuration of a driver."""
    if "#include <ck_" in src.read_text():
        return [(src.stem, []), (src.stem + "+builtins", ["-DCK_USE_CC_BUILTINS=1"])]
    return [(src.stem, [])]


def summarise_reports(doc: dict) -> list[str]:
    """One line per distinct report of a `pyrsan run --json` document."""
    lines = []
    for rep in doc.get("reports", []):
        acc, prev = rep.get("access") or {}, rep.get("previous") or {}
        where = lambda a: f"{Path(str(a.get('file'))).name}:{a.get('line')} {a.get('function')}"  # noqa: E731
        if rep.get("kind") == "race":
            lines.append(f"race: {acc.get('type')} {where(acc)} / {prev.get('type')} {where(prev)}")
        else:
            lines.append(f"{rep.get('kind')}: {rep.get('type')} {where(acc) if acc else rep.get('key')}"
                         f" ({(rep.get('location') or {}).get('name', '?')})")
    return sorted(set(lines))


def tsan_warnings(stderr: str) -> list[str]:
    return sorted(set(re.findall(r"SUMMARY: ThreadSanitizer: (.*)", stderr)))


def runtime_error(stderr: str) -> str | None:
    """A line saying the pyrsan runtime itself failed (fatal error, internal error)."""
    for line in stderr.splitlines():
        if re.search(r"pyrsan(: |\[)\S*.*(fatal|internal error|runtime error)", line, re.I):
            return line.strip()
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3, help="timed runs of each tool (median)")
    ap.add_argument("--only", help="only drivers whose name contains this")
    ap.add_argument("--no-explore", action="store_true")
    ap.add_argument("--max-schedules", type=int, default=500)
    ap.add_argument("--details", action="store_true", help="print each distinct report")
    ap.add_argument("--json", help="write the rows and reports to this file")
    args = ap.parse_args()
    check_pyrsan()
    clang = find_clang()
    tmp = workdir(False, "pyrsan-realworld-")
    env = pyrsan_env()
    print(f"load average at start: {machine_load()}")
    rows, details, doc = [], [], []
    for src in sorted(DRIVERS.glob("*.c*")):
        if args.only and args.only not in src.name:
            continue
        missing = missing_header(src)
        if missing:
            rows.append([src.stem, "skipped", f"<{missing}> missing (install.sh)", "", "", "", "", ""])
            continue
        cxx = src.suffix != ".c"
        libs = link_flags(src)
        for name, extra in variants(src):
            comp = clang.replace("clang", "clang++") if cxx else clang
            native, tsan_exe, rsan_exe = (tmp / f"{name}.{k}" for k in ("native", "tsan", "rsan"))
            nb = run_measured([comp, *COMPILE_FLAGS, *extra, str(src), "-pthread", *libs, "-o", str(native)],
                              timeout=300)
            if nb.returncode != 0:  # e.g. ck_fifo_mpmc: CK's builtins mode has no double-width CAS
                rows.append([name, "n/a: the native build fails too (not in the library in this mode)",
                             "", "", "", "", "", ""])
                continue
            run_measured([comp, *COMPILE_FLAGS, *extra, "-fsanitize=thread", str(src), "-pthread", *libs,
                         "-o", str(tsan_exe)], timeout=300)
            pb = run_measured(pyrsan_cmd("build", "-o", str(rsan_exe), *extra, str(src), *libs), env=env, timeout=600)
            built = "yes" if pb.returncode == 0 else f"no: {(pb.stderr.strip().splitlines() or ['?'])[0][:60]}"
            times: dict[str, list[float]] = {"native": [], "tsan": [], "rsan": []}
            tsan_out, rsan_runs = "", []
            for _ in range(args.reps):  # interleaved
                for key, exe in (("native", native), ("tsan", tsan_exe), ("rsan", rsan_exe)):
                    if not exe.exists():
                        continue
                    r = run_measured([str(exe)], env=env, timeout=300)
                    times[key].append(r.wall)
                    if key == "tsan":
                        tsan_out += r.stderr
                    elif key == "rsan":
                        rsan_runs.append(r)
            ran = "n/a"
            if rsan_runs:
                bad = [r for r in rsan_runs if r.timed_out or r.returncode not in FINISHED
                       or not r.stdout.startswith("ok") or runtime_error(r.stderr)]
                why = runtime_error(bad[0].stderr) if bad else ""
                ran = "yes" if not bad else f"no: exit {bad[0].returncode}" + (f" ({why})" if why else "")
            reports: list[str] = []
            verdict, runs, explore = "n/a", "", ""
            if pb.returncode == 0:
                jpath = tmp / f"{name}.json"
                d = run_measured(pyrsan_cmd("run", "--json", str(jpath), str(rsan_exe)), env=env, timeout=900, cwd=tmp)
                if jpath.exists():
                    rdoc = json.loads(jpath.read_text())
                    verdict, runs = rdoc["verdict"], str(rdoc["runs"])
                    reports = summarise_reports(rdoc)
                    if rdoc.get("crashes") or rdoc.get("timeouts") or rdoc.get("deadlocks"):
                        verdict += " + crash/hang"
                else:
                    verdict = f"error (exit {d.returncode})"
                if not args.no_explore:
                    epath = tmp / f"{name}.explore.json"
                    e = run_measured(pyrsan_cmd("run", "--explore", "--max-schedules", str(args.max_schedules),
                                                "--timeout", "30", "--json", str(epath), "-DSMALL", *extra,
                                                str(src), *libs), env=env, timeout=1800, cwd=tmp)
                    if epath.exists():
                        edoc = json.loads(epath.read_text())
                        explore = f"{edoc['verdict']}, {edoc['runs']} sched"
                        reports += [f"explore {line}" for line in summarise_reports(edoc)]
                    else:
                        explore = f"error (exit {e.returncode})"
            tw = tsan_warnings(tsan_out)
            rows.append([name, built, ran, f"{verdict} ({runs} runs), {len(reports)} distinct", explore,
                         f"{len(tw)} distinct" if tw else "none",
                         ratio(median(times["rsan"]), median(times["tsan"])),
                         ratio(median(times["tsan"]), median(times["native"]))])
            details.append((name, reports, tw))
            doc.append({"driver": name, "builds": built, "runs": ran, "verdict": verdict, "explore": explore,
                        "reports": reports, "tsan": tw, "time_rsan": median(times["rsan"]),
                        "time_tsan": median(times["tsan"]), "time_native": median(times["native"])})
    print_table(["driver", "builds", "runs", "pyrsan run (default)", "pyrsan --explore (SMALL)", "TSan",
                 "1 run: pyrsan/TSan", "TSan/native"], rows)
    print(f"load average at end: {machine_load()}")
    if args.details:
        for name, reports, tw in details:
            for line in reports:
                print(f"{name}: pyrsan {line}")
            for line in tw:
                print(f"{name}: TSan {line}")
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    main_guard(main)
