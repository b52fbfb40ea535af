"""Shared helpers of the pyrsan benchmark scripts (not a benchmark itself).

Each benchmark script imports this module from its own directory (`python benchmarks/x.py`
puts `benchmarks/` first on `sys.path`). Everything here is about running tools and measuring
them: finding clang-22 and pyrsan, timing a child process with its peak RSS (os.wait4), medians,
and printing plain tables. User-caused problems (a missing tool, a broken build) end the script
with one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PROGRAMS_DIR = Path(__file__).resolve().parent / "programs"

# The same flags pyrsan uses for a translation unit (docs/architecture.md, "The flow").
COMPILE_FLAGS = ["-O1", "-g"]


class BenchError(Exception):
    """A problem the user can fix (missing tool, failed build); one-line message."""


def die(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main_guard(main) -> None:
    """Run `main()`; turn BenchError and Ctrl-C into one line and a non-zero exit."""
    try:
        code = main()
    except BenchError as exc:
        die(str(exc))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        raise SystemExit(130)
    raise SystemExit(code or 0)


# ---------------------------------------------------------------------------- tools


def find_clang() -> str:
    """clang-22 from PATH, or $PYRSAN_CC when set (as pyrsan itself does)."""
    for candidate in (os.environ.get("PYRSAN_CC"), "clang-22"):
        if candidate:
            path = shutil.which(candidate)
            if path:
                return path
    raise BenchError("clang-22 not found on PATH; install it with "
                     "`apt-get install -y --no-install-recommends clang-22`")


_pyrsan_env: dict[str, str] | None = None


def pyrsan_env() -> dict[str, str]:
    """Environment for `python -m pyrsan...` children (decided by check_pyrsan): the current
    one when pyrsan is installed (`pip install -e .`), else the same with the repository root
    on PYTHONPATH (pyrsan supports running from a checkout)."""
    return dict(_pyrsan_env) if _pyrsan_env is not None else dict(os.environ)


def _probe_modules(modules: tuple[str, ...], env: dict[str, str]) -> str:
    """'' when `python -m M` can run for every module M under env, else a one-line reason."""
    for module in modules:
        probe = ("import importlib.util, sys\n"
                 f"sys.exit(0 if importlib.util.find_spec('{module}.__main__') else 3)")
        proc = subprocess.run([sys.executable, "-c", probe], env=env,
                              capture_output=True, text=True, cwd=tempfile.gettempdir())
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines()
            return lines[-1] if lines else f"no {module}.__main__"
    return ""


def check_pyrsan(modules: tuple[str, ...] = ("pyrsan", "pyrsan.passes")) -> None:
    """Fail with one line unless `python -m MODULE` can run for each module, installed or
    from this checkout."""
    global _pyrsan_env
    env = dict(os.environ)
    why = _probe_modules(modules, env)
    if why:
        checkout = dict(env, PYTHONPATH=os.pathsep.join(
            p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p))
        if _probe_modules(modules, checkout) == "":
            env, why = checkout, ""
    if why:
        raise BenchError(f"`python -m {' / '.join(modules)}` is not available ({why}); "
                         f"run `pip install -e .` in {REPO_ROOT}")
    _pyrsan_env = env


def pyrsan_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pyrsan", *args]


def passes_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pyrsan.passes", *args]


# ---------------------------------------------------------------------------- running


@dataclass(frozen=True)
class RunResult:
    wall: float        # seconds
    maxrss_kb: int     # peak resident set size of the program, KiB (-1 when not measured)
    returncode: int    # exit status, or -signal (SIGKILL after a timeout)
    timed_out: bool
    stdout: str
    stderr: str
    cpu: float = -1.0  # user + system seconds of the process and the children it waited for


# Peak RSS needs a small exec helper: a child forked from Python inherits Python's resident
# pages until it execs, and Linux folds that (about 17 MB here) into the child's ru_maxrss. The
# helper is tiny, so the program it forks starts from about 1 MB; it reports the program's
# ru_maxrss from wait4 in a file and exits with the program's status.
_RSS_HELPER_C = r"""
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int fds[2], err = 0, status;
  struct rusage ru;
  if (argc < 3 || pipe2(fds, O_CLOEXEC) != 0) return 125;
  pid_t pid = fork();
  if (pid < 0) return 125;
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    err = errno;
    if (write(fds[1], &err, sizeof err) < 0) _exit(127);
    _exit(127);
  }
  close(fds[1]);
  if (read(fds[0], &err, sizeof err) != (ssize_t)sizeof err) err = 0;
  while (wait4(pid, &status, 0, &ru) < 0)
    if (errno != EINTR) return 125;
  FILE *f = fopen(argv[1], "w");
  if (!f) return 125;
  if (err)
    fprintf(f, "exec-error %d\n", err);
  else
    fprintf(f, "%ld %d\n", ru.ru_maxrss,
            WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
  fclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
"""
_rss_helper_path: Path | None = None


def _rss_helper() -> Path:
    global _rss_helper_path
    if _rss_helper_path is None:
        tmp = Path(tempfile.mkdtemp(prefix="pyrsan-bench-rss-"))
        import atexit
        atexit.register(shutil.rmtree, tmp, True)
        src, exe = tmp / "rss_exec.c", tmp / "rss_exec"
        src.write_text(_RSS_HELPER_C)
        proc = subprocess.run([find_clang(), "-O1", "-D_GNU_SOURCE", str(src), "-o", str(exe)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise BenchError("cannot build the peak-RSS helper: "
                             + (proc.stderr.strip().splitlines() or ["?"])[-1])
        _rss_helper_path = exe
    return _rss_helper_path


def run_measured(cmd: list[str], *, env: dict[str, str] | None = None, timeout: float = 120.0,
                 cwd: str | Path | None = None, rss: bool = False) -> RunResult:
    """Run cmd once and return its wall time (and, with rss=True, its peak RSS through the
    exec helper). Output goes to temporary files: no pipe deadlock, no reader threads."""
    with tempfile.NamedTemporaryFile(prefix="pyrsan-bench-rss-", delete=False) as rss_file:
        rss_path = Path(rss_file.name)
    full = [str(_rss_helper()), str(rss_path), *cmd] if rss else list(cmd)
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            start = time.perf_counter()
            try:
                proc = subprocess.Popen(full, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=err, start_new_session=True)
            except OSError as exc:
                raise BenchError(f"cannot run {cmd[0]}: {exc.strerror}") from None
            timed_out = threading.Event()

            def kill() -> None:
                timed_out.set()
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

            timer = threading.Timer(timeout, kill)
            timer.start()
            try:
                while True:
                    try:
                        _, status, _usage = os.wait4(proc.pid, 0)
                        break
                    except InterruptedError:
                        continue
            finally:
                timer.cancel()
            wall = time.perf_counter() - start
            proc.returncode = returncode = os.waitstatus_to_exitcode(status)
            maxrss = -1
            if rss and not timed_out.is_set():
                fields = rss_path.read_text().split()
                if fields[:1] == ["exec-error"]:
                    raise BenchError(f"cannot run {cmd[0]}: {os.strerror(int(fields[1]))}")
                if len(fields) == 2:
                    maxrss, returncode = int(fields[0]), int(fields[1])
            out.seek(0)
            err.seek(0)
            return RunResult(wall=wall, maxrss_kb=maxrss, returncode=returncode,
                             timed_out=timed_out.is_set(),
                             stdout=out.read().decode(errors="replace"),
                             stderr=err.read().decode(errors="replace"),
                             cpu=_usage.ru_utime + _usage.ru_stime)
    finally:
        rss_path.unlink(missing_ok=True)


def run_checked(cmd: list[str], what: str, **kwargs) -> RunResult:
    """run_measured, raising BenchError (with the last stderr line) unless it exits 0."""
    res = run_measured(cmd, **kwargs)
    if res.timed_out:
        raise BenchError(f"{what}: timed out")
    if res.returncode != 0:
        lines = [ln for ln in (res.stderr + res.stdout).strip().splitlines() if ln.strip()]
        last = lines[-1] if lines else "(no output)"
        raise BenchError(f"{what} failed (exit {res.returncode}): {last}")
    return res


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> str:
    if not (a == a and b == b) or b <= 0:  # NaN or zero
        return "n/a"
    return f"{a / b:.2f}x"


def fmt_s(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds:.3f} s"


def fmt_mb(kb: float) -> str:
    return "n/a" if kb != kb else f"{kb / 1024:.1f} MB"


def fmt_kb(kb: float) -> str:
    return "n/a" if kb != kb else f"{kb:.0f} KB"


def print_table(headers: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    print(line)
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


def machine_load() -> str:
    try:
        one, five, _ = os.getloadavg()
        return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"
    except OSError:
        return "load average unknown"


def count_reports(json_dir: Path) -> tuple[int, int]:
    """(report lines, distinct keys) in every *.jsonl file of json_dir (runtime json_path)."""
    lines = 0
    keys: set[str] = set()
    for path in json_dir.glob("*.jsonl"):
        for raw in path.read_text(errors="replace").splitlines():
            if not raw.strip():
                continue
            lines += 1
            try:
                keys.add(str(json.loads(raw).get("key")))
            except (ValueError, AttributeError):
                keys.add(raw[:80])
    return lines, len(keys)


def workdir(keep: bool, prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    if not keep:
        import atexit
        atexit.register(shutil.rmtree, path, True)
    return path


def is_instrumented(exe: Path) -> bool:
    """True if the binary carries the pyrsan runtime (its __rsan_* symbols are exported)."""
    try:
        return b"__rsan_register_module" in Path(exe).read_bytes()
    except OSError:
        return False
