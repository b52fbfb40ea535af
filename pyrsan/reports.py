"""The report model: the runtime's JSON lines (docs/interfaces.md §2) as frozen dataclasses,
and their aggregation over the runs of one ``pyrsan run``.

A report keeps every field the runtime wrote (``fields``), so nothing the runtime adds later
is lost on the way to ``--json``; the typed attributes are what the driver itself needs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

#: Fields only the runtime needs: dropped from the --json document.
RUNTIME_ONLY_FIELDS = ("text", "pid")


@dataclass(frozen=True)
class Report:
    key: str
    kind: str                  # "robustness" (later "race")
    type: str                  # "read" / "write"
    text: str                  # the runtime's own rendering, printed as is
    fields: Mapping[str, Any] = field(compare=False, hash=False, repr=False)

    @staticmethod
    def from_json(obj: Any) -> "Report":
        """A report from one decoded JSON line, as the runtime writes it (docs/interfaces.md);
        ValueError when it is not a report."""
        if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
            raise ValueError("not a report object")
        data = dict(obj)
        key = data.get("key")
        if not isinstance(key, str) or not key:   # a deadlock line has none
            access = data.get("access") or {}
            previous = data.get("previous") or {}
            key = f"{access.get('site', '?')}/{previous.get('site', '?')}/{data.get('type', '?')}"
            data["key"] = key
        return Report(
            key=key,
            kind=data["kind"],
            type=str(data.get("type", "")),
            text=str(data.get("text") or ""),
            fields=MappingProxyType(data),
        )

    def public_fields(self) -> dict[str, Any]:
        """The report as --json shows it: the runtime's fields without text and pid."""
        return {k: v for k, v in self.fields.items() if k not in RUNTIME_ONLY_FIELDS}

    def __reduce__(self) -> tuple[Any, ...]:
        # a read-only mapping does not pickle; reports cross processes (cluster.py)
        return (_report_of, (self.key, self.kind, self.type, self.text, dict(self.fields)))

    @property
    def consequence(self) -> str:
        """docs/reports.md §2: "value" (the stale value can flow onward) or a benign class
        ("failed-cas": only a CAS failure that feeds a retry can read it; "write-only": a store to
        a static global that no code reads; "library": a library's own access)."""
        value = self.fields.get("consequence")
        return value if isinstance(value, str) and value else "value"

    @property
    def benign(self) -> bool:
        return self.kind == "robustness" and self.consequence != "value"

    @property
    def group(self) -> str:
        """Reports of one access (source and inline stack) and type: one report listing the
        stale writes of all."""
        value = self.fields.get("group")
        return value if isinstance(value, str) and value else self.key


def _report_of(key: str, kind: str, type: str, text: str, fields: dict[str, Any]) -> Report:
    return Report(key, kind, type, text, MappingProxyType(fields))


def read_report_file(path: str | os.PathLike) -> list[Report]:
    """Reports of one JSON-lines file. A line that does not decode (a truncated last line,
    when the program was killed while writing) is skipped."""
    reports = []
    with open(path, "r", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                reports.append(Report.from_json(json.loads(line)))
            except ValueError:
                continue
    return reports


def read_report_dir(directory: str | os.PathLike) -> list[Report]:
    """Reports of every file one run wrote (child processes write their own, ``%p``)."""
    reports: list[Report] = []
    for path in sorted(Path(directory).glob("reports*.jsonl")):
        reports.extend(read_report_file(path))
    return reports


@dataclass(frozen=True)
class Reproduction:
    """How to run a controlled schedule again (docs/scheduling.md, "Driver side")."""

    sched: str
    seed: int | None
    schedule_file: str | None        # the saved decisions of the run (pyrsan run --replay FILE)

    def public_fields(self) -> dict[str, Any]:
        return {"sched": self.sched, "seed": self.seed, "schedule_file": self.schedule_file}


@dataclass(frozen=True)
class RunResult:
    """One execution of the instrumented program."""

    index: int                       # 1-based
    returncode: int | None           # None when killed on timeout
    signal: str | None               # "SIGSEGV" when killed by a signal (not by us)
    timed_out: bool
    reports: tuple[Report, ...]
    reached_bound: bool = False      # the controlled scheduler's max_steps (a livelock guard)
    reproduction: Reproduction | None = None

    @property
    def crashed(self) -> bool:
        return self.signal is not None and not self.timed_out

    @property
    def hung(self) -> bool:
        """Killed on timeout, or stopped by the scheduler's step bound: both are hangs."""
        return self.timed_out or self.reached_bound

    @property
    def deadlocks(self) -> tuple[Report, ...]:
        return tuple(r for r in self.reports if r.kind == DEADLOCK_KIND)

    @property
    def reported(self) -> bool:
        """Whether the run made a report that was not suppressed (deadlocks aside) and that
        counts (a benign one only with report_benign=1)."""
        shown = benign_shown()
        return any(r.kind not in NOT_VIOLATION_KINDS and (shown or not r.benign) for r in self.reports)


@dataclass(frozen=True)
class DistinctReport:
    report: Report                  # the first occurrence
    runs_seen: int                  # in how many runs its group occurred
    reproduction: Reproduction | None = None   # of the run of the first occurrence
    others: tuple[Report, ...] = ()  # the same access and type with other stale writes

    def public_fields(self) -> dict[str, Any]:
        """The first report's fields, with the stale writes of the whole group (each once)."""
        fields = self.report.public_fields()
        if self.others:
            writes = list(fields.get("stale_writes") or [])
            seen = {_write_id(w) for w in writes}
            for other in self.others:
                for w in list(other.fields.get("stale_writes") or []) + [other.fields.get("previous") or {}]:
                    if isinstance(w, dict) and w and _write_id(w) not in seen:
                        seen.add(_write_id(w))
                        writes.append(w)
            fields["stale_writes"] = writes
            fields["merged_keys"] = [self.report.key] + [o.key for o in self.others]
        return fields

    def merged_text(self) -> str:
        """The first report's text with a line naming the stale writes of the others."""
        text = self.report.text
        if not self.others or not text:
            return text
        names = []
        for other in self.others:
            previous = other.fields.get("previous") or {}
            desc = previous.get("description") or "?"
            where = previous.get("file")
            line = f"{desc}" + (f" ({os.path.basename(str(where))}:{previous.get('line')})" if where else "")
            if line not in names:
                names.append(line)
        extra = "  Also reported with other stale writes (merged): " + "; ".join(names) + "\n"
        marker = "SUMMARY: "
        at = text.rfind(marker)
        return text[:at] + extra + text[at:] if at >= 0 else text + extra


def _write_id(w: dict) -> tuple:
    return (w.get("site") or w.get("description"), w.get("timestamp"), w.get("initial"))


#: The runtime's line for a report a suppressions file silenced (docs/interfaces.md §2):
#: counted, never shown as a report.
SUPPRESSED_KIND = "suppressed"
#: The runtime's line for a deadlock under the controlled scheduler (docs/scheduling.md):
#: rendered, but not a violation (exit status 3 when alone).
DEADLOCK_KIND = "deadlock"
NOT_VIOLATION_KINDS = frozenset({SUPPRESSED_KIND, DEADLOCK_KIND})


def benign_shown() -> bool:
    """Whether reports with a benign consequence count: the runtime option report_benign=1
    (`--all`) in the PYRSAN_OPTIONS the runs use (the last value of the name wins)."""
    value = "0"
    for chunk in os.environ.get("PYRSAN_OPTIONS", "").replace(":", " ").split():
        name, _, v = chunk.partition("=")
        if name == "report_benign":
            value = v
    return value in ("1", "true")


def _group(reports: Iterable[tuple[Report, Any]], include_benign: bool
           ) -> tuple[list[str], dict[str, list[Report]], dict[str, set], dict[str, Any]]:
    order: list[str] = []
    members: dict[str, list[Report]] = {}
    seen_in: dict[str, set] = {}
    first_origin: dict[str, Any] = {}
    keys: set[tuple[str, str]] = set()
    for report, origin in reports:
        if report.kind in NOT_VIOLATION_KINDS or (report.benign and not include_benign):
            continue
        group = report.group
        if group not in members:
            order.append(group)
            members[group] = []
            first_origin[group] = origin
        if (group, report.key) not in keys:
            keys.add((group, report.key))
            members[group].append(report)
        seen_in.setdefault(group, set()).add(origin)
    return order, members, seen_in, first_origin


def deduplicate(runs: Iterable[RunResult], include_benign: bool | None = None) -> tuple[DistinctReport, ...]:
    """Distinct reports, one per group (the same access and type; other stale writes are
    merged into it), in order of first appearance, with the runs they occurred in
    (suppressed ones, deadlocks and, unless report_benign=1, benign ones left out)."""
    if include_benign is None:
        include_benign = benign_shown()
    runs = list(runs)
    pairs = [(r, run.index) for run in runs for r in run.reports]
    order, members, seen_in, first = _group(pairs, include_benign)
    reproduction = {run.index: run.reproduction for run in runs}
    return tuple(DistinctReport(members[g][0], len(seen_in[g]), reproduction.get(first[g]),
                                tuple(members[g][1:])) for g in order)


def benign_count(reports: Iterable[Report]) -> int:
    """Distinct benign reports (by group) among reports."""
    return len({r.group for r in reports if r.kind not in NOT_VIOLATION_KINDS and r.benign})


def suppressed_count(reports: Iterable[Report]) -> int:
    """Distinct reports (by key) that a suppression silenced."""
    return len({r.key for r in reports if r.kind == SUPPRESSED_KIND})


# --- merging the JSON logs of many processes (`pyrsan report`) ---------------------------

#: What a directory given to `pyrsan report` contributes.
LOG_PATTERNS = ("*.jsonl", "*.json")


@dataclass(frozen=True)
class RunDocument:
    """What `pyrsan report` keeps of a `pyrsan run --json` document (a shard's, typically)."""

    path: Path
    verdict: str
    shard: tuple[int, int] | None   # (K, N)
    complete: bool                  # its exploration (or its part of one) completed


@dataclass(frozen=True)
class MergedReports:
    """The distinct reports of many processes' JSON lines (``runs_seen``: in how many
    processes, i.e. distinct (file, pid) pairs, a group occurred), and of `pyrsan run --json`
    documents (one process each)."""

    reports: tuple[DistinctReport, ...]
    suppressed: int                 # distinct suppressed reports
    processes: int                  # distinct (file, pid) pairs that wrote a line
    files: tuple[Path, ...]
    benign: int = 0                 # distinct reports with a benign consequence not shown
    documents: tuple[RunDocument, ...] = ()

    @property
    def missing_shards(self) -> tuple[int, ...]:
        """Shards of the split the documents belong to that are not among them."""
        shards = {d.shard for d in self.documents if d.shard is not None}
        counts = {count for _, count in shards}
        if len(counts) != 1:
            return ()
        count = counts.pop()
        return tuple(k for k in range(1, count + 1) if (k, count) not in shards)

    @property
    def verdict(self) -> str:
        """violations; error when a run failed; robust only when every document is a proof,
        or the documents are all N shards of one split, each complete and clean."""
        if self.reports:
            return "violations"
        documents = self.documents
        if any(d.verdict == "error" for d in documents):
            return "error"
        if not documents or len(documents) != len(self.files):
            return "clean"
        sharded = [d for d in documents if d.shard is not None]
        if not sharded:
            return "robust" if all(d.verdict == "robust" for d in documents) else "clean"
        counts = {d.shard[1] for d in sharded if d.shard is not None}
        whole = len(sharded) == len(documents) and len(counts) == 1 and not self.missing_shards
        return "robust" if whole and all(d.complete for d in documents) else "clean"


def find_log_files(paths: Iterable[str]) -> list[Path]:
    """Files named on the command line, the ``*.jsonl``/``*.json`` files of directories (not
    recursive), and glob patterns; ValueError naming a path that matched nothing."""
    import glob

    found: list[Path] = []
    for spec in paths:
        if os.path.isdir(spec):
            matches = sorted({p for pattern in LOG_PATTERNS for p in Path(spec).glob(pattern) if p.is_file()})
        elif os.path.isfile(spec):
            matches = [Path(spec)]
        else:
            matches = sorted(Path(p) for p in glob.glob(spec) if os.path.isfile(p))
        if not matches:
            raise ValueError(spec)
        found.extend(m for m in matches if m not in found)
    return found


def merge_logs(files: Iterable[Path], include_benign: bool = False) -> MergedReports:
    """One deduplicated set of reports from JSON-lines files (lines that are not reports,
    e.g. a --json document or a truncated line, are skipped); benign ones only counted unless
    include_benign."""
    files = tuple(files)
    pairs: list[tuple[Report, Any]] = []
    processes: set[tuple[int, Any]] = set()
    suppressed: set[str] = set()
    documents: list[RunDocument] = []
    for index, path in enumerate(files):
        document = read_run_document(path)
        if document is not None:
            documents.append(document[0])
            processes.add((index, None))
        for report in document[1] if document is not None else read_report_file(path):
            process = (index, report.fields.get("pid"))
            processes.add(process)
            if report.kind == SUPPRESSED_KIND:
                suppressed.add(report.key)
            pairs.append((report, process))
    order, members, seen_in, _ = _group(pairs, include_benign)
    reports = tuple(DistinctReport(members[g][0], len(seen_in[g]), None, tuple(members[g][1:])) for g in order)
    benign = 0 if include_benign else benign_count(r for r, _ in pairs)
    return MergedReports(reports, len(suppressed), len(processes), files, benign, tuple(documents))


def read_run_document(path: Path) -> tuple[RunDocument, list[Report]] | None:
    """A `pyrsan run --json` document and its reports; None when ``path`` is not one (a
    JSON-lines log)."""
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            head = handle.read(1)
            if head != "{":
                return None
            obj = json.loads(head + handle.read())
    except ValueError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("verdict"), str) or "reports" not in obj:
        return None
    shard = obj.get("shard")
    exploration = obj.get("exploration")
    document = RunDocument(
        path=path,
        verdict=obj["verdict"],
        shard=(int(shard["index"]), int(shard["count"])) if isinstance(shard, dict) else None,
        complete=bool(isinstance(exploration, dict) and exploration.get("complete")),
    )
    reports = []
    for item in obj.get("reports") or []:
        try:
            reports.append(Report.from_json(item))
        except ValueError:
            continue
    return document, reports


def suppression_for(report: Report) -> str:
    """A suppressions-file line that silences ``report``: its access's ``file:line`` (file by
    its base name, anchored at the line number), after a comment naming the report."""
    access = report.fields.get("access") or {}
    kind = "race" if report.kind == "race" else "robustness"
    file = os.path.basename(str(access.get("file") or ""))
    line = access.get("line")
    function = access.get("function") or "?"
    comment = f"# {report.kind} ({report.type}) in {function} at {file or '?'}:{line if line else '?'}"
    if file and isinstance(line, int) and line > 0:
        return f"{comment}\n{kind}:/{file}:{line}$"
    return f"{comment}\n{kind}:^{function}$"
