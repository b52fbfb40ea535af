"""Build and run helpers for the interceptor tests (test_intercept*.py).

The runtime is built from ALL ``runtime/src/*.c`` (engine and interceptors) with the flags of
docs/interfaces.md §3, archived, and linked into small uninstrumented C / C++ test programs
(``intercept_programs/``) that call the ABI by hand, exactly as instrumented programs are:
``-Wl,--whole-archive librsan_rt.a -Wl,--no-whole-archive -rdynamic -pthread -ldl``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNTIME_SRC = REPO_ROOT / "runtime" / "src"
RUNTIME_INCLUDE = REPO_ROOT / "runtime" / "include"
PROGRAMS = Path(__file__).resolve().parent / "intercept_programs"

#: docs/interfaces.md §3
RUNTIME_CFLAGS = ["-std=c11", "-O2", "-g", "-fPIC", "-fno-omit-frame-pointer", "-D_GNU_SOURCE",
                  "-pthread"]
LINK_TAIL = ["-rdynamic", "-pthread", "-ldl"]


def find_compiler(name: str) -> str | None:
    return shutil.which(name)


class BuildFailed(Exception):
    pass


def _run(cmd: list[str], cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildFailed(f"{' '.join(cmd)}\n{proc.stdout}{proc.stderr}")


def build_runtime(cc: str, out_dir: Path) -> Path:
    """Compiles every runtime/src/*.c (one at a time: the machine is shared) into
    out_dir/librsan_rt.a and returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    objects = []
    for src in sorted(RUNTIME_SRC.glob("*.c")):
        obj = out_dir / (src.stem + ".o")
        _run([cc, *RUNTIME_CFLAGS, "-I", str(RUNTIME_INCLUDE), "-c", str(src), "-o", str(obj)])
        objects.append(str(obj))
    archive = out_dir / "librsan_rt.a"
    if archive.exists():
        archive.unlink()
    _run(["ar", "rcs", str(archive), *objects])
    return archive


def build_program(compiler: str, source: Path, archive: Path, out_dir: Path) -> Path:
    """Links one test program with the whole runtime archive; returns the executable."""
    exe = out_dir / source.stem
    std = ["-std=c++17"] if source.suffix == ".cpp" else ["-std=c11", "-D_GNU_SOURCE"]
    _run([compiler, *std, "-O1", "-g", "-I", str(RUNTIME_INCLUDE), "-I", str(PROGRAMS),
          str(source), "-o", str(exe),
          "-Wl,--whole-archive", str(archive), "-Wl,--no-whole-archive", *LINK_TAIL])
    return exe


@dataclass(frozen=True)
class RunResult:
    returncode: int
    stderr: str
    reports: tuple[dict, ...]  # every JSON line the runtime wrote

    def robustness(self) -> list[dict]:
        return [r for r in self.reports if r.get("kind") == "robustness"]

    def describe(self) -> str:
        lines = [f"exit status {self.returncode}"]
        lines += [f"  report: {r.get('type')} at line {r.get('access', {}).get('line')} "
                  f"thread {r.get('access', {}).get('thread')}" for r in self.reports]
        if self.stderr:
            lines.append("stderr:\n" + self.stderr[-3000:])
        return "\n".join(lines)


def run_program(exe: Path, args: list[str], work_dir: Path, timeout: float = 60,
                extra_options: str = "") -> RunResult:
    json_path = work_dir / f"{exe.name}-{'-'.join(args) or 'noargs'}.jsonl"
    if json_path.exists():
        json_path.unlink()
    env = dict(os.environ)
    options = f"json_path={json_path}:print_reports=0"
    if extra_options:
        options += ":" + extra_options
    env["PYRSAN_OPTIONS"] = options
    proc = subprocess.run([str(exe), *args], env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    reports: list[dict] = []
    if json_path.exists():
        for line in json_path.read_text().splitlines():
            if line.strip():
                reports.append(json.loads(line))
    return RunResult(proc.returncode, proc.stderr, tuple(reports))


def marker_line(source: Path, marker: str) -> int:
    """The 1-based line of `source` that carries the comment ``/* @marker */``."""
    tag = f"/* @{marker} */"
    for number, text in enumerate(source.read_text().splitlines(), start=1):
        if tag in text:
            return number
    raise LookupError(f"{source.name}: no line with {tag}")
