"""Micro-benchmark of the runtime's clock engine: ns per operation by operation kind,
number of live locations and number of threads.

Builds benchmarks/engine_micro.c against the engine-only runtime (every runtime/src/*.c
except intercept_*.c, with the production flags of docs/interfaces.md) and prints a table.
Each cell: every thread first touches all the locations (with location-indexed clocks, as
before issue 11, its clocks then hold one entry per location; docs/design/clocks.md), then
all threads run the operation for --ms milliseconds; ns/op is wall time x
threads / operations (what one operation costs one thread; with more threads than cores the
waiting is included).

    python benchmarks/engine_micro.py                      # full table (2-4 min)
    python benchmarks/engine_micro.py --quick              # 16 and 1,024 locations, short runs
    python benchmarks/engine_micro.py --src /tmp/old/src   # another copy of runtime/src
    python benchmarks/engine_micro.py --ops sc_store,sc_fence --locs 1024 --threads 1
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OPS = ["rlx_load", "rlx_store", "relacq", "cas_ar", "sc_store", "sc_load", "sc_fence"]
LABEL = {
    "rlx_load": "relaxed load",
    "rlx_store": "relaxed store",
    "relacq": "rel store + acq load",
    "cas_ar": "rlx load + acq_rel CAS",
    "sc_store": "seq_cst store (fenced)",
    "sc_load": "seq_cst load (fenced)",
    "sc_fence": "SC fence",
}
CFLAGS = ["-std=c11", "-O2", "-g", "-fno-omit-frame-pointer", "-D_GNU_SOURCE", "-pthread"]


class BenchError(Exception):
    pass


def build(src: Path) -> Path:
    cc = shutil.which("clang-22") or shutil.which("cc")
    if not cc:
        raise BenchError("no C compiler (clang-22 or cc) on PATH")
    inc = ROOT / "runtime" / "include"
    sources = sorted(p for p in src.glob("*.c") if not p.name.startswith("intercept_"))
    if not sources:
        raise BenchError(f"no runtime sources in {src}")
    sources.append(HERE / "engine_micro.c")
    h = hashlib.sha256()
    for p in sources + sorted(src.glob("*.h")) + sorted(inc.glob("*.h")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    h.update(" ".join([cc] + CFLAGS).encode())
    out = Path(tempfile.gettempdir()) / f"pyrsan-engine-micro-{h.hexdigest()[:16]}"
    if out.exists():
        return out
    tmp = out.with_name(out.name + f".{os.getpid()}")
    cmd = [cc, *CFLAGS, f"-I{inc}", f"-I{src}", *map(str, sources), "-o", str(tmp), "-ldl"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise BenchError("build failed: " + (res.stderr.strip().splitlines() or ["?"])[0])
    os.replace(tmp, out)
    return out


def measure(exe: Path, op: str, nlocs: int, nthreads: int, ms: int) -> float:
    res = subprocess.run([str(exe), op, str(nlocs), str(nthreads), str(ms)],
                         capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise BenchError(f"{op} {nlocs} {nthreads}: exit {res.returncode}: {res.stderr.strip()[:200]}")
    return float(res.stdout.split()[0])


def fmt(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e4:
        return f"{ns / 1e3:.1f} us"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} us"
    return f"{ns:.0f} ns"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=ROOT / "runtime" / "src", help="runtime sources")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--locs", default="16,1024,10000")
    ap.add_argument("--threads", default="1,4")
    ap.add_argument("--ms", type=int, default=300, help="timed phase per cell")
    ap.add_argument("--quick", action="store_true", help="16 and 1,024 locations, 100 ms")
    a = ap.parse_args(argv)
    try:
        ops = a.ops.split(",")
        bad = [o for o in ops if o not in OPS]
        if bad:
            raise BenchError(f"unknown operation {bad[0]!r} (one of {', '.join(OPS)})")
        locs = [int(x) for x in ("16,1024" if a.quick else a.locs).split(",")]
        threads = [int(x) for x in a.threads.split(",")]
        ms = 100 if a.quick else a.ms
        exe = build(a.src.resolve())
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = float("nan")
        print(f"engine micro-benchmark ({a.src}), load average {load:.2f}, ns per operation")
        cols = [(n, t) for n in locs for t in threads]
        head = f"{'operation':<24}" + "".join(f"{f'{n} loc/{t} thr':>16}" for n, t in cols)
        print(head)
        for op in ops:
            row = f"{LABEL[op]:<24}"
            for n, t in cols:
                row += f"{fmt(measure(exe, op, n, t, ms)):>16}"
                print(row + "\r", end="", file=sys.stderr, flush=True)
            print(row, flush=True)
    except (BenchError, ValueError, subprocess.TimeoutExpired) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
