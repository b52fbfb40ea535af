"""Run-time overhead benchmark: native vs ThreadSanitizer vs pyrsan on atomic-heavy programs.

Each program in benchmarks/programs/ is built three ways:

  native   clang-22 -O1 -g prog.c -o prog -pthread
  tsan     clang-22 -O1 -g -fsanitize=thread prog.c -o prog.tsan -pthread
  pyrsan   python -m pyrsan build prog.c -o prog.rsan

and run --runs times per variant (variants interleaved, median reported). Wall time comes from
the parent, peak RSS from os.wait4 (the child's own ru_maxrss). Every run must print "ok ..."
(the program checks its own result). Under pyrsan the runtime's text output is off
(print_reports=0, halt_on_error=0) and its JSON lines are counted instead; exit status 66
(reports made) is not a failure.

Target: pyrsan time <= 1.5x ThreadSanitizer's on atomic-heavy programs. Also, interleaved with
the others, the pyrsan binary under PYRSAN_OPTIONS=sched=os: the cost of the default scheduler
(sched=auto, controlled for the first handover_steps points; issue 12 target <= 1.10x).

    python benchmarks/overhead.py [--runs 3] [--scale 1.0] [--only counters] [--keep]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from _bench import (COMPILE_FLAGS, PROGRAMS_DIR, BenchError, RunResult, check_pyrsan,
                    count_reports, find_clang, fmt_mb, fmt_s, is_instrumented, machine_load,
                    main_guard, median, print_table, pyrsan_cmd, pyrsan_env, ratio, run_measured,
                    workdir)

TARGET_VS_TSAN = 1.5
TARGET_AUTO_VS_OS = 1.10


@dataclass(frozen=True)
class Program:
    name: str
    description: str
    arg: int  # the program's work argument at --scale 1 (about 0.2-0.5 s native here)


PROGRAMS = (
    Program("mpmc_queue", "CAS-heavy MPMC ring, 1024 cells, 4 threads", 20000),
    Program("counters", "relaxed/acq_rel fetch_add on 576 atomics, 4 threads", 10_000_000),
    Program("message_passing", "rel/acq message passing, 2 pairs x 64 slots", 4_000_000),
)
VARIANTS = ("native", "tsan", "pyrsan")


@dataclass
class Measure:
    """Runs of one variant of one program."""
    exe: list[str] | None = None   # command prefix, None when the build failed
    note: str = ""                 # why it is missing / what went wrong
    walls: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    exits: set[int] = field(default_factory=set)

    def time(self) -> float:
        return median(self.walls)

    def mem(self) -> float:
        return median([float(r) for r in self.rss])


def last_line(res: RunResult) -> str:
    lines = [ln for ln in (res.stderr + "\n" + res.stdout).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "(no output)"


def build(clang: str, variant: str, src: Path, out: Path) -> tuple[list[str] | None, str]:
    if variant == "native":
        cmd = [clang, *COMPILE_FLAGS, str(src), "-o", str(out), "-pthread"]
        env = None
    elif variant == "tsan":
        cmd = [clang, *COMPILE_FLAGS, "-fsanitize=thread", str(src), "-o", str(out), "-pthread"]
        env = None
    else:
        cmd = pyrsan_cmd("build", str(src), "-o", str(out))
        env = pyrsan_env()
    res = run_measured(cmd, env=env, timeout=300)
    if res.timed_out or res.returncode != 0:
        hint = (" (ThreadSanitizer needs `apt-get install -y libclang-rt-22-dev`)"
                if variant == "tsan" and "clang_rt" in res.stderr + res.stdout else "")
        return None, f"build failed: {last_line(res)}{hint}"
    if variant == "pyrsan" and not is_instrumented(out):
        return None, "the binary from `pyrsan build` has no pyrsan runtime in it"
    return [str(out)], ""


def tsan_prefix(exe: str, probe_arg: str, env: dict[str, str]) -> tuple[list[str] | None, str]:
    """ThreadSanitizer needs a memory layout some kernels (high mmap_rnd_bits) break; if the
    plain run fails, retry without ASLR (setarch -R)."""
    res = run_measured([exe, probe_arg], env=env, timeout=60)
    if res.returncode in (0, 66) and res.stdout.startswith("ok"):
        return [exe], ""
    setarch = shutil.which("setarch")
    if setarch:
        cmd = [setarch, platform.machine(), "-R", exe]
        res2 = run_measured([*cmd, probe_arg], env=env, timeout=60)
        if res2.returncode in (0, 66) and res2.stdout.startswith("ok"):
            return cmd, "run under setarch -R"
    return None, f"TSan binary does not run: {last_line(res)}"


def estimate_seconds(exe: list[str], arg: int, env: dict[str, str],
                     budget: float) -> tuple[float | None, str]:
    """Rough run time of `exe arg`, from growing probe runs (1/1000 of the work, then x4
    until a probe takes 0.3 s). (None, why) when a probe fails or hangs."""
    probe = max(1, arg // 1000)
    while True:
        limit = max(2 * budget, 10.0)
        res = run_measured([*exe, str(probe)], env=env, timeout=limit)
        if res.timed_out:
            return None, f"probe run with argument {probe} took over {limit:.0f} s"
        if res.returncode not in (0, 66) or not res.stdout.startswith("ok"):
            return None, (f"probe run with argument {probe} failed "
                          f"(exit {res.returncode}): {last_line(res)}")
        if res.wall >= 0.3 or probe >= arg:
            return res.wall * arg / probe, ""
        probe = min(arg, probe * 4)


def geomean(values: list[float]) -> float:
    values = [v for v in values if v == v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def add_run_options(ap: argparse.ArgumentParser) -> None:
    """The options of the native / TSan / pyrsan comparisons (here and race_overhead.py)."""
    ap.add_argument("--runs", type=int, default=3, help="runs per variant (median)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply the programs' work")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    ap.add_argument("--budget", type=float, default=6.0,
                    help="seconds the slowest variant may take per run; above it, a program "
                         "runs with less work in every variant")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")


def check_run_options(args: argparse.Namespace) -> None:
    if args.runs < 1 or args.scale <= 0 or args.budget <= 0:
        raise BenchError("--runs must be >= 1, --scale and --budget > 0")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_options(ap)
    ap.add_argument("--only", action="append", choices=[p.name for p in PROGRAMS],
                    help="run only this program (repeatable)")
    args = ap.parse_args()
    check_run_options(args)

    clang = find_clang()
    check_pyrsan(("pyrsan",))
    work = workdir(args.keep, "pyrsan-bench-overhead-")
    programs = [p for p in PROGRAMS if not args.only or p.name in args.only]
    print(f"overhead: {args.runs} runs per variant (median), scale {args.scale}; {machine_load()}")
    if args.keep:
        print(f"work directory: {work}")

    base_env = dict(os.environ)
    for var in ("PYRSAN_OPTIONS", "TSAN_OPTIONS"):
        base_env.pop(var, None)
    results: dict[str, dict[str, Measure]] = {}
    reports: dict[str, tuple[int, int]] = {}
    scaled: dict[str, str] = {}
    sched_os_times: dict[str, float] = {}

    for prog in programs:
        src = PROGRAMS_DIR / f"{prog.name}.c"
        if not src.is_file():
            raise BenchError(f"missing benchmark program {src}")
        arg = str(max(1, int(prog.arg * args.scale)))
        json_dir = work / f"{prog.name}.reports"
        json_dir.mkdir()
        envs = {
            "native": base_env,
            "tsan": base_env,
            "pyrsan": dict(base_env, PYRSAN_OPTIONS=":".join([
                "print_reports=0", "halt_on_error=0",
                f"json_path={json_dir}/rsan.%p.jsonl"])),
        }
        meas = {v: Measure() for v in VARIANTS}
        sched_os = Measure()   # the pyrsan binary under sched=os (issue 12)
        envs["sched_os"] = dict(envs["pyrsan"], PYRSAN_OPTIONS=envs["pyrsan"]["PYRSAN_OPTIONS"] + ":sched=os")
        for v in VARIANTS:
            suffix = {"native": "", "tsan": ".tsan", "pyrsan": ".rsan"}[v]
            meas[v].exe, meas[v].note = build(clang, v, src, work / f"{prog.name}{suffix}")
        if meas["tsan"].exe:
            meas["tsan"].exe, meas["tsan"].note = tsan_prefix(meas["tsan"].exe[0], "1", base_env)
        # The slowest variant decides the work of all three, so that the ratios compare the
        # same work and the script stays within its time budget.
        work_arg = int(arg)
        for v in ("pyrsan", "tsan"):
            if meas[v].exe:
                est, why = estimate_seconds(meas[v].exe, work_arg, envs[v], args.budget)
                if est is None:
                    meas[v].exe, meas[v].note = None, why
                elif est > args.budget:
                    # 0.7: probes underestimate contended programs (cost grows with length)
                    work_arg = max(1, int(work_arg * 0.7 * args.budget / est))
                    scaled[prog.name] = (f"work reduced from {arg} to {work_arg}: {v} would "
                                         f"take about {est:.0f} s per run")
        arg = str(work_arg)
        for stale in json_dir.glob("*.jsonl"):  # count the reports of the measured runs only
            stale.unlink()

        for _ in range(args.runs):
            for v in VARIANTS:
                m = meas[v]
                if m.exe is None:
                    continue
                res = run_measured([*m.exe, arg], env=envs[v], timeout=args.timeout, rss=True)
                allowed = (0, 66) if v != "native" else (0,)
                if res.timed_out:
                    m.exe, m.note = None, f"timed out after {args.timeout:.0f} s"
                elif res.returncode not in allowed or not res.stdout.startswith("ok"):
                    m.exe, m.note = None, f"run failed (exit {res.returncode}): {last_line(res)}"
                else:
                    m.walls.append(res.wall)
                    m.rss.append(res.maxrss_kb)
                    m.exits.add(res.returncode)
                if v == "pyrsan" and m.exe is not None:
                    res = run_measured([*m.exe, arg], env=envs["sched_os"], timeout=args.timeout)
                    if res.returncode in (0, 66) and res.stdout.startswith("ok"):
                        sched_os.walls.append(res.wall)
        for m in meas.values():
            if m.exe is None:  # a failed run leaves no partial numbers that look measured
                m.walls.clear()
                m.rss.clear()
        results[prog.name] = meas
        sched_os_times[prog.name] = sched_os.time() if sched_os.walls and meas["pyrsan"].walls else float("nan")
        reports[prog.name] = count_reports(json_dir)
        print(f"  {prog.name} ({prog.description}), argument {arg}: done", flush=True)

    print()
    rows = []
    for prog in programs:
        m = results[prog.name]
        n, t, r = m["native"].time(), m["tsan"].time(), m["pyrsan"].time()
        rows.append([prog.name, fmt_s(n), fmt_s(t), fmt_s(r),
                     ratio(r, n), ratio(t, n), ratio(r, t)])
    print_table(["time", "native", "tsan", "pyrsan", "pyrsan/native", "tsan/native",
                 "pyrsan/tsan"], rows)
    print()
    rows = []
    for prog in programs:
        m = results[prog.name]
        n, t, r = m["native"].mem(), m["tsan"].mem(), m["pyrsan"].mem()
        rows.append([prog.name, fmt_mb(n), fmt_mb(t), fmt_mb(r),
                     ratio(r, n), ratio(t, n), ratio(r, t)])
    print_table(["peak RSS", "native", "tsan", "pyrsan", "pyrsan/native", "tsan/native",
                 "pyrsan/tsan"], rows)

    print()
    for prog in programs:
        m = results[prog.name]
        lines, keys = reports[prog.name]
        if m["pyrsan"].walls:
            exits = ",".join(map(str, sorted(m["pyrsan"].exits)))
            print(f"{prog.name}: pyrsan reports over {len(m['pyrsan'].walls)} runs: "
                  f"{lines} JSON lines, {keys} distinct (exit status {exits})")
        if prog.name in scaled:
            print(f"{prog.name}: {scaled[prog.name]}")
        if m["tsan"].walls and 66 in m["tsan"].exits:
            print(f"{prog.name}: ThreadSanitizer reported something (exit 66)")
        for v in VARIANTS:
            if m[v].note:
                print(f"{prog.name}: {v}: {m[v].note}")

    auto_vs_os = {p.name: results[p.name]["pyrsan"].time() / sched_os_times[p.name] for p in programs
                  if sched_os_times.get(p.name, float("nan")) == sched_os_times.get(p.name)}
    print()
    for name, value in auto_vs_os.items():
        print(f"{name}: default scheduler (sched=auto) {fmt_s(results[name]['pyrsan'].time())} vs sched=os "
              f"{fmt_s(sched_os_times[name])}: {value:.2f}x")
    if auto_vs_os:
        worst = max(auto_vs_os.values())
        print(f"target: sched=auto <= {TARGET_AUTO_VS_OS}x sched=os: worst {worst:.2f}x -> "
              f"{'MET' if worst <= TARGET_AUTO_VS_OS else 'NOT MET'}")
    vs_tsan = [results[p.name]["pyrsan"].time() / results[p.name]["tsan"].time()
               for p in programs
               if results[p.name]["pyrsan"].walls and results[p.name]["tsan"].walls]
    print()
    if vs_tsan:
        g = geomean(vs_tsan)
        worst = max(vs_tsan)
        ok = worst <= TARGET_VS_TSAN
        print(f"target: pyrsan time <= {TARGET_VS_TSAN}x TSan: geometric mean {g:.2f}x, "
              f"worst {worst:.2f}x -> {'MET' if ok else 'NOT MET'}")
    else:
        print(f"target: pyrsan time <= {TARGET_VS_TSAN}x TSan: not measured "
              "(pyrsan or TSan missing; see above)")
    return 0


if __name__ == "__main__":
    main_guard(main)
