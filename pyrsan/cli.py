"""The command line: `pyrsan run`, `pyrsan build`, `pyrsan fix` and `pyrsan report`. Thin: parse, call, render.

Every user-caused error is a PyrsanError, caught once in main() and printed as one line
(plus a compiler's diagnostics when there are some); never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from . import __version__
from .build import BuildRequest, build_program
from .checker import CHECK_METHODS, DEFAULT_MAX_SCHEDULES
from .cluster import Cluster, ClusterError, Shard, explore_campaign, parse_shard, run_campaign
from .errors import EXIT_CLEAN, EXIT_ERROR, EXIT_PROGRAM_FAILED, EXIT_REPORTS, PyrsanError, UsageError
from .render import (error_document, json_document, merged_json_document, render_json, render_merged_text,
                     render_suppressions, render_text)
from .reports import find_log_files, merge_logs
from .sarif import sarif_document
from .options import format_options
from .runner import (DEFAULT_SAMPLED_RUNS, DEFAULT_SCHED, DEFAULT_SCHEDULE_DIR, DEFAULT_TIME_BUDGET,
                     EXIT_RUNTIME_BAD_OPTIONS, SC_ACCESS_MODES, SCHED_MODES, SEEDED_SCHEDS, ExploreOptions,
                     RunOptions, ScheduleOptions, SessionResult, check_user_options)
from .schedule import read_schedule
from .toolchain import is_c_source, is_cxx_source
from .runtime_build import runtime_option_names

# Compiler flags passed through to clang. click cannot parse `-std=c11` or `-DX=1`, so they
# are taken out of argv before click sees it (CompileCommand.parse_args).
_FLAGS_WITH_VALUE = ("-I", "-D", "-U", "-L", "-l")
_FLAG_PREFIXES = ("-I", "-D", "-U", "-std=", "-O", "-L", "-l")


def split_compiler_flags(args: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(compiler flags, remaining args for click, program args after `--`)."""
    flags: list[str] = []
    rest: list[str] = []
    program: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            program = args[i + 1:]
            break
        if arg in _FLAGS_WITH_VALUE:
            if i + 1 >= len(args) or args[i + 1] == "--":
                raise UsageError(f"option {arg} needs a value")
            flags += [arg, args[i + 1]]
            i += 2
            continue
        if arg.startswith(_FLAG_PREFIXES) and not arg.startswith("--"):
            flags.append(arg)
        else:
            rest.append(arg)
        i += 1
    return flags, rest, program


class CompileCommand(click.Command):
    """A command that accepts -I -D -U -std= -O compiler flags, -L -l link flags and
    `-- program args`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        flags, rest, program = split_compiler_flags(list(args))
        ctx.meta["pyrsan.compiler_flags"] = tuple(flags)
        ctx.meta["pyrsan.program_args"] = tuple(program)
        return super().parse_args(ctx, rest)


COMPILE_HELP = """
\b
Compiler flags passed to clang: -I DIR, -D NAME[=VALUE], -U NAME, -std=STD,
-O0/-O1/-O2/-O3/-Os (default -O1; -g is always on); to the link: -L DIR, -l LIB.
C sources: .c; C++ sources: .cc .cpp .cxx .C .c++ (linked with clang++).
"""

EXIT_HELP = """
\b
Exit status:
   0  no robustness violation and no data race found
  66  violations or races reported (also when the program crashed or timed out after reporting)
   2  usage, toolchain, build or instrumentation error
   3  the program crashed, hung or deadlocked and nothing was reported
"""


def _common_build_options(function):
    function = click.option("--keep-temps", is_flag=True,
                            help="Keep the temporary directory (bitcode, objects, reports).")(function)
    function = click.option("--cc", metavar="PATH",
                            help="clang to use (default: $PYRSAN_CC, then clang-22, then other clang-N).")(function)
    return function


_verbose_option = click.option("-v", "--verbose", is_flag=True,
                               help="List the spin loops and CAS retry loops analysed as "
                                    "waits / BCAS, with their source lines.")


def _explain_options(function):
    function = click.option("--graph", metavar="DIR",
                            help="Write each report's execution graph to DIR (report-N.dot, and .svg with "
                                 "Graphviz's dot); implies the explain log.")(function)
    function = click.option("--explain", is_flag=True,
                            help="Explain each report: the run's events as a timeline per thread, the weak "
                                 "outcome and the cycle (runtime option explain_path).")(function)
    return function


def _races_option(extra: str = ""):
    return click.option(
        "--no-races", is_flag=True,
        help="No data-race detection: plain (non-atomic) accesses are not instrumented" + extra + ".")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="pyrsan")
def cli() -> None:
    """pyrsan: robustness sanitizer for C11/C++11 atomics.

    Reports atomic accesses that can behave in a way sequential consistency forbids
    under the C11 memory model (RC20: release/acquire, relaxed, fences), and data races
    on non-atomic memory under C11's happens-before.
    """


@cli.command(cls=CompileCommand, epilog=COMPILE_HELP + EXIT_HELP,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE... [-- PROGRAM_ARGS...]")
@click.option("--runs", type=click.IntRange(min=1), metavar="N",
              help=f"Number of executions (stops at the first that reports). Default: up to {DEFAULT_SAMPLED_RUNS} "
                   f"under auto, random and pct (no new run after {DEFAULT_TIME_BUDGET:g} s), 1 under os.")
@click.option("--keep-going", is_flag=True, help="Do all N runs even after one reported.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="S",
              help="Kill a run after S seconds (counts as a hang).")
@click.option("--json", "json_path", metavar="PATH", help="Write the machine-readable result to PATH.")
@click.option("--sc-accesses", type=click.Choice(SC_ACCESS_MODES),
              help="How seq_cst accesses are modelled (default fenced; ra = as in RSAN).")
@click.option("--suppressions", "suppressions", metavar="FILE",
              help="Suppressions file (robustness:PATTERN / race:PATTERN lines; runtime option suppressions).")
@click.option("--no-robustness", is_flag=True,
              help="No robustness reports, races only (runtime option report_robustness=0).")
@_races_option(" and race reports are off (runtime option report_races=0)")
@click.option("--sched", type=click.Choice(SCHED_MODES),
              help="Scheduler: auto (default: seeded PCT, one thread at a time, handed over to the OS "
                   "scheduler when a run gets long or blocks in a call it cannot see), os, or random, pct, dfs "
                   "(one thread at a time for the whole run).")
@click.option("--seed", type=click.IntRange(0, (1 << 64) - 1), metavar="S",
              help="Seed of --sched auto|random|pct (default: a fresh one, printed); run k uses S+k-1.")
@click.option("--pct-depth", type=click.IntRange(min=1), metavar="D",
              help="--sched pct: depth D (D-1 priority change points; runtime default 3).")
@click.option("--replay", metavar="FILE",
              help="Run once following the schedule FILE (saved by an earlier report) under sched=dfs.")
@click.option("--schedule-dir", metavar="DIR",
              help=f"Where the schedules that reproduce reports are saved (default {DEFAULT_SCHEDULE_DIR}).")
@click.option("--explore", is_flag=True,
              help="Run every SC interleaving class (DPOR + sleep sets); complete without a report = proof.")
@click.option("--max-schedules", type=click.IntRange(min=1), metavar="N",
              help="--explore: stop after N schedules (default 10000).")
@click.option("--preemption-bound", type=click.IntRange(min=0), metavar="K",
              help="--explore: only schedules with at most K preemptions.")
@click.option("--jobs", type=click.IntRange(min=1), metavar="N", help="--explore: N runs at a time.")
@click.option("--cluster", "cluster_address", metavar="ADDRESS",
              help="Run the units (the seeded runs of --sched random|pct, or --explore's schedules) on the "
                   "workers of the Dask scheduler at ADDRESS (tcp://HOST:PORT); needs pyrsan[cluster].")
@click.option("--shard", "shard_spec", metavar="K/N",
              help="Run part K of N of the same campaign (seeded runs or --explore), e.g. in a CI matrix; "
                   "`pyrsan report` merges the N --json documents into one verdict.")
@_explain_options
@click.option("--all", "show_all", is_flag=True,
              help="Also show (and count in the exit status) robustness reports whose consequence is "
                   "benign, e.g. a CAS failure that only feeds a retry (runtime option report_benign=1).")
@_common_build_options
@_verbose_option
@click.pass_context
def run(ctx: click.Context, sources: tuple[str, ...], runs: int | None, keep_going: bool,
        timeout: float | None, json_path: str | None, sc_accesses: str | None,
        suppressions: str | None, no_robustness: bool, no_races: bool, sched: str | None,
        seed: int | None, pct_depth: int | None, replay: str | None, schedule_dir: str | None,
        explore: bool, max_schedules: int | None, preemption_bound: int | None, jobs: int | None,
        cluster_address: str | None, shard_spec: str | None, show_all: bool, cc: str | None,
        keep_temps: bool, verbose: bool, explain: bool, graph: str | None) -> int:
    """Build SOURCE... with instrumentation and run the program, then report.

    Example: pyrsan run --json out.json app.c -- arg1

    SOURCE may also be one executable built with pyrsan build or the compiler wrappers
    (pyrsan run ./test_queue): it is run as it is.

    \b
    Schedule control:
      pyrsan run app.c                            (default: up to 20 seeded auto runs)
      pyrsan run --sched pct --runs 10 app.c      (seeded; reports say how to reproduce)
      pyrsan run --replay FILE app.c              (the same report again)
      pyrsan run --explore app.c                  (all SC interleavings: a proof when complete)

    \b
    Scaling out:
      pyrsan run --explore --cluster tcp://HOST:8786 app.c
      pyrsan run --explore --shard 2/4 --json shard2.json app.c   (then: pyrsan report shard*.json)
    """
    with _work_dir("pyrsan-", keep_temps) as temp_dir:
        try:
            known_options = runtime_option_names()
            check_user_options(os.environ.get("PYRSAN_OPTIONS", ""), known_options)
            if no_races and no_robustness:
                raise UsageError("--no-races and --no-robustness together leave nothing to check")
            schedule = _schedule_options(ctx, sources, runs, sched, seed, pct_depth, replay, schedule_dir, explore,
                                         max_schedules, preemption_bound, jobs)
            shard = _campaign_options(schedule, explore, seed, cluster_address, shard_spec)
            budget = None
            if runs is None:   # the default: sample seeded schedules, within a time budget
                sampled = schedule.sched in SEEDED_SCHEDS and not schedule.replay
                runs, budget = (DEFAULT_SAMPLED_RUNS, DEFAULT_TIME_BUDGET) if sampled else (1, None)
            if suppressions is not None:
                _use_suppressions(suppressions)
            if no_races:
                _add_runtime_option("report_races", "0")
            if no_robustness:
                _add_runtime_option("report_robustness", "0")
            if show_all:
                _add_runtime_option("report_benign", "1")
            executable = _prebuilt_program(sources, ctx.meta["pyrsan.compiler_flags"])
            if executable is None:
                os.mkdir(os.path.join(temp_dir, "bin"))
                executable = os.path.join(temp_dir, "bin", Path(sources[0]).stem or "program")
                _build(ctx, sources, executable, temp_dir, cc, keep_temps, no_races, verbose)
            options = RunOptions(runs=runs, keep_going=keep_going, timeout=timeout,
                                 sc_accesses=sc_accesses, work_dir=os.path.join(temp_dir, "reports"),
                                 schedule=schedule, time_budget=budget, sampling=budget is not None,
                                 explain=explain or graph is not None,
                                 command_args=_command_args(ctx, sources, sc_accesses, no_races, no_robustness))
            cluster = Cluster(cluster_address, executable) if cluster_address else None
            try:
                if explore:
                    result = explore_campaign(
                        executable, ctx.meta["pyrsan.program_args"], options,
                        ExploreOptions(max_schedules=max_schedules or 10000, preemption_bound=preemption_bound,
                                       jobs=jobs or 1),
                        cluster=cluster, shard=shard, progress=_explore_progress,
                    )
                    _end_progress(2)
                else:
                    result = run_campaign(
                        executable, ctx.meta["pyrsan.program_args"], options, cluster=cluster, shard=shard,
                        progress=_progress if runs > 1 else None,
                    )
                    _end_progress(runs)
                    _list_handovers(result, verbose)
            except ClusterError as error:
                _end_progress(2)
                if error.partial is not None:   # what was found before the cluster failed
                    sys.stderr.write(render_text(error.partial))
                    if json_path:
                        _write_json(json_path, {**json_document(error.partial), "verdict": "error",
                                                "error": error.message})
                        json_path = None
                    if error.partial.reports:
                        error.exit_code = EXIT_REPORTS
                raise
            if not result.reports and result.runs and result.runs[0].returncode == EXIT_BAD_OPTIONS:
                raise UsageError("the runtime rejected PYRSAN_OPTIONS or the suppressions file (see the line above)")
            sys.stderr.write(render_text(result))
            _show_explanations([r.report.public_fields() for r in result.reports], explain, graph)
            sys.stderr.flush()
            if json_path:
                _write_json(json_path, json_document(result))
            return result.exit_code
        except PyrsanError as error:
            if json_path:
                _write_json(json_path, error_document(error.message))
            raise


@cli.command(cls=CompileCommand, epilog=COMPILE_HELP,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...")
@click.option("-o", "output", default="a.out", show_default=True, metavar="OUT",
              help="The instrumented executable to write.")
@_races_option()
@_common_build_options
@_verbose_option
@click.pass_context
def build(ctx: click.Context, sources: tuple[str, ...], output: str, no_races: bool,
          cc: str | None, keep_temps: bool, verbose: bool) -> int:
    """Build SOURCE... into an instrumented executable that reports on its own
    (text reports on stderr, exit status 66 when it reported)."""
    if ctx.meta["pyrsan.program_args"]:
        raise UsageError("pyrsan build takes no program arguments (after --)")
    with _work_dir("pyrsan-", keep_temps) as temp_dir:
        _build(ctx, sources, output, temp_dir, cc, keep_temps, no_races, verbose)
        return 0


FIX_EXIT_HELP = """
\b
Exit status:
   0  fixed (the patched program was re-checked), or nothing to fix
  66  not robust within --max-rounds (the remaining violations are listed), or the
      patched source was found not robust
   2  usage, toolchain, build (also of the patched program) or instrumentation error
"""


@cli.command(cls=CompileCommand, epilog=COMPILE_HELP + FIX_EXIT_HELP,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE... [-- PROGRAM_ARGS...]")
@click.option("--patch", "patch_path", metavar="FILE",
              help="Write the source changes as a unified diff (patch -p1 / git apply).")
@click.option("--in-place", is_flag=True, help="Patch the sources themselves (a FILE.orig backup is kept).")
@click.option("--runs", type=click.IntRange(min=1), default=60, show_default=True, metavar="N",
              help="Runs per check (the check stops at the first run that reports).")
@click.option("--max-rounds", type=click.IntRange(min=1), default=10, show_default=True, metavar="N",
              help="Rounds of adding repairs before giving up.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              metavar="S", help="Kill a run after S seconds.")
@click.option("--json", "json_path", metavar="PATH", help="Write the machine-readable result to PATH.")
@click.option("--check", "check", type=click.Choice(CHECK_METHODS), default="auto", show_default=True,
              help="How each candidate is checked: explore (every SC interleaving class; complete = proof), "
                   "pct (--runs seeded PCT runs), os (--runs runs under the OS scheduler), auto (explore up "
                   "to --max-schedules, then pct runs if that was not complete).")
@click.option("--max-schedules", type=click.IntRange(min=1), default=DEFAULT_MAX_SCHEDULES, show_default=True,
              metavar="N", help="--check explore/auto: schedules per check before it counts as a sample.")
@click.option("--cluster", "cluster_address", metavar="ADDRESS",
              help="Run each check's schedules or seeded runs on the workers of the Dask scheduler at ADDRESS "
                   "(tcp://HOST:PORT; not with --check os); needs pyrsan[cluster].")
@_common_build_options
@click.pass_context
def fix(ctx: click.Context, sources: tuple[str, ...], patch_path: str | None, in_place: bool, runs: int,
        max_rounds: int, timeout: float, json_path: str | None, check: str, max_schedules: int,
        cluster_address: str | None, cc: str | None, keep_temps: bool) -> int:
    """Make SOURCE... robust: find violations, add seq_cst fences (or strengthen orders) at the
    IR level, re-check until none is left, keep only the repairs that are needed, and print
    (or write with --patch / --in-place) the source changes. The sources are not modified
    unless --in-place is given.

    Example: pyrsan fix dekker.c --patch dekker.patch
    """
    from .checker import CheckMethod, Program
    from .fix import FixOptions, apply_in_place, fix_json_document, fix_program, render_fix_text

    with _work_dir("pyrsan-fix-", keep_temps) as temp_dir:
        try:
            check_user_options(os.environ.get("PYRSAN_OPTIONS", ""), runtime_option_names())
            program = Program(sources, ctx.meta["pyrsan.compiler_flags"], ctx.meta["pyrsan.program_args"], cc)
            if cluster_address and check == "os":
                raise UsageError("--cluster runs seeded or explored checks (--check auto|explore|pct), not --check os")
            method = CheckMethod(scheduler=check, runs=runs, timeout=timeout, max_schedules=max_schedules,
                                 cluster=cluster_address)
            options = FixOptions(method=method, max_rounds=max_rounds,
                                 root=os.getcwd(), keep_checks=keep_temps)
            result = fix_program(program, options, temp_dir, progress=_fix_progress)
            _end_fix_progress()
            written: list[str] = []
            patched_ok = result.patched_check is None or result.patched_check.clean
            if result.plan is not None and patched_ok:
                if patch_path:
                    _write_text(patch_path, result.plan.diff)
                if in_place:
                    written = apply_in_place(result.plan)
            elif patch_path and result.status == "robust":
                _write_text(patch_path, "")
            sys.stdout.write(render_fix_text(result, patch_path if (result.plan and patched_ok) else None, written))
            if not patched_ok:
                sys.stdout.write("pyrsan fix: the patched source is not robust in the re-check "
                                 "(the patch was not written)\n")
            sys.stdout.flush()
            if json_path:
                _write_json(json_path, fix_json_document(result, patch_path if patched_ok else None, written))
            if result.status == "not_fixed" or not patched_ok:
                return EXIT_REPORTS
            return EXIT_CLEAN
        except PyrsanError as error:
            _end_fix_progress()
            if json_path:
                _write_json(json_path, error_document(error.message))
            raise


@contextlib.contextmanager
def _work_dir(prefix: str, keep: bool) -> Iterator[str]:
    """The command's temporary directory: removed at the end, or named on stderr with --keep-temps."""
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        yield path
    finally:
        if keep:
            click.echo(f"pyrsan: temporary files kept in {path}", err=True)
        else:
            shutil.rmtree(path, ignore_errors=True)


def _show_explanations(reports: Sequence[Mapping[str, Any]], timelines: bool, graph: str | None, out=None,
                       numbers: list[int] | None = None) -> None:
    """--explain: the timelines (on stderr, or out); --graph DIR: the pictures."""
    from .explain_render import GRAPHVIZ_MISSING, render_explanations, write_graphs

    if timelines and reports:
        (out or sys.stderr).write("\n" + render_explanations(reports, numbers))
    if graph is not None and reports:
        written, have_dot = write_graphs(reports, graph, numbers)
        if not have_dot:
            click.echo(GRAPHVIZ_MISSING, err=True)
        for path in written:
            click.echo(f"pyrsan: wrote {path}", err=True)


@cli.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("source", metavar="REPORT")
@click.argument("key", required=False)
@click.option("--graph", metavar="DIR", help="Also write the execution graph of each report (DIR/report-N.dot, .svg).")
def explain(source: str, key: str | None, graph: str | None) -> int:
    """Explain saved reports: the execution that shows each one, as a timeline (and a graph).

    REPORT is a `pyrsan run --explain --json` document, or runtime JSON-lines logs (a file or
    a directory) written with PYRSAN_OPTIONS=json_path=...:explain_path=... (the explain logs
    may sit in the same directory). KEY picks one report: its key (or a prefix of it), or its
    number N as listed. Exit status: 0 explained, 2 error.

    Example: pyrsan run --sched random --explain --json out.json sb.c; pyrsan explain out.json
    """
    from .explain import load_explained, select_report

    every = load_explained(source)
    reports = select_report(every, key)
    if not any(isinstance(r.get("explanation"), dict) and not r["explanation"].get("error") for r in reports):
        first = (reports[0].get("explanation") or {}).get("error") or "no explanation saved"
        raise UsageError(f"{source}: nothing to explain ({first}; run pyrsan run with --explain, or set the "
                         f"runtime option explain_path)")
    _show_explanations(reports, True, graph, sys.stdout, [every.index(r) + 1 for r in reports])
    sys.stdout.flush()
    return EXIT_CLEAN


def _fix_progress(what: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r\x1b[Kpyrsan fix: {what}")
        sys.stderr.flush()


def _end_fix_progress() -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


#: The runtime's exit status for a bad option or suppressions file (docs/interfaces.md §2).
EXIT_BAD_OPTIONS = EXIT_RUNTIME_BAD_OPTIONS


def _schedule_options(ctx: click.Context, sources: tuple[str, ...], runs: int | None, sched: str | None,
                      seed: int | None, pct_depth: int | None, replay: str | None, schedule_dir: str | None,
                      explore: bool, max_schedules: int | None, preemption_bound: int | None,
                      jobs: int | None) -> ScheduleOptions:
    """Check the schedule options together (one line for a bad combination) and pick a
    fresh seed when random/pct got none."""
    runs_given = ctx.get_parameter_source("runs") == click.core.ParameterSource.COMMANDLINE
    if not explore:
        for name, value in (("--max-schedules", max_schedules), ("--preemption-bound", preemption_bound),
                            ("--jobs", jobs)):
            if value is not None:
                raise UsageError(f"{name} applies to --explore only")
    if replay is not None or explore:
        what = "--replay" if replay is not None else "--explore"
        if replay is not None and explore:
            raise UsageError("--replay and --explore cannot be combined")
        if sched not in (None, "dfs"):
            raise UsageError(f"{what} runs under --sched dfs, not --sched {sched}")
        if seed is not None or pct_depth is not None:
            raise UsageError(f"{what} takes no --seed or --pct-depth (its schedules are not random)")
        if runs_given:
            raise UsageError(f"{what} decides the number of runs itself (no --runs)")
        sched = "dfs"
        if replay is not None:
            read_schedule(replay)   # a one-line error now rather than the runtime's at start-up
    sched = sched or DEFAULT_SCHED
    if sched not in SEEDED_SCHEDS and seed is not None:
        raise UsageError(f"--seed applies to --sched auto, random or pct (not {sched})")
    if sched not in ("pct", "auto") and pct_depth is not None:
        raise UsageError("--pct-depth applies to --sched pct or auto only")
    if sched in SEEDED_SCHEDS and seed is None:
        seed = secrets.randbits(32)
    return ScheduleOptions(sched=sched, seed=seed or 0, pct_depth=pct_depth, replay=replay,
                           schedule_dir=schedule_dir or DEFAULT_SCHEDULE_DIR,
                           program_name=Path(sources[0]).stem or "program")


def _campaign_options(schedule: ScheduleOptions, explore: bool, seed: int | None, cluster_address: str | None,
                      shard_spec: str | None) -> Shard | None:
    """--cluster and --shard apply to campaigns whose units are reproducible: seeded runs
    and explorations. Shards must agree on the seeds, so a seeded one needs --seed."""
    shard = parse_shard(shard_spec) if shard_spec is not None else None
    for name, given in (("--cluster", cluster_address is not None), ("--shard", shard is not None)):
        if given and not explore and schedule.sched not in SEEDED_SCHEDS:
            raise UsageError(f"{name} applies to --explore or to seeded runs (--sched random|pct)")
    if shard is not None and not explore and seed is None:
        raise UsageError("--shard needs --seed S: every shard must run the same seeds")
    return shard


#: Present in every executable linked with the runtime (pyrsan build, pyrsan-cc / pyrsan-c++).
_RUNTIME_MARK = b"__rsan_register_module"


def _prebuilt_program(sources: tuple[str, ...], compiler_flags: tuple[str, ...]) -> str | None:
    """`pyrsan run PROGRAM`: an executable already instrumented (a Make or CMake build with the
    compiler wrappers) is run as it is, with the same schedules and runs as a source; None when
    SOURCE... are sources to build."""
    first = sources[0]
    # Any name but a source's: `app`, `app.rsan`, `test.bin` (an ELF header decides below).
    if len(sources) != 1 or is_c_source(first) or is_cxx_source(first) or not os.path.isfile(first) \
            or not os.access(first, os.X_OK):
        return None
    try:
        with open(first, "rb") as handle:
            content = handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read {first}: {exc.strerror or exc}") from None
    if not content.startswith(b"\x7fELF"):
        return None
    if _RUNTIME_MARK not in content:
        raise UsageError(f"{first} is not instrumented: build it with `pyrsan build` or the compiler "
                         "wrappers (make CC=pyrsan-cc), or give its sources")
    if compiler_flags:
        raise UsageError(f"compiler flags do not apply to the prebuilt program {first}")
    return os.path.abspath(first)


def _command_args(ctx: click.Context, sources: tuple[str, ...], sc_accesses: str | None,
                  no_races: bool, no_robustness: bool) -> tuple[str, ...]:
    """What a reproduce line repeats after `pyrsan run --replay FILE`: the options that
    change the program or its analysis, the sources, and the program's arguments."""
    args: list[str] = []
    if sc_accesses is not None:
        args += ["--sc-accesses", sc_accesses]
    args += ["--no-races"] * no_races + ["--no-robustness"] * no_robustness
    args += [*ctx.meta["pyrsan.compiler_flags"], *sources]
    if ctx.meta["pyrsan.program_args"]:
        args += ["--", *ctx.meta["pyrsan.program_args"]]
    return tuple(args)


def _use_suppressions(path: str) -> None:
    """Pass --suppressions to the runtime (option suppressions=, absolute path), after a check
    that the file is there; its syntax is checked by the runtime at start-up."""
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such suppressions file")
    _add_runtime_option("suppressions", os.path.abspath(path))


def _add_runtime_option(name: str, value: str) -> None:
    """Set a runtime option for the runs: appended to the user's PYRSAN_OPTIONS, so it wins
    (runner.runtime_options keeps the last value of a name)."""
    user = os.environ.get("PYRSAN_OPTIONS", "")
    item = format_options([(name, value)])
    os.environ["PYRSAN_OPTIONS"] = f"{user}:{item}" if user else item


@cli.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--json", "json_out", metavar="OUT", help="Write the merged reports as a JSON document.")
@click.option("--sarif", "sarif_out", metavar="OUT", help="Write the merged reports as SARIF 2.1.0.")
@click.option("--source-root", metavar="DIR",
              help="SARIF: make paths under DIR relative to it (uriBaseId SRCROOT), as code scanning expects.")
@click.option("--print-suppressions", is_flag=True,
              help="Print the suppressions that would silence these reports (instead of the reports).")
@click.option("--suppressions-for", "suppressions_out", metavar="FILE",
              help="Write the suppressions that would silence these reports to FILE.")
@click.option("--all", "show_all", is_flag=True,
              help="Also show robustness reports whose consequence is benign (e.g. failed-cas).")
def report(logs: tuple[str, ...], json_out: str | None, sarif_out: str | None, source_root: str | None,
           print_suppressions: bool, suppressions_out: str | None, show_all: bool) -> int:
    """Merge the JSON-lines logs (PYRSAN_OPTIONS=json_path=...) of many processes, or the
    `pyrsan run --json` documents of many runs (e.g. the N shards of one --shard K/N
    campaign), into one deduplicated report and one verdict. LOG is a file, a directory (its
    *.jsonl and *.json files) or a glob pattern. Exit status: 0 no report, 66 reports,
    3 a merged run failed (crash, hang, deadlock), 2 error.

    Example: pyrsan report build/rsan-logs --sarif pyrsan.sarif --source-root .
    """
    try:
        files = find_log_files(logs)
    except ValueError as exc:
        raise UsageError(f"{exc}: no such log file (or nothing matched)") from None
    try:
        merged = merge_logs(files, include_benign=show_all)
    except OSError as exc:
        raise UsageError(f"cannot read {exc.filename}: {exc.strerror or exc}") from None
    if json_out:
        _write_json(json_out, merged_json_document(merged))
    if sarif_out:
        from .explain import with_log_explanations
        _write_json(sarif_out, sarif_document(with_log_explanations(merged.reports, files), source_root))
    if suppressions_out:
        _write_text(suppressions_out, render_suppressions(merged))
    sys.stdout.write(render_suppressions(merged) if print_suppressions else render_merged_text(merged))
    sys.stdout.flush()
    if merged.reports:
        return EXIT_REPORTS
    return EXIT_PROGRAM_FAILED if merged.verdict == "error" else EXIT_CLEAN


def _list_handovers(result: SessionResult, verbose: bool) -> None:
    """The runs the controlled scheduler handed over to the OS scheduler (their interleaving
    after that step is the OS's: a report made there may not replay): always for a run that
    reported, with -v for all; -v: a sampling cut short by the time budget."""
    reporting = {run.index for run in result.runs if run.reports}
    for index, step, reason in result.handovers:
        if index in reporting:
            click.echo(f"pyrsan: run {index} was handed over to the OS scheduler at step {step}: "
                       "a report it made after that step may not replay", err=True)
        if not verbose:
            continue
        why = ("no thread reached a scheduling point for a while (a call the scheduler cannot see: "
               "sleep, I/O, a blocking system call, or a long computation)" if reason == "stall"
               else "the run is long")
        click.echo(f"pyrsan: run {index}: handed over to the OS scheduler at step {step}: {why}", err=True)
    if verbose and result.budget_stop:
        click.echo(f"pyrsan: stopped after {len(result.runs)} runs: the default time budget "
                   f"({DEFAULT_TIME_BUDGET:g} s) was used up (--runs N to do more)", err=True)


def _list_loops(loops: tuple[str, ...]) -> None:
    """-v: the loops the passes analyse as one wait / BCAS (passes/spinloops.py)."""
    for line in loops:
        click.echo(f"pyrsan: {line}", err=True)
    if not loops:
        click.echo("pyrsan: no spin loop or CAS retry loop recognised", err=True)


def _build(ctx: click.Context, sources: tuple[str, ...], output: str, temp_dir: str, cc: str | None,
           keep_temps: bool, no_races: bool, verbose: bool) -> None:
    """Builds the instrumented program (pyrsan run, pyrsan build); lists the loops recognised
    (-v) and the inline asm modelled."""
    built = build_program(BuildRequest(
        sources=sources, output=output, temp_dir=temp_dir,
        compiler_flags=ctx.meta["pyrsan.compiler_flags"], cc=cc, keep_temps=keep_temps,
        plain_accesses=not no_races,
    ))
    if verbose:
        _list_loops(built.loops)
    _list_asm(built.asm, verbose)


def _list_asm(lines: tuple[str, ...], verbose: bool) -> None:
    """Inline asm and atomic library calls (passes/asm.py, atomics.py): a warning per
    statement that is not modelled, always; -v also lists the asm modelled as atomics or fences."""
    for line in dict.fromkeys(lines):  # one per source line (inlining repeats a statement)
        if line.startswith("warning: "):
            click.echo(f"pyrsan: {line}", err=True)
        elif verbose:
            click.echo(f"pyrsan: {line[len('note: '):]}", err=True)


def _write_text(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _progress(index: int, total: int) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\rpyrsan: run {index}/{total} ")
        sys.stderr.flush()


def _explore_progress(schedules: int, queued: int) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\rpyrsan: explored {schedules} schedules, {queued} queued ")
        sys.stderr.flush()


def _end_progress(total: int) -> None:
    if total > 1 and sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()


def _write_json(path: str, document: dict) -> None:
    try:
        Path(path).write_text(render_json(document), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _terminate(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `pyrsan` console script."""
    # SIGTERM unwinds like Ctrl-C: the running program's process group is killed and the
    # temporary directory removed on the way out.
    signal.signal(signal.SIGTERM, _terminate)
    try:
        code = cli.main(args=argv, prog_name="pyrsan", standalone_mode=False)
    except PyrsanError as error:
        click.echo(f"pyrsan: {error.message}", err=True)
        if error.details:
            click.echo(error.details, err=True)
        sys.exit(error.exit_code)
    except click.ClickException as error:  # bad option or value: one line
        ctx = getattr(error, "ctx", None)  # set on UsageError and BadParameter only
        command = ctx.command_path if ctx is not None else "pyrsan"
        click.echo(f"pyrsan: {error.format_message()} (see '{command} --help')", err=True)
        sys.exit(EXIT_ERROR)
    except click.Abort:
        click.echo("pyrsan: interrupted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("pyrsan: interrupted", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
