"""Scaling benchmark of the robustness engine (issue 11): the cost of an atomic operation must
not grow with the program. Native, ThreadSanitizer and pyrsan builds of the same programs run
interleaved in one run (median of --runs); optionally an older pyrsan too (--before).

  locations   programs/scaling.c ops: random release stores / acquire loads / acq_rel RMWs
              on 16, 1,024, 65,536 live atomics, 4 threads. CPU ns per operation.
              Target: 65,536 within 2x of 16 (pyrsan).
  threads     the same on 1,024 atomics with 2, 8, 32, 64 threads. CPU ns per operation (the
              cost of one operation to one thread, whatever the core count).
              Target: 64 threads within 2x of 2 (pyrsan).
  churn       programs/scaling.c churn: p = malloc; store_release(p); load_acquire(p); free(p),
              10k and 160k iterations. ns per iteration and peak RSS.
              Target: 160k within 1.3x of 10k, both (pyrsan).
  allocator   programs/allocator.c: 16 threads, per-thread heaps of 1,024 blocks with atomic
              headers, cross-thread frees through atomic MPSC lists (32,800 atomics).
              Wall time and peak RSS. Target: pyrsan <= 10x TSan time, <= 2x TSan RSS.

    python benchmarks/scaling.py [--runs 3] [--only locations,threads,churn,allocator]
        [--ops 100000] [--before /path/to/other/python] [--keep]

--before PYTHON: also build with `PYTHON -m pyrsan build` (e.g. a venv of the previous
version) as the variant `before`; its work is reduced where it would be too slow (per-operation
figures stay comparable). Every program checks its own result and prints "ok ...".
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from _bench import (PROGRAMS_DIR, BenchError, check_pyrsan, find_clang, fmt_mb, machine_load,
                    main_guard, median, print_table, pyrsan_env, run_measured, workdir)
from overhead import build

SECTIONS = ("locations", "threads", "churn", "allocator")
PYRSAN_OPTS = "print_reports=0:halt_on_error=0:verbosity=1"


def build_before(python: str, src: Path, out: Path) -> tuple[list[str] | None, str]:
    # cwd: not a checkout, whose pyrsan/ would shadow the installed one
    res = run_measured([python, "-m", "pyrsan", "build", str(src), "-o", str(out)], timeout=600,
                       cwd=out.parent)
    if res.returncode != 0:
        return None, f"--before build failed: {(res.stderr.strip().splitlines() or ['?'])[-1]}"
    return [str(out)], ""


class Runner:
    def __init__(self, a, wd: Path):
        self.a, self.wd = a, wd
        self.variants = ["native", "tsan", "pyrsan"] + (["before"] if a.before else [])
        self.exes: dict[tuple[str, str], list[str]] = {}
        self.stats: dict[str, str] = {}

    def exe(self, prog: str, variant: str) -> list[str]:
        key = (prog, variant)
        if key not in self.exes:
            src = PROGRAMS_DIR / f"{prog}.c"
            out = self.wd / f"{prog}.{variant}"
            if variant == "before":
                cmd, note = build_before(self.a.before, src, out)
            else:
                cmd, note = build(find_clang(), variant, src, out)
            if cmd is None:
                raise BenchError(f"{prog} ({variant}): {note}")
            self.exes[key] = cmd
        return self.exes[key]

    def run(self, prog: str, variant: str, args: list[str]) -> tuple[str, int, float]:
        """stdout, peak RSS (KB), wall time of one run"""
        env = pyrsan_env() if variant in ("pyrsan", "before") else dict(os.environ)
        if variant in ("pyrsan", "before"):
            env["PYRSAN_OPTIONS"] = f"{PYRSAN_OPTS}:json_path={self.wd / 'reports.%p.json'}"
        cmd = self.exe(prog, variant)
        if variant == "tsan":
            env["TSAN_OPTIONS"] = "report_bugs=0"
        res = run_measured([*cmd, *args], env=env, timeout=self.a.timeout, rss=True)
        if res.timed_out:
            raise BenchError(f"{prog} {' '.join(args)} ({variant}) timed out after {self.a.timeout:.0f} s")
        if res.returncode not in (0, 66) or not res.stdout.startswith("ok"):
            raise BenchError(f"{prog} {' '.join(args)} ({variant}) failed (exit {res.returncode}): "
                             f"{(res.stdout + res.stderr).strip()[-200:]}")
        m = re.search(r"pyrsan: clocks: .*", res.stderr)
        if m:
            self.stats[f"{prog} {' '.join(args)} ({variant})"] = m.group(0)
        return res.stdout, res.maxrss_kb, res.wall


def num(out: str, key: str) -> float:
    m = re.search(key + r"=([0-9.]+)", out)
    if not m:
        raise BenchError(f"no {key} in output: {out.strip()[:100]}")
    return float(m.group(1))


def fmt_ns(ns: float) -> str:
    return f"{ns / 1000:.2f} us" if ns >= 1000 else f"{ns:.0f} ns"


def ops_table(r: Runner, title: str, cells: list[tuple[int, int]], label) -> dict:
    """cells: (locations, threads). Returns {variant: [cpu ns/op by cell]}."""
    res = {v: [[] for _ in cells] for v in r.variants}
    for _ in range(r.a.runs):
        for i, (n, t) in enumerate(cells):
            for v in r.variants:
                ops = r.a.ops if v != "before" else max(2000, r.a.ops // 20)
                out, _, _ = r.run("scaling", v, ["ops", str(n), str(t), str(ops)])
                res[v][i].append(num(out, "cpu_ns_per_op"))
    med = {v: [median(x) for x in res[v]] for v in r.variants}
    print(f"\n{title} (CPU ns per operation, median of {r.a.runs})")
    rows = []
    for v in r.variants:
        rows.append([v] + [fmt_ns(x) for x in med[v]])
    if "tsan" in med:
        rows.append(["pyrsan/tsan"] + [f"{p / t:.2f}x" for p, t in zip(med["pyrsan"], med["tsan"])])
    print_table(["variant"] + [label(n, t) for n, t in cells], rows)
    return med


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--ops", type=int, default=100_000, help="operations per thread (ops cells)")
    ap.add_argument("--alloc-rounds", type=int, default=20)
    ap.add_argument("--before", help="a python whose `-m pyrsan` is the version to compare with")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    only = a.only.split(",")
    bad = [s for s in only if s not in SECTIONS]
    if bad or a.runs < 1 or a.ops < 1:
        raise BenchError(f"bad arguments (sections: {', '.join(SECTIONS)})")
    check_pyrsan()
    wd = workdir(a.keep, "pyrsan-scaling-")
    r = Runner(a, wd)
    print(f"scaling benchmark, {machine_load()}, variants: {', '.join(r.variants)}")
    verdicts = []
    if "locations" in only:
        med = ops_table(r, "live locations, 4 threads", [(16, 4), (1024, 4), (65536, 4)],
                        lambda n, t: f"{n} locs")
        for v in ("pyrsan", "before") if a.before else ("pyrsan",):
            g = med[v][2] / med[v][0]
            verdicts.append(f"{v}: 65,536 / 16 locations = {g:.2f}x (target <= 2x: "
                            f"{'MET' if g <= 2 and v == 'pyrsan' else 'NOT MET' if v == 'pyrsan' else 'info'})")
    if "threads" in only:
        med = ops_table(r, "threads, 1,024 locations", [(1024, 2), (1024, 8), (1024, 32), (1024, 64)],
                        lambda n, t: f"{t} threads")
        for v in ("pyrsan", "before") if a.before else ("pyrsan",):
            g = med[v][3] / med[v][0]
            verdicts.append(f"{v}: 64 / 2 threads = {g:.2f}x (target <= 2x: "
                            f"{'MET' if g <= 2 and v == 'pyrsan' else 'NOT MET' if v == 'pyrsan' else 'info'})")
    if "churn" in only:
        iters = (10_000, 160_000)
        t = {v: {n: [] for n in iters} for v in r.variants}
        m = {v: {n: [] for n in iters} for v in r.variants}
        for _ in range(a.runs):
            for n in iters:
                for v in r.variants:
                    out, rss, _ = r.run("scaling", v, ["churn", str(n)])
                    t[v][n].append(num(out, "ns_per_iter"))
                    m[v][n].append(rss)
        print(f"\nchurn: malloc / store_release / load_acquire / free (median of {a.runs})")
        rows = []
        for v in r.variants:
            a10, a160 = median(t[v][10_000]), median(t[v][160_000])
            r10, r160 = median(m[v][10_000]), median(m[v][160_000])
            rows.append([v, fmt_ns(a10), fmt_ns(a160), f"{a160 / a10:.2f}x", fmt_mb(r10), fmt_mb(r160),
                         f"{r160 / r10:.2f}x"])
            if v == "pyrsan":
                ok = a160 / a10 <= 1.3 and r160 / r10 <= 1.3
                verdicts.append(f"pyrsan churn 160k/10k: time {a160 / a10:.2f}x, RSS {r160 / r10:.2f}x "
                                f"(target <= 1.3x: {'MET' if ok else 'NOT MET'})")
        print_table(["variant", "10k /iter", "160k /iter", "ratio", "10k RSS", "160k RSS", "ratio"], rows)
    if "allocator" in only:
        args = ["16", "1024", str(a.alloc_rounds)]
        w = {v: [] for v in r.variants}
        m = {v: [] for v in r.variants}
        for _ in range(a.runs):
            for v in r.variants:
                _, rss, wall = r.run("allocator", v, args)
                w[v].append(wall)
                m[v].append(rss)
        print(f"\nallocator: 16 threads x 1,024 blocks, {a.alloc_rounds} rounds, 32,800 atomics "
              f"(median of {a.runs})")
        rows = []
        for v in r.variants:
            rows.append([v, f"{median(w[v]):.2f} s", fmt_mb(median(m[v])),
                         f"{median(w[v]) / median(w['tsan']):.1f}x",
                         f"{median(m[v]) / median(m['tsan']):.2f}x"])
        print_table(["variant", "wall", "peak RSS", "time/tsan", "RSS/tsan"], rows)
        tr, mr = median(w["pyrsan"]) / median(w["tsan"]), median(m["pyrsan"]) / median(m["tsan"])
        verdicts.append(f"pyrsan allocator: {tr:.1f}x TSan time (target <= 10x: {'MET' if tr <= 10 else 'NOT MET'}), "
                        f"{mr:.2f}x TSan RSS (target <= 2x: {'MET' if mr <= 2 else 'NOT MET'})")
    if r.stats:
        print("\nengine counters (verbosity=1, last run of each):")
        for k, s in r.stats.items():
            print(f"  {k}: {s}")
    print(f"\n{machine_load()}")
    for v in verdicts:
        print(v)
    return 0


if __name__ == "__main__":
    main_guard(main)
