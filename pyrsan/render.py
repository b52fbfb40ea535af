"""Renderers: the text printed after the program finished, and the --json document."""

from __future__ import annotations

import json
from typing import Any, Sequence

from . import __version__
import shlex

from .reports import (DistinctReport, MergedReports, Report, Reproduction, RunResult, benign_count,
                      benign_shown, suppressed_count, suppression_for)
from .runner import SEEDED_SCHEDS, SessionResult
from .words import plural


def _seconds(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{value:g}"


def _fallback_text(report: DistinctReport) -> str:
    """When the runtime gave no text (it always should): a minimal block from the fields."""
    f = report.report.fields
    access = f.get("access") or {}
    previous = f.get("previous") or {}
    where = f"{access.get('file', '?')}:{access.get('line', '?')}"
    prev = previous.get("description") or f"{previous.get('file', '?')}:{previous.get('line', '?')}"
    return (f"==================\nWARNING: pyrsan: {report.report.kind} violation ({report.report.type})"
            f" at {where}, previous write: {prev}\n==================\n")


def run_problem_lines(result: SessionResult) -> list[str]:
    lines = []
    for run in result.runs:
        if run.crashed:
            lines.append(f"pyrsan: the program crashed with {run.signal} in run {run.index}")
        elif run.timed_out:
            lines.append(f"pyrsan: the program timed out after {_seconds(result.timeout)} s in run {run.index}")
        elif run.reached_bound:
            lines.append(f"pyrsan: the program hung in run {run.index}: the scheduler stopped it at its step "
                         "bound (max_steps; a livelock, or raise max_steps in PYRSAN_OPTIONS)")
        else:
            continue
        if run.reproduction is not None:
            lines.append(reproduce_line(result, run.reproduction))
    return lines


def reproduce_line(result: SessionResult, reproduction: Reproduction) -> str:
    """How to get the same run again: the saved schedule, and the --sched/--seed pair."""
    args = " ".join(shlex.quote(a) for a in result.command_args) or "<sources>"
    parts = []
    if reproduction.schedule_file:
        parts.append(f"pyrsan run --replay {shlex.quote(reproduction.schedule_file)} {args}")
    if reproduction.seed is not None:
        parts.append(f"pyrsan run --sched {reproduction.sched} --seed {reproduction.seed} {args}")
    return "pyrsan: reproduce: " + ("\n  or: ".join(parts) if parts else "(no schedule was recorded)")


def deadlock_blocks(result: SessionResult) -> list[str]:
    """The runtime's text of each deadlocked run (each thread, what it waits for, its stack),
    once per distinct text, with how to reproduce it."""
    blocks: list[str] = []
    seen: set[str] = set()
    for run in result.deadlocked:
        for report in run.deadlocks:
            text = report.text or _deadlock_fallback_text(report)
            key = report.text or repr(report.fields.get("threads"))
            if key in seen:
                continue
            seen.add(key)
            block = text if text.endswith("\n") else text + "\n"
            if run.reproduction is not None:
                block += reproduce_line(result, run.reproduction) + "\n"
            blocks.append(block)
    return blocks


def _deadlock_fallback_text(report: Report) -> str:
    lines = ["==================", "WARNING: pyrsan: deadlock: no thread can run"]
    for thread in report.fields.get("threads") or []:
        lines.append(f"  Thread T{thread.get('thread', '?')} waits for {thread.get('waiting_for', '?')}:")
        for frame in thread.get("stack") or []:
            lines.append(f"    {frame.get('function', '?')} {frame.get('file', '?')}:{frame.get('line', '?')}")
    lines.append("==================")
    return "\n".join(lines) + "\n"


def schedule_line(result: SessionResult) -> str | None:
    """Which strategy and seeds the runs used (a fresh seed must be visible to be reused)."""
    schedule = result.schedule
    if schedule is None or not schedule.controlled or (result.exploration is not None and not result.sampled):
        return None
    if schedule.replay:
        return f"pyrsan: replayed {schedule.replay}"
    if schedule.sched not in SEEDED_SCHEDS:
        return f"pyrsan: sched={schedule.sched}"
    first = schedule.seed_of_run(1)
    last = schedule.seed_of_run(result.sampled or len(result.runs))
    seeds = f"seed {first}" if first == last else f"seeds {first}..{last}"
    depth = f", depth {schedule.pct_depth}" if schedule.sched == "pct" and schedule.pct_depth else ""
    return f"pyrsan: sched={schedule.sched}{depth}, {seeds}"


def exploration_line(result: SessionResult) -> str | None:
    exploration = result.exploration
    if exploration is None:
        return None
    runs = plural(exploration.schedules, "schedule")
    if exploration.complete and result.shard is not None and not result.reports:
        index, count = result.shard
        return (f"pyrsan: shard {index}/{count}: its part of the exploration is complete ({runs}) without a "
                f"report; `pyrsan report` over the {count} shards' --json documents gives the verdict")
    if exploration.complete and result.verdict == "robust":
        benign = benign_count(r for run in result.runs for r in run.reports)
        if benign:   # a benign report is still a non-SC behaviour: no proof of robustness
            return (f"pyrsan: exploration complete: {runs} cover every SC interleaving (up to reordering of "
                    f"independent operations); the only violations are {plural(benign, 'report')} with a "
                    "benign consequence (pyrsan run --all): apart from them, the program "
                    "is robust for this input")
        return (f"pyrsan: exploration complete: {runs} cover every SC interleaving (up to reordering of "
                "independent operations) without a report: the program is robust for this input "
                "(a proof by Thm 3.1 of the RSAN paper: robust iff no SC run has a violation)")
    if exploration.complete:
        return f"pyrsan: exploration complete: {runs} run"
    if exploration.stopped:
        return f"pyrsan: exploration stopped at the first problem after {runs} (--keep-going to go on)"
    remaining = f", {exploration.pending} more queued" if exploration.pending else ""
    if result.sampled:   # the default sampling's exploration of a small program (runner.py)
        limit = "its time limit" if exploration.bound == "time" else f"its bound ({exploration.bound})"
        return (f"pyrsan: explored {runs} after the first run (the default for a small program) and stopped at "
                f"{limit}{remaining}; with the seeded runs, this is not a proof (--explore goes on)")
    if exploration.bound == "stall":
        return (f"pyrsan: exploration incomplete after {runs}{remaining}: a thread ran without reaching an "
                "operation the scheduler sees (waiting for another thread inside an uninstrumented library, "
                "or a long computation) and that run went on under the OS scheduler; so this is not a proof")
    return (f"pyrsan: exploration incomplete: bound {exploration.bound} reached after {runs}{remaining}; "
            "only these were covered, so this is not a proof")


def session_suppressed(result: SessionResult) -> int:
    return suppressed_count(r for run in result.runs for r in run.reports)


def session_benign(result: SessionResult) -> int:
    """Distinct reports with a benign consequence that were not shown (0 with --all)."""
    if benign_shown():
        return 0
    return benign_count(r for run in result.runs for r in run.reports)


def _benign_tail(count: int) -> str:
    if not count:
        return ""
    return (f" ({plural(count, 'report')} with a benign consequence not shown: "
            "pyrsan run --all / pyrsan report --all)")


def summary_line(result: SessionResult) -> str:
    runs = plural(len(result.runs), "run")
    suppressed = session_suppressed(result)
    tail = f" ({suppressed} suppressed)" if suppressed else ""
    tail += _benign_tail(session_benign(result))
    deadlocks = len(result.deadlocked)
    if deadlocks:
        tail += f" ({plural(deadlocks, 'run')} deadlocked)"
    if not result.reports:
        return f"pyrsan: no robustness violation found in {runs}{tail}"
    return f"pyrsan: {_counted(result.reports)} in {runs}{tail}"


def _counted(reports: Sequence[DistinctReport]) -> str:
    """`2 robustness violations and 1 data race`."""
    counts: dict[str, int] = {}
    for report in reports:
        counts[report.report.kind] = counts.get(report.report.kind, 0) + 1
    parts = []
    for kind, count in counts.items():
        noun = {"robustness": "robustness violation", "race": "data race"}.get(kind, f"{kind} report")
        parts.append(plural(count, noun))
    return " and ".join(parts)


def render_text(result: SessionResult) -> str:
    """Each distinct report's text once (with how to reproduce it under a controlled
    scheduler), deadlocks, crash/timeout lines, the schedule and exploration lines, then the
    summary line."""
    chunks = []
    for report in result.reports:
        text = report.merged_text() or _fallback_text(report)
        chunks.append(text if text.endswith("\n") else text + "\n")
        if report.reproduction is not None:
            chunks.append(reproduce_line(result, report.reproduction) + "\n")
    chunks.extend(deadlock_blocks(result))
    chunks.extend(line + "\n" for line in run_problem_lines(result))
    for line in (schedule_line(result), exploration_line(result)):
        if line:
            chunks.append(line + "\n")
    chunks.append(summary_line(result) + "\n")
    return "".join(chunks)


def _run_entry(run: RunResult, **extra: Any) -> dict[str, Any]:
    return {"run": run.index, **extra}


def _reproduce(run_or_report: RunResult | DistinctReport) -> dict[str, Any]:
    reproduction = run_or_report.reproduction
    return {"reproduce": reproduction.public_fields()} if reproduction is not None else {}


def json_document(result: SessionResult) -> dict[str, Any]:
    reports = []
    for report in result.reports:
        fields = report.public_fields()
        fields["runs_seen"] = report.runs_seen
        fields.update(_reproduce(report))
        reports.append(fields)
    document = {
        "verdict": result.verdict,
        "runs": len(result.runs),
        "reports": reports,
        "crashes": [_run_entry(r, signal=r.signal, **_reproduce(r)) for r in result.crashes],
        "timeouts": [_run_entry(r, seconds=result.timeout) for r in result.timeouts] +
                    [_run_entry(r, bound="max_steps", **_reproduce(r)) for r in result.bounded],
        "deadlocks": [_run_entry(r, threads=d.fields.get("threads", []), **_reproduce(r))
                      for r in result.deadlocked for d in r.deadlocks[:1]],
        "suppressed": session_suppressed(result),
        "benign": session_benign(result),
        "tool": {"name": "pyrsan", "version": __version__},
    }
    schedule = result.schedule
    if schedule is not None and schedule.controlled:
        seeded = schedule.sched in SEEDED_SCHEDS and not schedule.replay
        document["schedule"] = {"sched": schedule.sched, "seed": schedule.seed if seeded else None,
                                "replay": schedule.replay}
    if result.shard is not None:
        document["shard"] = {"index": result.shard[0], "count": result.shard[1]}
    if result.exploration is not None:
        exploration = result.exploration
        document["exploration"] = {"complete": exploration.complete, "schedules": exploration.schedules,
                                   "bound": exploration.bound, "stopped_at_report": exploration.stopped,
                                   "sleep_blocked": exploration.sleep_blocked,
                                   "diverged": exploration.diverged, "pending": exploration.pending,
                                   "closure_states": exploration.closure_states,
                                   "closure_reruns": exploration.closure_reruns}
    return document


def error_document(message: str) -> dict[str, Any]:
    """--json when pyrsan itself failed before or while running the program."""
    return {
        "verdict": "error",
        "runs": 0,
        "reports": [],
        "crashes": [],
        "timeouts": [],
        "error": message,
        "tool": {"name": "pyrsan", "version": __version__},
    }


def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


# --- `pyrsan report`: the merged logs of many processes -----------------------------------


def merged_summary_line(merged: MergedReports) -> str:
    processes = f"{merged.processes} process{'' if merged.processes == 1 else 'es'}"
    tail = f" ({merged.suppressed} suppressed)" if merged.suppressed else ""
    tail += _benign_tail(merged.benign)
    if merged.missing_shards:
        tail += f" (shards missing: {', '.join(map(str, merged.missing_shards))}: not a proof)"
    if not merged.reports and merged.verdict == "robust":
        return f"pyrsan: robust: every document is a complete exploration without a report{tail}"
    if not merged.reports and merged.verdict == "error":
        return f"pyrsan: no robustness violation found in {processes}, but a run failed{tail}"
    if not merged.reports:
        return f"pyrsan: no robustness violation found in {processes}{tail}"
    return f"pyrsan: {_counted(merged.reports)} in {processes}{tail}"


def render_merged_text(merged: MergedReports) -> str:
    chunks = []
    for report in merged.reports:
        text = report.merged_text() or _fallback_text(report)
        chunks.append(text if text.endswith("\n") else text + "\n")
    chunks.append(merged_summary_line(merged) + "\n")
    return "".join(chunks)


def merged_json_document(merged: MergedReports) -> dict[str, Any]:
    reports = []
    for report in merged.reports:
        fields = report.public_fields()
        fields["processes_seen"] = report.runs_seen
        reports.append(fields)
    return {
        "verdict": merged.verdict,
        "processes": merged.processes,
        "reports": reports,
        "suppressed": merged.suppressed,
        "benign": merged.benign,
        "logs": [str(p) for p in merged.files],
        "tool": {"name": "pyrsan", "version": __version__},
    }


def render_suppressions(merged: MergedReports) -> str:
    """A suppressions file that silences every report of ``merged``."""
    return "".join(suppression_for(r.report) + "\n" for r in merged.reports)
