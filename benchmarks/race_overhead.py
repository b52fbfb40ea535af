"""Race-detection overhead: native vs ThreadSanitizer vs pyrsan on a program dominated by
non-atomic accesses (issue 4).

programs/private_arrays.c (4 threads working on private heap arrays, reading a shared input,
adding each round's result to a total under a mutex; race-free) is built

  native            clang-22 -O1 -g prog.c -o prog -pthread
  tsan              clang-22 -O1 -g -fsanitize=thread prog.c -o prog.tsan -pthread
  pyrsan            python -m pyrsan build prog.c -o prog.rsan
  pyrsan-after-opt  the same with PYRSAN_PLAIN_AFTER_OPT=1 (information: plain accesses
                    instrumented after clang's -O1, as before issue 13; misses dead accesses)
  pyrsan-no-races   python -m pyrsan build --no-races prog.c  (information: robustness only)

and, with --before PYTHON, `PYTHON -m pyrsan build` (another version, e.g. a venv of the
previous commit: the variant "before"); each is run --runs times, interleaved, in the same run
of this script (median reported), with the conventions of overhead.py (its build, probing and
budget helpers are reused). The program checks its own result and prints "ok ..."; pyrsan's
JSON reports are counted: the program is race-free, so any report is a false alarm and is
printed as such.

Wall time and CPU time (user + system, all threads: less disturbed by the machine's load) are
both reported, and peak RSS against TSan's.

Target (issue 13): pyrsan time <= 1.5x ThreadSanitizer's (aim 1.0x), peak RSS <= TSan's.

    python benchmarks/race_overhead.py [--runs 3] [--scale 1.0] [--budget 6] [--keep]
                                       [--before PYTHON]
"""

from __future__ import annotations

import argparse
import os

from _bench import (PROGRAMS_DIR, BenchError, check_pyrsan, count_reports,
                    find_clang, fmt_mb, fmt_s, is_instrumented, machine_load, main_guard, median,
                    print_table, pyrsan_cmd, pyrsan_env, ratio, run_measured, workdir)
from overhead import (Measure, Program, add_run_options, build, check_run_options, estimate_seconds,
                      last_line, tsan_prefix)

TARGET_VS_TSAN = 1.5
PROGRAM = Program("private_arrays", "private heap arrays + shared input + mutex, 4 threads",
                  1500)
VARIANTS = ("native", "tsan", "pyrsan", "pyrsan-after-opt", "pyrsan-no-races")


def build_variant(clang: str, variant: str, src, out, before: str | None = None) -> tuple[list[str] | None, str]:
    if variant == "before":
        # cwd: not a checkout, whose pyrsan/ would shadow the other version's
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # its own pyrsan
        res = run_measured([before, "-m", "pyrsan", "build", str(src), "-o", str(out)], env=env,
                           timeout=300, cwd=out.parent)
        if res.returncode != 0:
            return None, f"--before build failed: {last_line(res)}"
        return [str(out)], ""
    if variant not in ("pyrsan-no-races", "pyrsan-after-opt"):
        return build(clang, variant, src, out)
    if variant == "pyrsan-no-races":
        cmd, env = pyrsan_cmd("build", "--no-races", str(src), "-o", str(out)), pyrsan_env()
    else:
        cmd = pyrsan_cmd("build", str(src), "-o", str(out))
        env = dict(pyrsan_env(), PYRSAN_PLAIN_AFTER_OPT="1")
    res = run_measured(cmd, env=env, timeout=300)
    if res.timed_out or res.returncode != 0:
        return None, f"build failed: {last_line(res)}"
    if not is_instrumented(out):
        return None, "the binary from `pyrsan build` has no pyrsan runtime in it"
    return [str(out)], ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_options(ap)
    ap.add_argument("--before", metavar="PYTHON",
                    help="also build with `PYTHON -m pyrsan build` (variant `before`)")
    args = ap.parse_args()
    variants = VARIANTS + (("before",) if args.before else ())
    check_run_options(args)

    clang = find_clang()
    check_pyrsan(("pyrsan",))
    work = workdir(args.keep, "pyrsan-bench-race-")
    src = PROGRAMS_DIR / f"{PROGRAM.name}.c"
    if not src.is_file():
        raise BenchError(f"missing benchmark program {src}")
    print(f"race_overhead: {PROGRAM.name} ({PROGRAM.description}); {args.runs} runs per "
          f"variant (median), scale {args.scale}; {machine_load()}")
    if args.keep:
        print(f"work directory: {work}")

    base_env = dict(os.environ)
    for var in ("PYRSAN_OPTIONS", "TSAN_OPTIONS"):
        base_env.pop(var, None)
    json_dir = work / "reports"
    json_dir.mkdir()
    pyrsan_options = ":".join(["print_reports=0", "halt_on_error=0",
                               f"json_path={json_dir}/rsan.%p.jsonl"])
    envs = {"native": base_env, "tsan": base_env,
            "pyrsan": dict(base_env, PYRSAN_OPTIONS=pyrsan_options),
            "pyrsan-after-opt": dict(base_env, PYRSAN_OPTIONS=pyrsan_options),
            "pyrsan-no-races": dict(base_env, PYRSAN_OPTIONS=pyrsan_options),
            "before": dict(base_env, PYRSAN_OPTIONS=pyrsan_options)}
    cpus: dict[str, list[float]] = {v: [] for v in variants}
    meas = {v: Measure() for v in variants}
    for v in variants:
        meas[v].exe, meas[v].note = build_variant(clang, v, src, work / f"{PROGRAM.name}.{v}", args.before)
    if meas["tsan"].exe:
        meas["tsan"].exe, meas["tsan"].note = tsan_prefix(meas["tsan"].exe[0], "1", base_env)

    # the slowest variant decides the work of all (overhead.py: same work in every ratio)
    requested = work_arg = max(1, int(PROGRAM.arg * args.scale))
    reduced = ""
    for v in ("pyrsan", "tsan"):
        if meas[v].exe:
            est, why = estimate_seconds(meas[v].exe, work_arg, envs[v], args.budget)
            if est is None:
                meas[v].exe, meas[v].note = None, why
            elif est > args.budget:
                work_arg = max(1, int(work_arg * 0.7 * args.budget / est))
                reduced = (f"work reduced from {requested} to {work_arg} rounds: {v} would take "
                           f"about {est:.0f} s per run")
    for stale in json_dir.glob("*.jsonl"):  # count the reports of the measured runs only
        stale.unlink()

    for _ in range(args.runs):
        for v in variants:
            m = meas[v]
            if m.exe is None:
                continue
            res = run_measured([*m.exe, str(work_arg)], env=envs[v], timeout=args.timeout, rss=True)
            allowed = (0,) if v == "native" else (0, 66)
            if res.timed_out:
                m.exe, m.note = None, f"timed out after {args.timeout:.0f} s"
            elif res.returncode not in allowed or not res.stdout.startswith("ok"):
                m.exe, m.note = None, f"run failed (exit {res.returncode}): {last_line(res)}"
            else:
                m.walls.append(res.wall)
                cpus[v].append(res.cpu)
                m.rss.append(res.maxrss_kb)
                m.exits.add(res.returncode)
    for m in meas.values():
        if m.exe is None:  # a failed run leaves no partial numbers that look measured
            m.walls.clear()
            m.rss.clear()

    n = meas["native"].time()
    t = meas["tsan"].time()
    print(f"\n{PROGRAM.name}, argument {work_arg} rounds\n")
    cpu = {v: (median(cpus[v]) if meas[v].walls else float("nan")) for v in variants}
    print_table(["variant", "time", "x native", "x tsan", "cpu", "cpu x tsan", "peak RSS",
                 "RSS x native", "RSS x tsan"],
                [[v, fmt_s(meas[v].time()), ratio(meas[v].time(), n), ratio(meas[v].time(), t),
                  fmt_s(cpu[v]), ratio(cpu[v], cpu["tsan"]),
                  fmt_mb(meas[v].mem()), ratio(meas[v].mem(), meas["native"].mem()),
                  ratio(meas[v].mem(), meas["tsan"].mem())]
                 for v in variants])
    print()
    lines, keys = count_reports(json_dir)
    if lines:
        print(f"pyrsan reported {lines} JSON lines ({keys} distinct) on this race-free program: "
              "false alarms")
    if 66 in meas["tsan"].exits:
        print("ThreadSanitizer reported something (exit 66)")
    if reduced:
        print(reduced)
    for v in variants:
        if meas[v].note:
            print(f"{v}: {meas[v].note}")
    r = meas["pyrsan"].time()
    if meas["pyrsan"].walls and meas["tsan"].walls:
        rc = cpu["pyrsan"] / cpu["tsan"]
        print(f"target: pyrsan time <= {TARGET_VS_TSAN}x TSan: {r / t:.2f}x -> "
              f"{'MET' if r / t <= TARGET_VS_TSAN else 'NOT MET'} (CPU time: {rc:.2f}x -> "
              f"{'MET' if rc <= TARGET_VS_TSAN else 'NOT MET'})")
        mr = meas["pyrsan"].mem() / meas["tsan"].mem()
        print(f"target: pyrsan peak RSS <= TSan's: {mr:.2f}x -> {'MET' if mr <= 1 else 'NOT MET'}")
    else:
        print(f"target: pyrsan time <= {TARGET_VS_TSAN}x TSan: not measured "
              "(pyrsan or TSan missing; see above)")
    return 0


if __name__ == "__main__":
    main_guard(main)
