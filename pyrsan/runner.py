"""Running the instrumented program N times and collecting what the runtime reported.

The program's stdin/stdout/stderr pass through untouched; the runtime writes its reports
as JSON lines into a per-run directory (``PYRSAN_OPTIONS=json_path=...``), which is read
after each run. Nothing here prints (the CLI passes a progress callback).
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from .errors import EXIT_CLEAN, EXIT_PROGRAM_FAILED, EXIT_REPORTS, InternalError, UsageError
from .reports import DistinctReport, RunResult, deduplicate, read_report_dir

SC_ACCESS_MODES = ("fenced", "ra")


@dataclass(frozen=True)
class RunOptions:
    runs: int = 1
    keep_going: bool = False
    timeout: float | None = None
    sc_accesses: str | None = None
    work_dir: str = "."               # where the per-run report directories go
    quiet: bool = False               # the program's stdin/stdout/stderr on /dev/null (pyrsan fix)


@dataclass(frozen=True)
class SessionResult:
    runs: tuple[RunResult, ...]
    reports: tuple[DistinctReport, ...]
    timeout: float | None = None

    @property
    def crashes(self) -> tuple[RunResult, ...]:
        return tuple(r for r in self.runs if r.crashed)

    @property
    def timeouts(self) -> tuple[RunResult, ...]:
        return tuple(r for r in self.runs if r.timed_out)

    @property
    def verdict(self) -> str:
        if self.reports:
            return "violations"
        if self.crashes or self.timeouts:
            return "error"
        return "clean"

    @property
    def exit_code(self) -> int:
        """Decided from the reports, never from the program's own exit status."""
        if self.reports:
            return EXIT_REPORTS
        if self.crashes or self.timeouts:
            return EXIT_PROGRAM_FAILED
        return EXIT_CLEAN


def parse_options_string(text: str) -> list[tuple[str, str]]:
    """``PYRSAN_OPTIONS``: ``name=value`` items separated by ``:`` or spaces."""
    items = []
    for chunk in text.replace(":", " ").split():
        name, _, value = chunk.partition("=")
        items.append((name, value))
    return items


def check_user_options(user: str, known: frozenset[str] | None) -> None:
    """Reject a malformed or unknown name in the user's PYRSAN_OPTIONS before running: the
    runtime would exit 2 at start-up, which the driver cannot tell from the program's own
    exit status. ``known`` None: names unknown to the driver, only the syntax is checked."""
    for chunk in user.replace(":", " ").split():
        name = chunk.partition("=")[0]
        if known is not None and name not in known:
            raise UsageError(f"unknown option '{name}' in PYRSAN_OPTIONS (known: {', '.join(sorted(known))})")
        if "=" not in chunk:
            raise UsageError(f"option '{name}' in PYRSAN_OPTIONS needs a value (name=value)")


def runtime_options(user: str, json_path: str, sc_accesses: str | None) -> str:
    """The user's PYRSAN_OPTIONS with the driver's json_path/print_reports (and sc_accesses
    when --sc-accesses was given) winning."""
    options = dict(parse_options_string(user))
    options["json_path"] = json_path
    options["print_reports"] = "0"
    if sc_accesses is not None:
        options["sc_accesses"] = sc_accesses
    return ":".join(f"{k}={v}" for k, v in options.items())


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_once(executable: str, args: Sequence[str], index: int, options: RunOptions) -> RunResult:
    report_dir = Path(options.work_dir) / f"run{index}"
    report_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYRSAN_OPTIONS"] = runtime_options(
        env.get("PYRSAN_OPTIONS", ""), str(report_dir / "reports.%p.jsonl"), options.sc_accesses
    )
    # A session of its own, so that a timeout can kill the whole process group.
    try:
        output = subprocess.DEVNULL if options.quiet else None
        proc = subprocess.Popen([executable, *args], env=env, start_new_session=True,
                                stdin=output, stdout=output, stderr=output)
    except OSError as exc:
        raise InternalError(f"cannot start {executable}: {exc.strerror or exc}") from None
    timed_out = False
    try:
        proc.wait(timeout=options.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        proc.wait()
    except BaseException:  # Ctrl-C: do not leave the program running
        _kill_group(proc.pid)
        proc.wait()
        raise
    _kill_group(proc.pid)  # leftover children of the program
    returncode = proc.returncode
    sig = None
    if returncode is not None and returncode < 0 and not timed_out:
        try:
            sig = signal.Signals(-returncode).name
        except ValueError:
            sig = f"signal {-returncode}"
    return RunResult(
        index=index,
        returncode=None if timed_out else returncode,
        signal=sig,
        timed_out=timed_out,
        reports=tuple(read_report_dir(report_dir)),
    )


def run_program(
    executable: str,
    args: Sequence[str],
    options: RunOptions,
    progress: Callable[[int, int], None] | None = None,
) -> SessionResult:
    """Run up to ``options.runs`` times; stop at the first run that reported, crashed or
    timed out, unless ``keep_going``."""
    if options.runs < 1:
        raise UsageError("--runs must be at least 1")
    results: list[RunResult] = []
    for index in range(1, options.runs + 1):
        if progress is not None:
            progress(index, options.runs)
        result = run_once(executable, args, index, options)
        results.append(result)
        if not options.keep_going and (result.reported or result.crashed or result.timed_out):
            break
    return SessionResult(tuple(results), deduplicate(results), options.timeout)
