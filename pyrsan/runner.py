"""Running the instrumented program N times and collecting what the runtime reported.

The program's stdin/stdout/stderr pass through untouched; the runtime writes its reports
as JSON lines into a per-run directory (``PYRSAN_OPTIONS=json_path=...``), which is read
after each run. Nothing here prints (the CLI passes a progress callback).
"""

from __future__ import annotations

import itertools
import os
import time
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

from .errors import EXIT_CLEAN, EXIT_PROGRAM_FAILED, EXIT_REPORTS, InternalError, UsageError
from .explore import Exploration, explore
from . import abi
from .options import OptionSyntaxError, format_options, parse_options
from .reports import DistinctReport, Reproduction, RunResult, deduplicate, read_report_dir
from .schedule import Op, Step, Trace, TraceFormatError, known_steps, read_trace, write_schedule
from .watchdog import Watchdog
from .words import signal_name

SC_ACCESS_MODES = ("fenced", "ra")
#: docs/scheduling.md, "Options": auto is the default (seeded PCT, handed over to the OS
#: scheduler when a run gets long or blocks where the scheduler cannot see); os is the OS
#: scheduler alone; the others run one thread at a time for the whole run.
SCHED_MODES = ("auto", "os", "random", "pct", "dfs")
DEFAULT_SCHED = "auto"
#: The strategies a seed drives.
SEEDED_SCHEDS = ("auto", "random", "pct")
#: `pyrsan run` without --runs: up to this many runs under a seeded strategy (stopping at the
#: first that reports), and no new run is started once the session has run DEFAULT_TIME_BUDGET
#: seconds. Measured (benchmarks/detection.py): the least likely litmus violation is found by
#: one auto run with probability ~0.35, so 20 runs miss it with probability < 0.02%.
DEFAULT_SAMPLED_RUNS = 20
DEFAULT_TIME_BUDGET = 10.0
#: ... and a small program is explored after its first run (docs/scheduling.md "Driver
#: defaults"): when that run ended normally under control after at most DEFAULT_EXPLORE_STEPS
#: scheduling points without a report, DPOR runs up to DEFAULT_EXPLORE_SCHEDULES schedules for at
#: most DEFAULT_EXPLORE_SECONDS. A violation that one seeded run shows with probability 1/200
#: takes DPOR a few dozen schedules, and a complete exploration is a proof; an incomplete one
#: gives the rest of the runs back to sampling.
DEFAULT_EXPLORE_STEPS = 1000
DEFAULT_EXPLORE_SCHEDULES = 500
DEFAULT_EXPLORE_SECONDS = 3.0
#: Runtime options of the driver's controlled runs: sched=auto controls the first
#: AUTO_HANDOVER_STEPS scheduling points (the runtime's own default is smaller, for binaries
#: run directly, whose every run counts); a run whose running thread reaches no scheduling point
#: for STALL_MS (blocked in a call the scheduler cannot see) is handed over to the OS scheduler.
AUTO_HANDOVER_STEPS = 200000
STALL_MS = 300
#: The exit statuses the runtime gives a program (a fatal error, bad options, max_steps under
#: the controlled scheduler), told apart from the program's own statuses; defined in
#: runtime/src/rsan_exit.h. (A deadlock is known from its report line, not its status.)
EXIT_RUNTIME_FATAL = abi.EXIT_FATAL
EXIT_RUNTIME_BAD_OPTIONS = abi.EXIT_BAD_OPTIONS
EXIT_RUNTIME_BOUND = abi.EXIT_BOUND
#: The same in an exploration, longer: a stalled run leaves the exploration incomplete (it is
#: handed over, not waited for until --timeout or forever).
EXPLORE_STALL_MS = 2000
#: Where the schedules that reproduce a report are saved, relative to the working directory.
DEFAULT_SCHEDULE_DIR = os.path.join(".pyrsan", "schedules")


@dataclass(frozen=True)
class ScheduleOptions:
    """How the runtime schedules threads (docs/scheduling.md). Run k of ``--runs`` uses
    ``seed + k - 1``; ``replay`` is a schedule file to follow (``--replay``)."""

    sched: str = DEFAULT_SCHED
    seed: int = 0
    pct_depth: int | None = None
    replay: str | None = None
    schedule_dir: str = DEFAULT_SCHEDULE_DIR
    program_name: str = "program"

    @property
    def controlled(self) -> bool:
        return self.sched != "os"

    def seed_of_run(self, index: int) -> int:
        return (self.seed + index - 1) % (1 << 64)


@dataclass(frozen=True)
class ExploreOptions:
    max_schedules: int = 10000
    preemption_bound: int | None = None
    jobs: int = 1


@dataclass(frozen=True)
class RunOptions:
    runs: int = 1
    keep_going: bool = False
    timeout: float | None = None
    sc_accesses: str | None = None
    work_dir: str = "."               # where the per-run report directories go
    quiet: bool = False               # the program's stdin/stdout/stderr on /dev/null (pyrsan fix)
    schedule: ScheduleOptions = field(default_factory=ScheduleOptions)
    command_args: tuple[str, ...] = ()   # sources, flags and `-- args`: for the reproduce line
    explain: bool = False             # explain log per run; each report gets its "explanation"
    time_budget: float | None = None  # start no new run once the session has run this long
    sampling: bool = False            # the default sampling: later runs are quiet, a forced schedule ends it
    stall_ms: int = STALL_MS          # 0: a controlled run never hands over on a stall
    closure: str | None = None        # runtime sched_closure (explore.py CLOSURE): F-order closures


@dataclass(frozen=True)
class SessionResult:
    runs: tuple[RunResult, ...]
    reports: tuple[DistinctReport, ...]
    timeout: float | None = None
    schedule: ScheduleOptions | None = None
    exploration: Exploration | None = None
    command_args: tuple[str, ...] = ()
    handovers: tuple[tuple[int, int, str], ...] = ()   # (run, step, "steps" | "stall")
    budget_stop: bool = False       # fewer runs than asked: the time budget was used up
    sampled: int | None = None      # with an exploration: how many of the runs were seeded samples
    shard: tuple[int, int] | None = None   # (K, N): part K of N of a split campaign (cluster.py)

    @property
    def crashes(self) -> tuple[RunResult, ...]:
        return tuple(r for r in self.runs if r.crashed)

    @property
    def timeouts(self) -> tuple[RunResult, ...]:
        return tuple(r for r in self.runs if r.timed_out)

    @property
    def bounded(self) -> tuple[RunResult, ...]:
        """Runs the scheduler stopped at max_steps (reported like hangs)."""
        return tuple(r for r in self.runs if r.reached_bound and not r.timed_out)

    @property
    def deadlocked(self) -> tuple[RunResult, ...]:
        return tuple(r for r in self.runs if r.deadlocks)

    @property
    def problems(self) -> bool:
        """A run crashed, hung or deadlocked."""
        return bool(self.crashes or self.timeouts or self.bounded or self.deadlocked)

    @property
    def verdict(self) -> str:
        if self.reports:
            return "violations"
        if self.problems:
            return "error"
        if self.exploration is not None and self.exploration.complete and self.shard is None:
            return "robust"   # a shard's complete part is not a proof: `pyrsan report` merges them
        return "clean"

    @property
    def exit_code(self) -> int:
        """Decided from the reports, never from the program's own exit status."""
        if self.reports:
            return EXIT_REPORTS
        if self.problems:
            return EXIT_PROGRAM_FAILED
        return EXIT_CLEAN


def parse_options_string(text: str) -> list[tuple[str, str]]:
    """``PYRSAN_OPTIONS``: ``name=value`` items separated by ``:`` or spaces, values bare or
    quoted (pyrsan/options.py). A syntax error is a UsageError."""
    try:
        return [(name, value or "") for name, value in parse_options(text)]
    except OptionSyntaxError as exc:
        raise UsageError(str(exc)) from None


def check_user_options(user: str, known: frozenset[str] | None) -> None:
    """Reject a malformed or unknown name in the user's PYRSAN_OPTIONS before running: the
    runtime would exit 2 at start-up, which the driver cannot tell from the program's own
    exit status. ``known`` None: names unknown to the driver, only the syntax is checked."""
    try:
        items = parse_options(user)
    except OptionSyntaxError as exc:
        raise UsageError(str(exc)) from None
    for name, value in items:
        if known is not None and name not in known:
            raise UsageError(f"unknown option '{name}' in PYRSAN_OPTIONS (known: {', '.join(sorted(known))})")
        if value is None:
            raise UsageError(f"option '{name}' in PYRSAN_OPTIONS needs a value (name=value)")


def runtime_options(user: str, json_path: str, sc_accesses: str | None,
                    schedule: Mapping[str, str] = {}) -> str:
    """The user's PYRSAN_OPTIONS with the driver's json_path/print_reports (and sc_accesses
    when --sc-accesses was given, and the scheduler's options) winning."""
    options = dict(parse_options_string(user))
    options["json_path"] = json_path
    options["print_reports"] = "0"
    if sc_accesses is not None:
        options["sc_accesses"] = sc_accesses
    options.update(schedule)
    return format_options(options)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_once(executable: str, args: Sequence[str], index: int, options: RunOptions,
             pct_steps: int | None = None, prefix: Sequence[int] | None = None,
             environ: Mapping[str, str] | None = None, quiet: bool = False,
             sleep: Mapping[int, Op] = {}) -> tuple[RunResult, Trace | None]:
    """One run; under a controlled scheduler also its trace. ``prefix``: a schedule for the
    runtime to follow (``--explore``), with the sleep set ``sleep`` at its end; otherwise
    ``--replay``'s file, if any. ``environ``: the program's environment (default: this
    process's). ``quiet``: the program's stdin/stdout/stderr on /dev/null for this run."""
    report_dir = _run_dir(options, index)
    report_dir.mkdir(parents=True, exist_ok=True)
    schedule = options.schedule
    scheduler: dict[str, str] = {"sched": schedule.sched}
    trace_path = report_dir / "trace.jsonl"
    if schedule.controlled:
        scheduler.update({"seed": str(schedule.seed_of_run(index)), "trace_path": str(trace_path),
                          "stall_ms": str(options.stall_ms)})
        if schedule.sched == "auto":
            scheduler["handover_steps"] = str(AUTO_HANDOVER_STEPS)
        if schedule.pct_depth is not None:
            scheduler["pct_depth"] = str(schedule.pct_depth)
        if pct_steps:
            scheduler["pct_steps"] = str(pct_steps)
        if options.closure is not None:
            scheduler["sched_closure"] = options.closure
        if prefix is not None:
            write_schedule(report_dir / "prefix.sched", prefix, sleep=sleep, trace_from=len(known_steps(prefix)))
            scheduler["schedule"] = str(report_dir / "prefix.sched")
        elif schedule.replay is not None:
            scheduler["schedule"] = os.path.abspath(schedule.replay)
    if options.explain:
        scheduler["explain_path"] = str(report_dir / "events.%p.jsonl")
    env = dict(os.environ if environ is None else environ)
    env["PYRSAN_OPTIONS"] = runtime_options(
        env.get("PYRSAN_OPTIONS", ""), str(report_dir / "reports.%p.jsonl"), options.sc_accesses, scheduler
    )
    # A session of its own, so that a timeout can kill the whole process group.
    try:
        output = subprocess.DEVNULL if options.quiet or quiet else None
        proc = subprocess.Popen([executable, *args], env=env, start_new_session=True,
                                stdin=output, stdout=output, stderr=output)
    except OSError as exc:
        raise InternalError(f"cannot start {executable}: {exc.strerror or exc}") from None
    timed_out = cut = False
    # --timeout, and in an exploration a bounded wait after a hand-over (watchdog.py)
    watchdog = Watchdog(options.timeout, trace_path if prefix is not None else None)
    try:
        while True:
            try:
                proc.wait(timeout=watchdog.wait())
                break
            except subprocess.TimeoutExpired:
                killed = watchdog.expired()
                if killed is not None:
                    timed_out, cut = killed == "timeout", killed == "handover"
                    _kill_group(proc.pid)
                    proc.wait()
                    break
    except BaseException:  # Ctrl-C: do not leave the program running
        _kill_group(proc.pid)
        proc.wait()
        raise
    _kill_group(proc.pid)  # leftover children of the program
    returncode = proc.returncode
    sig = None
    if cut:
        returncode = None   # killed by the watchdog after the hand-over: not the program's doing
    if returncode is not None and returncode < 0 and not timed_out:
        sig = signal_name(returncode)
    if returncode == EXIT_RUNTIME_FATAL:  # a crash of the runtime, not the program's status
        sig = f"a pyrsan runtime fatal error (exit status {EXIT_RUNTIME_FATAL}, see the line above)"
    trace = _read_trace(trace_path, known_steps(prefix or ())) if schedule.controlled else None
    reports = tuple(read_report_dir(report_dir))
    if options.explain:
        from .explain import explained_reports
        reports = explained_reports(reports, report_dir)
    reached_bound = (trace is not None and trace.end == "bound") or \
        (schedule.controlled and returncode == EXIT_RUNTIME_BOUND)
    result = RunResult(
        index=index,
        returncode=None if timed_out else returncode,
        signal=sig,
        timed_out=timed_out,
        reports=reports,
        reached_bound=reached_bound,
    )
    if schedule.controlled and (result.reported or result.deadlocks or result.crashed or result.hung):
        result = _with_reproduction(result, trace, options, index, prefix is not None)
    return result, trace


def _run_dir(options: RunOptions, index: int) -> Path:
    """Fixed width: the runs of an exploration must see environments of one size, or the
    main thread's stack (and the addresses its trace names) moves from run to run."""
    return Path(options.work_dir) / f"run{index:07d}"


def _disable_address_randomisation() -> None:
    """personality(ADDR_NO_RANDOMIZE) for the programs this process starts from now on (it
    is inherited through fork and exec): the explorer compares operations of different runs
    by address (sleep sets), which is only sound when the addresses are the same in every
    run (docs/scheduling.md, "Runtime notes", Addresses)."""
    import ctypes

    addr_no_randomize = 0x0040000
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        current = libc.personality(0xFFFFFFFF)
        if current != -1 and not current & addr_no_randomize:
            libc.personality(current | addr_no_randomize)
    except (OSError, AttributeError):
        pass


def _read_trace(path: str | os.PathLike, known: Sequence[Step] = ()) -> Trace | None:
    """The run's trace; None when the runtime wrote none (it failed at start-up). ``known``:
    its first steps, which its schedule's ``# trace_from`` left out (schedule.Prefix)."""
    try:
        return read_trace(path, known)
    except (OSError, TraceFormatError):
        return None


def _with_reproduction(result: RunResult, trace: Trace | None, options: RunOptions, index: int,
                       explored: bool) -> RunResult:
    """Save the decisions of the run (from its trace) where --replay can find them."""
    schedule = options.schedule
    seeded = schedule.sched in SEEDED_SCHEDS and not (explored or schedule.replay)
    seed = schedule.seed_of_run(index) if seeded else None
    if seeded and trace is not None and trace.seed is not None:
        # the seed the runtime names: it folds options such as pct_steps into the seed's top
        # byte (docs/scheduling.md), so that `--seed` alone reproduces the run
        seed = trace.seed
    schedule_file = os.path.abspath(schedule.replay) if schedule.replay else None
    if trace is not None and trace.steps and not schedule.replay:
        label = f"explore-{index}" if explored else (
            f"{schedule.sched}-{seed}" if seeded else f"{schedule.sched}-{index}")
        path = Path(schedule.schedule_dir) / f"{schedule.program_name}-{label}.sched"
        comments = {"program": schedule.program_name,
                    "sched": "dfs" if explored else schedule.sched, "seed": seed if seed is not None else "-"}
        try:
            write_schedule(path, trace.decisions, comments)
            schedule_file = str(path)
        except OSError as exc:
            raise UsageError(f"cannot write the schedule {path}: {exc.strerror or exc}") from None
    sched = "dfs" if explored else schedule.sched
    return RunResult(result.index, result.returncode, result.signal, result.timed_out, result.reports,
                     result.reached_bound, Reproduction(sched, seed, schedule_file))


#: Runs the program once: ``run_once``'s signature (a cluster runs it on a worker).
Execute = Callable[..., "tuple[RunResult, Trace | None]"]


def run_program(
    executable: str,
    args: Sequence[str],
    options: RunOptions,
    progress: Callable[[int, int], None] | None = None,
) -> SessionResult:
    """Run up to ``options.runs`` times; stop at the first run that reported, crashed,
    hung or deadlocked, unless ``keep_going``. Under pct, each run after the first places
    its change points over the step count the previous run had (pct_steps). The default
    sampling explores a small program after its first run (DEFAULT_EXPLORE_STEPS): the
    exploration's runs are numbered after the samples' (options.runs + 1, ...)."""
    if options.runs < 1:
        raise UsageError("--runs must be at least 1")
    results: list[RunResult] = []
    handovers: list[tuple[int, int, str]] = []
    steps: int | None = None
    start = time.monotonic()
    budget_stop = False
    explored: SessionResult | None = None
    for index in range(1, options.runs + 1):
        if index > 1 and options.time_budget is not None and time.monotonic() - start >= options.time_budget:
            budget_stop = True
            break
        if progress is not None:
            progress(index, options.runs)
        result, trace = run_once(executable, args, index, options, pct_steps=steps,
                                 quiet=options.sampling and index > 1)
        if trace is not None and trace.steps:
            steps = len(trace.steps)
        if trace is not None and trace.end == "handover":
            handovers.append((index, len(trace.steps), trace.reason or "?"))
        results.append(result)
        if not options.keep_going and _stops(result):
            break
        if options.sampling and trace is not None and _forced(trace):
            break   # every seed would run this same schedule again
        if index == 1 and options.sampling and _small(trace):
            explored = _explore_default(executable, args, options)
            if explored.exploration is not None and (explored.exploration.complete or
                                                     (not options.keep_going and explored.reports)):
                break
    if explored is None:
        return SessionResult(tuple(results), deduplicate(results), options.timeout, options.schedule,
                             None, options.command_args, tuple(handovers), budget_stop)
    every = tuple(results) + explored.runs
    return SessionResult(every, deduplicate(every), options.timeout, options.schedule, explored.exploration,
                         options.command_args, tuple(handovers), budget_stop, sampled=len(results))


def _small(trace: Trace | None) -> bool:
    """A run the default sampling follows with an exploration: it ended normally, never handed
    over, and took few scheduling points."""
    return trace is not None and trace.end == "exit" and 0 < len(trace.steps) <= DEFAULT_EXPLORE_STEPS


def _explore_default(executable: str, args: Sequence[str], options: RunOptions) -> SessionResult:
    """The default sampling's exploration: bounded in schedules and in time; its runs are quiet."""
    explore_options = ExploreOptions(max_schedules=DEFAULT_EXPLORE_SCHEDULES, preemption_bound=None, jobs=1)
    return explore_program(executable, args, replace(options, quiet=True), explore_options,
                           first_index=options.runs + 1,
                           deadline=time.monotonic() + DEFAULT_EXPLORE_SECONDS)


def _forced(trace: Trace) -> bool:
    """The run ended normally and no step had a choice: one thread could run at every point
    (no threads, or threads that never overlap), so every strategy and seed repeats it."""
    return trace.end == "exit" and all(len(step.enabled) == 1 for step in trace.steps)


def _stops(result: RunResult) -> bool:
    return result.reported or result.crashed or result.hung or bool(result.deadlocks)


def explore_program(
    executable: str,
    args: Sequence[str],
    options: RunOptions,
    explore_options: ExploreOptions,
    progress: Callable[[int, int], None] | None = None,
    *,
    execute: Execute = run_once,
    root: tuple[int, ...] = (),
    root_sleep: Mapping[int, Op] = {},
    first_index: int = 1,
    deadline: float | None = None,
) -> SessionResult:
    """Stateless exploration (explore.py): every run re-executes the program with
    ``sched=dfs`` and a schedule prefix. Stops at the first run that reported (or crashed,
    hung, deadlocked) unless ``keep_going``. Each run's directory is removed once read.
    ``root``: explore only the schedules that start with these decisions (a shard's
    subtree, cluster.py); the explorer then sees the traces from the end of ``root`` on,
    starting with the sleep set ``root_sleep``.
    ``execute`` runs one schedule (run_once, or a cluster's remote run); run indices start
    at ``first_index``. ``deadline`` (time.monotonic()): no schedule is started after it, and
    the exploration is then incomplete with bound "time"."""
    options = exploration_options(options)
    _disable_address_randomisation()
    local = execute is run_once
    if options.closure is None and local and not options.explain:
        options = replace(options, closure=closure_mode())
    servers = None
    if execute is run_once and not options.explain and os.environ.get("PYRSAN_FORK_SERVER", "1") != "0":
        # one forked child per schedule instead of one process (docs/scheduling.md "Fork server")
        from .forkserver import ForkServers
        servers = ForkServers(executable, args, options, Path(options.work_dir))
        execute = servers.execute
    counter = itertools.count(first_index)
    counter_lock = threading.Lock()
    results: list[RunResult] = []

    closures = ClosureStats()
    work_dir = os.fspath(options.work_dir)

    def run_schedule(prefix: tuple[int, ...], sleep: Mapping[int, Op]) -> tuple[RunResult, Trace | None]:
        with counter_lock:
            index = next(counter)
        result, trace = execute(executable, args, index, options, prefix=prefix, sleep=sleep)
        # a run of the fork server makes no directory of its own (its files are the server's):
        # one stat instead of a Path and a failed rmtree per run
        directory = f"{work_dir}/run{index:07d}"   # _run_dir's
        if os.path.isdir(directory):
            shutil.rmtree(directory, ignore_errors=True)
        return result, trace

    def run(prefix: tuple[int, ...], sleep: Mapping[int, Op]) -> tuple[Trace, RunResult]:
        # a Prefix (its steps known, schedule.Prefix) only from the root: a subtree's steps
        # start after ``root``, which the explorer does not see
        result, trace = run_schedule(root + prefix if root else prefix, sleep)
        trace = checked_trace(trace, result)
        if options.closure == CLOSURE_SEARCH:
            result = closures.absorb(trace, result, lambda schedule: run_schedule(schedule, {})[0])
        return subtree_trace(trace, len(root)), result

    out_of_time = False

    def on_run(prefix: tuple[int, ...], trace: Trace, result: RunResult) -> bool:
        nonlocal out_of_time
        results.append(result)
        if not options.keep_going and _stops(result):
            return True
        out_of_time = deadline is not None and time.monotonic() >= deadline
        return out_of_time

    try:
        exploration = explore(run, on_run=on_run, max_schedules=explore_options.max_schedules,
                              preemption_bound=explore_options.preemption_bound, jobs=explore_options.jobs,
                              progress=progress, sleep=root_sleep, sleep_aware=True)
    finally:
        if servers is not None:
            servers.close()
    if out_of_time:
        exploration = replace(exploration, complete=False, stopped=False, bound="time")
    results.extend(closures.extra)
    exploration = replace(exploration, closure_states=closures.states, closure_reruns=closures.reruns)
    if out_of_time:
        pass
    elif closures.incomplete and not exploration.stopped:
        # a class whose closure was not searched to the end: no proof, and the coarse relation
        # alone may have missed reports there; today's relation explores it instead
        exploration = replace(exploration, complete=False, bound=exploration.bound or "closure")
        if local and deadline is None:
            fine = explore_program(executable, args, replace(options, closure=CLOSURE_OFF), explore_options, progress,
                                   root=root, root_sleep=root_sleep, first_index=next(counter))
            results.sort(key=lambda r: r.index)
            every = tuple(results) + fine.runs
            return SessionResult(every, deduplicate(every), options.timeout, options.schedule,
                                 fine.exploration, options.command_args)
    results.sort(key=lambda r: r.index)
    return SessionResult(tuple(results), deduplicate(results), options.timeout, options.schedule,
                         exploration, options.command_args)


#: Runtime sched_closure values (docs/design/exploration.md §2): "0" today's relation (two SC
#: fences dependent unless both are clean); "1" every two SC fences independent (the coarse
#: relation) and each run's F-order closure searched by the runtime; "2" the coarse relation
#: alone (unsound: tests and measurements). PYRSAN_CLOSURE in the driver's environment picks one.
CLOSURE_OFF, CLOSURE_SEARCH, CLOSURE_COARSE = "0", "1", "2"


def closure_mode() -> str:
    mode = os.environ.get("PYRSAN_CLOSURE", CLOSURE_SEARCH)
    return mode if mode in (CLOSURE_OFF, CLOSURE_SEARCH, CLOSURE_COARSE) else CLOSURE_SEARCH


class ClosureStats:
    """The F-order closures of an exploration's runs (docs/design/exploration.md §2): each
    interleaving of a run's coarse class in which the runtime's closure search made a report
    is run as an ordinary schedule, so that the report is the engine's own, with its stacks
    and reproduction (a closure report is never shown as such)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.states = 0        # branching states searched, in all closures
        self.incomplete = 0    # closures not searched to the end (budget, unsupported step)
        self.reruns = 0        # schedules run for closure reports
        self.confirmed = 0     # ... that made a report
        self.extra: list[RunResult] = []   # confirmed reports beyond the one a run hands on

    def absorb(self, trace: Trace, result: RunResult,
               run_schedule: Callable[[tuple[int, ...]], RunResult]) -> RunResult:
        closure = trace.closure
        if closure is None:
            return result
        with self.lock:
            self.states += int(closure.get("states", 0))
            if closure.get("incomplete") is not None:
                self.incomplete += 1
        if result.reported or closure.get("incomplete") is not None:
            return result
        start = trace.decisions[:int(closure.get("from", 0))]
        confirmed: list[RunResult] = []
        for path in closure.get("reports", []):
            rerun = run_schedule(start + tuple(int(t) for t in path))
            with self.lock:
                self.reruns += 1
                self.confirmed += rerun.reported
            if rerun.reported:
                confirmed.append(rerun)
        if not confirmed:
            return result
        with self.lock:   # every run made is a run of the session: the coarse one too
            self.extra.extend([result, *confirmed[1:]])
        return confirmed[0]


def exploration_options(options: RunOptions) -> RunOptions:
    """The run options of an exploration: every run under sched=dfs with a prefix. A run that
    stalls (EXPLORE_STALL_MS without a scheduling point: blocked in a call the scheduler cannot
    see) is handed over and leaves the exploration incomplete (explore.py), never a hang."""
    return replace(options, stall_ms=EXPLORE_STALL_MS, schedule=ScheduleOptions(
        "dfs", 0, None, None, options.schedule.schedule_dir, options.schedule.program_name))


def checked_trace(trace: Trace | None, result: RunResult) -> Trace:
    """The trace of an exploration run; a one-line error when the runtime wrote none."""
    if trace is None and result.returncode == EXIT_RUNTIME_BAD_OPTIONS:
        raise UsageError("the runtime rejected PYRSAN_OPTIONS or the suppressions file (see the line above)")
    if trace is None:
        raise InternalError("the runtime wrote no trace under sched=dfs (was it built with the scheduler?)")
    return trace


def subtree_trace(trace: Trace, skip: int) -> Trace:
    """``trace`` as seen from the state after its first ``skip`` steps (the root of a
    subtree): races with the root's steps are the business of whoever branches there."""
    if not skip:
        return trace
    diverged = trace.diverged - skip if trace.diverged is not None and trace.diverged >= skip else trace.diverged
    closure = trace.closure
    if closure is not None and closure.get("sleep_blocked") is not None:   # a step index, as diverged
        closure = {**closure, "sleep_blocked": max(int(closure["sleep_blocked"]) - skip, 0)}
    return replace(trace, steps=trace.steps[skip:], diverged=0 if diverged is not None and diverged < 0 else diverged,
                   closure=closure)
