"""Renderers: the text printed after the program finished, and the --json document."""

from __future__ import annotations

import json
from typing import Any

from . import __version__
from .reports import DistinctReport, MergedReports, RunResult, suppressed_count, suppression_for
from .runner import SessionResult


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


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
    return lines


def session_suppressed(result: SessionResult) -> int:
    return suppressed_count(r for run in result.runs for r in run.reports)


def summary_line(result: SessionResult) -> str:
    runs = _plural(len(result.runs), "run")
    suppressed = session_suppressed(result)
    tail = f" ({suppressed} suppressed)" if suppressed else ""
    if not result.reports:
        return f"pyrsan: no robustness violation found in {runs}{tail}"
    counts: dict[str, int] = {}
    for report in result.reports:
        counts[report.report.kind] = counts.get(report.report.kind, 0) + 1
    parts = []
    for kind, count in counts.items():
        noun = {"robustness": "robustness violation", "race": "data race"}.get(kind, f"{kind} report")
        parts.append(_plural(count, noun))
    return f"pyrsan: {' and '.join(parts)} in {runs}{tail}"


def render_text(result: SessionResult) -> str:
    """Each distinct report's text once, crash/timeout lines, then the summary line."""
    chunks = []
    for report in result.reports:
        text = report.report.text or _fallback_text(report)
        chunks.append(text if text.endswith("\n") else text + "\n")
    chunks.extend(line + "\n" for line in run_problem_lines(result))
    chunks.append(summary_line(result) + "\n")
    return "".join(chunks)


def _run_entry(run: RunResult, **extra: Any) -> dict[str, Any]:
    return {"run": run.index, **extra}


def json_document(result: SessionResult) -> dict[str, Any]:
    reports = []
    for report in result.reports:
        fields = report.report.public_fields()
        fields["runs_seen"] = report.runs_seen
        reports.append(fields)
    return {
        "verdict": result.verdict,
        "runs": len(result.runs),
        "reports": reports,
        "crashes": [_run_entry(r, signal=r.signal) for r in result.crashes],
        "timeouts": [_run_entry(r, seconds=result.timeout) for r in result.timeouts],
        "suppressed": session_suppressed(result),
        "tool": {"name": "pyrsan", "version": __version__},
    }


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
    if not merged.reports:
        return f"pyrsan: no robustness violation found in {processes}{tail}"
    counts: dict[str, int] = {}
    for report in merged.reports:
        counts[report.report.kind] = counts.get(report.report.kind, 0) + 1
    parts = []
    for kind, count in counts.items():
        noun = {"robustness": "robustness violation", "race": "data race"}.get(kind, f"{kind} report")
        parts.append(_plural(count, noun))
    return f"pyrsan: {' and '.join(parts)} in {processes}{tail}"


def render_merged_text(merged: MergedReports) -> str:
    chunks = []
    for report in merged.reports:
        text = report.report.text or _fallback_text(report)
        chunks.append(text if text.endswith("\n") else text + "\n")
    chunks.append(merged_summary_line(merged) + "\n")
    return "".join(chunks)


def merged_json_document(merged: MergedReports) -> dict[str, Any]:
    reports = []
    for report in merged.reports:
        fields = report.report.public_fields()
        fields["processes_seen"] = report.runs_seen
        reports.append(fields)
    return {
        "verdict": "violations" if merged.reports else "clean",
        "processes": merged.processes,
        "reports": reports,
        "suppressed": merged.suppressed,
        "logs": [str(p) for p in merged.files],
        "tool": {"name": "pyrsan", "version": __version__},
    }


def render_suppressions(merged: MergedReports) -> str:
    """A suppressions file that silences every report of ``merged``."""
    return "".join(suppression_for(r.report) + "\n" for r in merged.reports)
