"""Memory-growth benchmark: pyrsan's peak RSS must not grow with the length of the run.

benchmarks/programs/mp_growth.c does release/acquire message passing after K relaxed writes
to another atomic (K is its argument). It is built with `python -m pyrsan build` (and natively,
for reference) and run with K = 10 and K = 10^7; the peak RSS of the two runs (median of
--runs, from wait4's ru_maxrss through a small exec helper) is printed with their ratio.

Target: the K = 10^7 run within 10% of the K = 10 run.

    python benchmarks/memory_growth.py [--runs 3] [--large 10000000] [--keep]
"""

from __future__ import annotations

import argparse
import os

from _bench import (COMPILE_FLAGS, PROGRAMS_DIR, BenchError, check_pyrsan, count_reports,
                    find_clang, fmt_kb, fmt_s, is_instrumented, machine_load, main_guard, median,
                    print_table, pyrsan_cmd, pyrsan_env, ratio, run_checked, run_measured,
                    workdir)

TARGET_GROWTH = 0.10


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs per K (median)")
    ap.add_argument("--small", type=int, default=10, help="K of the short run")
    ap.add_argument("--large", type=int, default=10_000_000, help="K of the long run")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per run")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    if args.runs < 1 or args.small < 0 or args.large < args.small:
        raise BenchError("--runs must be >= 1 and 0 <= --small <= --large")

    clang = find_clang()
    check_pyrsan(("pyrsan",))
    work = workdir(args.keep, "pyrsan-bench-memory-")
    src = PROGRAMS_DIR / "mp_growth.c"
    if not src.is_file():
        raise BenchError(f"missing benchmark program {src}")
    print(f"memory_growth: K = {args.small} and K = {args.large}, {args.runs} runs each "
          f"(median); {machine_load()}")
    if args.keep:
        print(f"work directory: {work}")

    native = work / "mp_growth"
    rsan = work / "mp_growth.rsan"
    run_checked([clang, *COMPILE_FLAGS, str(src), "-o", str(native), "-pthread"],
                "clang-22 build of mp_growth.c")
    run_checked(pyrsan_cmd("build", str(src), "-o", str(rsan)), "pyrsan build of mp_growth.c",
                env=pyrsan_env(), timeout=300)
    if not is_instrumented(rsan):
        raise BenchError("the binary from `pyrsan build` has no pyrsan runtime in it")

    json_dir = work / "reports"
    json_dir.mkdir()
    env = dict(os.environ)
    env.pop("PYRSAN_OPTIONS", None)
    rsan_env = dict(env, PYRSAN_OPTIONS=":".join(
        ["print_reports=0", "halt_on_error=0", f"json_path={json_dir}/rsan.%p.jsonl"]))

    rss: dict[tuple[str, int], list[int]] = {}
    wall: dict[tuple[str, int], list[float]] = {}
    problems: list[str] = []
    for _ in range(args.runs):
        for variant, exe, run_env, allowed in (("native", native, env, (0,)),
                                                ("pyrsan", rsan, rsan_env, (0, 66))):
            for k in (args.small, args.large):
                res = run_measured([str(exe), str(k)], env=run_env, timeout=args.timeout,
                                   rss=True)
                if res.timed_out:
                    problems.append(f"{variant} K={k}: timed out after {args.timeout:.0f} s")
                elif res.returncode not in allowed or not res.stdout.startswith("ok"):
                    lines = [ln for ln in (res.stderr + res.stdout).splitlines() if ln.strip()]
                    problems.append(f"{variant} K={k}: exit {res.returncode}: "
                                    f"{lines[-1] if lines else '(no output)'}")
                else:
                    rss.setdefault((variant, k), []).append(res.maxrss_kb)
                    wall.setdefault((variant, k), []).append(res.wall)

    def med_rss(variant: str, k: int) -> float:
        return median([float(x) for x in rss.get((variant, k), [])])

    def med_wall(variant: str, k: int) -> float:
        return median(wall.get((variant, k), []))

    print()
    rows = []
    for variant in ("native", "pyrsan"):
        small, large = med_rss(variant, args.small), med_rss(variant, args.large)
        diff = f"{large - small:+.0f} KB" if small == small and large == large else "n/a"
        rows.append([variant, fmt_kb(small), fmt_kb(large), diff, ratio(large, small),
                     fmt_s(med_wall(variant, args.small)), fmt_s(med_wall(variant, args.large))])
    print_table(["peak RSS", f"K={args.small}", f"K={args.large}", "difference", "ratio",
                 f"time K={args.small}", f"time K={args.large}"], rows)
    lines, keys = count_reports(json_dir)
    print(f"\npyrsan reports over all runs: {lines} JSON lines, {keys} distinct")
    for p in dict.fromkeys(problems):
        print(p)
    small, large = med_rss("pyrsan", args.small), med_rss("pyrsan", args.large)
    print()
    if small == small and large == large and small > 0:
        growth = large / small - 1.0
        ok = abs(growth) <= TARGET_GROWTH
        print(f"target: pyrsan peak RSS at K={args.large} within {TARGET_GROWTH:.0%} of "
              f"K={args.small}: {growth:+.1%} -> {'MET' if ok else 'NOT MET'}")
    else:
        print(f"target: pyrsan peak RSS within {TARGET_GROWTH:.0%}: not measured (see above)")
    return 0


if __name__ == "__main__":
    main_guard(main)
