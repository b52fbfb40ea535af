"""Build and run each driver of drivers/ under pyrsan (3 runs, OS scheduler) and ThreadSanitizer;
print builds?, runs?, reports and the time ratio. A driver whose library header is missing
(install.sh) is skipped with one line.

    python benchmarks/realworld/run.py [--runs N] [--only NAME]
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _bench import (COMPILE_FLAGS, find_clang, machine_load, main_guard, print_table,  # noqa: E402
                    pyrsan_cmd, pyrsan_env, ratio, run_measured, workdir)

DRIVERS = Path(__file__).resolve().parent / "drivers"
HEADER_RE = re.compile(r'^#include <(ck_\w+\.h|urcu[\w/.-]*|boost/[\w/.]+|tbb/[\w/.]+|oneapi/[\w/.]+)>', re.M)


def header_present(src: Path) -> str | None:
    for header in HEADER_RE.findall(src.read_text()):
        if not any((Path(d) / header).exists() for d in ("/usr/include", "/usr/local/include")):
            return header
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only")
    args = ap.parse_args()
    clang = find_clang()
    tmp = workdir(False, "pyrsan-realworld-")
    print(f"load average at start: {machine_load()}")
    rows = []
    for src in sorted(DRIVERS.glob("*.c*")):
        if args.only and args.only not in src.name:
            continue
        missing = header_present(src)
        if missing:
            rows.append([src.stem, "skipped", f"<{missing}> missing (install.sh)", "", ""])
            continue
        cxx = src.suffix != ".c"
        tsan_exe = tmp / (src.stem + ".tsan")
        comp = [clang.replace("clang", "clang++") if cxx else clang]
        b = run_measured([*comp, *COMPILE_FLAGS, "-fsanitize=thread", str(src), "-pthread", "-o", str(tsan_exe)],
                         timeout=300)
        tsan = run_measured([str(tsan_exe)], timeout=300) if b.returncode == 0 else None
        res = run_measured(pyrsan_cmd("run", "--runs", str(args.runs), "--keep-going", str(src)),
                           env=pyrsan_env(), timeout=900)
        built = "no" if "error" in res.stderr and res.returncode == 2 else "yes"
        ran = "yes" if res.stdout.count("ok ") >= 1 else "no"
        summary = [line for line in res.stderr.splitlines() if line.startswith("SUMMARY:")]
        reports = f"{len(set(summary))} distinct" if summary else "none"
        t = f"{ratio(res.wall / args.runs, tsan.wall)}" if tsan and tsan.returncode in (0, 66) else "TSan n/a"
        rows.append([src.stem, built, ran, reports, t])
    print_table(["driver", "builds", "runs", "pyrsan reports", "time vs TSan"], rows)
    return 0


if __name__ == "__main__":
    main_guard(main)
