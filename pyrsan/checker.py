"""How `pyrsan fix` checks a candidate: build the program with a set of repairs, run it, and
return the distinct robustness reports.

One function, ``check_program``, with the method as a parameter (exploration when the
program is small enough, else N runs under pct):
- ``explore``: every SC interleaving class (runner.explore_program); a complete exploration
  without a report is a proof (Thm 3.1): ``CheckOutcome.complete``;
- ``auto`` (the default): explore up to ``max_schedules``; when that bound is hit without a
  report, N runs under ``pct`` as well;
- ``pct``: N seeded PCT runs; ``os``: N runs under the OS scheduler.
Every method stops at the first report.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from .build import BuildRequest, build_program
from .abi import Frame, primary_frame
from .errors import InternalError, UsageError
from .reports import Report
from .cluster import Cluster, explore_campaign, run_campaign
from .runner import ExploreOptions, RunOptions, ScheduleOptions, SessionResult, run_program

#: Runs per check under the OS scheduler (testsuite/litmus: ~60 runs find these violations).
DEFAULT_RUNS = 60
#: Schedules an ``auto`` / ``explore`` check may take before it counts as a sample.
DEFAULT_MAX_SCHEDULES = 500
#: A repair that strengthens orders is verified with seq_cst as release/acquire
#: (architecture.md "Fix loop": the fenced model is stronger than C11 and could hide what the
#: strengthening leaves).
MODEL_WITH_FENCES = "fenced"
MODEL_WITH_ORDERS = "ra"
ACCESS_KINDS = ("load", "store", "rmw", "cas")


@dataclass(frozen=True)
class Program:
    """What to build and run: the user's sources, compiler flags, program arguments."""
    sources: tuple[str, ...]
    compiler_flags: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    cc: str | None = None

    def module_id(self, source: str) -> str:
        """The module id the build gives a source (build.instrument: its absolute path)."""
        return os.path.abspath(source)


@dataclass(frozen=True)
class SiteInfo:
    """One row of a module's site table (passes/sitesjson.py)."""
    id: int
    module: str                  # module id
    index: int
    kind: str                    # load store rmw cas fence call
    order: str
    order_fail: str
    frames: tuple[Frame, ...]

    @property
    def is_access(self) -> bool:
        return self.kind in ACCESS_KINDS

    @property
    def primary(self) -> Frame | None:
        """The innermost frame not in a system header (docs/interfaces.md §2)."""
        return primary_frame(self.frames)


@dataclass(frozen=True)
class Repair:
    """A repair at an atomic access of the unrepaired program (module id, site index):
    ``fence`` before/after it, or ``order``: the access's order raised to ``order`` (seq_cst,
    or acquire / acq_rel when a report names that cheaper repair; a CAS's failure order is
    raised with it, passes/repairs.py)."""
    kind: str                    # "fence" or "order"
    module: str
    index: int
    position: str = ""           # fence: "before" / "after"
    thread: int | None = field(default=None, compare=False)  # the thread it was meant for
    order: str = "seq_cst"       # order: the new order

    def to_json(self) -> dict:
        entry: dict = {"kind": self.kind, "site": {"module": self.module, "index": self.index}}
        if self.kind == "fence":
            entry["position"] = self.position
        else:
            entry["order"] = self.order
        return entry


CHECK_METHODS = ("auto", "explore", "pct", "os")


@dataclass(frozen=True)
class CheckMethod:
    scheduler: str = "auto"      # one of CHECK_METHODS
    runs: int = DEFAULT_RUNS     # pct / os runs
    timeout: float | None = 60.0
    max_schedules: int = DEFAULT_MAX_SCHEDULES  # explore / auto
    seed: int = 1                # pct: run k uses seed + k - 1 (reproducible checks)
    cluster: str | None = None   # a Dask scheduler's address: the runs go to its workers

    def describe(self, sc_accesses: str, runs_made: int, complete: bool = False,
                 explored: int = 0) -> str:
        parts = []
        if explored:
            parts.append(f"exploration of {explored} schedule{'s' if explored != 1 else ''} "
                         + ("(complete: a proof)" if complete else f"(bound {self.max_schedules})"))
        rest = runs_made - explored
        if rest or not explored:
            how = "the OS scheduler" if self.scheduler == "os" else f"pct (seeds {self.seed}..)"
            parts.append(f"{rest} run{'s' if rest != 1 else ''} under {how} (at most {self.runs})")
        return ", then ".join(parts) + f", stopping at the first report, sc_accesses={sc_accesses}"


@dataclass(frozen=True)
class CheckOutcome:
    reports: tuple[Report, ...]  # distinct robustness reports
    runs: int                    # runs made
    sc_accesses: str
    method: CheckMethod
    sites: tuple[SiteInfo, ...] = ()
    failure: str | None = None   # a crash, hang or deadlock with nothing reported (_failure)
    complete: bool = False       # exhaustive exploration without a report: a proof
    explored: int = 0            # of ``runs``, the schedules of an exploration

    @property
    def violations(self) -> tuple[Report, ...]:
        return tuple(r for r in self.reports if r.kind == "robustness")

    @property
    def clean(self) -> bool:
        return not self.violations and self.failure is None

    def description(self) -> str:
        return self.method.describe(self.sc_accesses, self.runs, self.complete, self.explored)


def model_for(repairs: tuple[Repair, ...] | list[Repair]) -> str:
    return MODEL_WITH_ORDERS if any(r.kind == "order" for r in repairs) else MODEL_WITH_FENCES


def read_site_tables(paths: tuple[Path, ...]) -> tuple[SiteInfo, ...]:
    sites = []
    for path in paths:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        for row in document["sites"]:
            sites.append(SiteInfo(
                id=int(row["id"], 16), module=document["module"], index=row["index"],
                kind=row["kind"], order=row["order"], order_fail=row.get("order_fail", ""),
                frames=tuple(Frame(f["file"], f["line"], f["column"], f["function"])
                             for f in row["frames"])))
    return tuple(sites)


def check_program(program: Program, repairs: tuple[Repair, ...], method: CheckMethod,
                  work_dir: str, sc_accesses: str | None = None) -> CheckOutcome:
    """Build ``program`` with ``repairs`` in ``work_dir`` (a fresh directory) and run it.
    sc_accesses: the model (default: ``ra`` when a repair strengthens an order)."""
    if method.scheduler not in CHECK_METHODS:
        raise UsageError(f"unknown check method {method.scheduler!r} (one of {', '.join(CHECK_METHODS)})")
    model = sc_accesses or model_for(repairs)
    os.makedirs(work_dir, exist_ok=True)
    repairs_path = None
    if repairs:
        repairs_path = os.path.join(work_dir, "repairs.json")
        Path(repairs_path).write_text(json.dumps({"repairs": [r.to_json() for r in repairs]}),
                                      encoding="utf-8")
    executable = os.path.join(work_dir, "program")
    built = build_program(BuildRequest(
        sources=program.sources, output=executable, temp_dir=work_dir,
        compiler_flags=program.compiler_flags, cc=program.cc, repairs=repairs_path,
        site_tables=True,
        module_ids=tuple(program.module_id(s) for s in program.sources)))
    session, explored, complete = _run_checks(executable, program.args, method, model, work_dir)
    failure = None if session.reports else _failure(session, method)
    try:
        sites = read_site_tables(built.site_tables)
    except (OSError, ValueError, KeyError) as exc:
        raise InternalError(f"internal error: unreadable site table ({exc})") from None
    return CheckOutcome(tuple(d.report for d in session.reports), len(session.runs), model, method,
                        sites, failure, complete, explored)


def _failure(session: SessionResult, method: CheckMethod) -> str | None:
    """Why the runs do not show the program robust although nothing was reported: a run that
    crashed, hung (a timeout, or the controlled scheduler's max_steps) or deadlocked; else None."""
    for run in session.runs:
        if run.crashed:
            return f"the program crashed with {run.signal} in run {run.index}"
        if run.timed_out:
            return f"the program timed out after {method.timeout:g} s in run {run.index}"
        if run.reached_bound:
            return f"run {run.index} reached the scheduler's max_steps (a livelock?)"
        if run.deadlocks:
            return f"the program deadlocked in run {run.index}"
    return None


def _run_checks(executable: str, args: tuple[str, ...], method: CheckMethod, model: str,
                work_dir: str) -> tuple[SessionResult, int, bool]:
    """(the session, how many of its runs were explored schedules, whether the exploration was
    complete with nothing found)."""
    def options(sched: str, directory: str) -> RunOptions:
        return RunOptions(runs=method.runs, timeout=method.timeout, sc_accesses=model,
                          work_dir=os.path.join(work_dir, directory), quiet=True,
                          schedule=ScheduleOptions(sched=sched, seed=method.seed,
                                                   schedule_dir=os.path.join(work_dir, "schedules")))
    def cluster() -> Cluster | None:
        return Cluster(method.cluster, executable) if method.cluster else None

    if method.scheduler == "os":
        return run_program(executable, args, options(method.scheduler, "reports")), 0, False
    if method.scheduler == "pct":
        return run_campaign(executable, args, options("pct", "reports"), cluster=cluster()), 0, False
    explored = explore_campaign(executable, args, options("dfs", "explore"),
                                ExploreOptions(max_schedules=method.max_schedules), cluster=cluster())
    found = explored.reports or explored.problems
    complete = bool(explored.exploration and explored.exploration.complete) and not found
    if found or complete or method.scheduler == "explore":
        return explored, len(explored.runs), complete
    sampled = run_campaign(executable, args, options("pct", "reports"), cluster=cluster())
    merged = replace(sampled, runs=explored.runs + sampled.runs)
    return merged, len(explored.runs), False
