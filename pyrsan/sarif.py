"""SARIF 2.1.0 rendering of distinct reports, for code-scanning dashboards.

One run, tool ``pyrsan`` with one rule per kind of finding; each result's location is the
access, its related locations are the write it may still see (``previous``) and the write SC
forces it to see (``forced``); the message carries the fix suggestion. A report with an
``explanation`` (explain.py) also gets ``codeFlows``: one ``threadFlow`` per thread of the
execution that shows it (SARIF 2.1.0 §3.36-3.38), its events in execution order.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import quote

from . import __version__
from .reports import DistinctReport

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "SRCROOT"

#: (rule id, name, short description, full description)
RULES = (
    ("RSAN-robustness-read", "RobustnessViolationRead",
     "Atomic read that may see a value sequential consistency forbids",
     "Under the C11 memory model (RC20) this atomic load or read check may read a write that is "
     "stale under sequential consistency: the program is not robust against C11."),
    ("RSAN-robustness-write", "RobustnessViolationWrite",
     "Atomic write that may be ordered in a way sequential consistency forbids",
     "Under the C11 memory model (RC20) this atomic store or read-modify-write may be ordered "
     "before writes that sequential consistency places before it: the program is not robust."),
    ("RSAN-data-race", "DataRace",
     "Data race on non-atomic memory",
     "Two conflicting accesses, at least one a write and not both atomic, unordered by happens-before."),
)
_RULE_INDEX = {rule[0]: index for index, rule in enumerate(RULES)}


def rule_id(kind: str, type_: str) -> str:
    if kind == "race":
        return "RSAN-data-race"
    return "RSAN-robustness-write" if type_ == "write" else "RSAN-robustness-read"


def _uri(path: str, source_root: str | None) -> dict[str, Any]:
    """artifactLocation: relative to source_root (uriBaseId SRCROOT) when inside it, else a
    file URI."""
    absolute = os.path.abspath(path)
    if source_root is not None:
        root = os.path.abspath(source_root)
        if absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep):
            return {"uri": quote(os.path.relpath(absolute, root).replace(os.sep, "/")), "uriBaseId": SRCROOT}
    return {"uri": Path(absolute).as_uri()}


def _physical(side: dict[str, Any], source_root: str | None) -> dict[str, Any] | None:
    file = side.get("file")
    if not file:
        return None
    location: dict[str, Any] = {"artifactLocation": _uri(str(file), source_root)}
    line = side.get("line")
    if isinstance(line, int) and line >= 1:
        region: dict[str, Any] = {"startLine": line}
        column = side.get("column")
        if isinstance(column, int) and column >= 1:
            region["startColumn"] = column
        location["region"] = region
    return location


def _location(side: dict[str, Any], source_root: str | None, message: str | None = None,
              id_: int | None = None) -> dict[str, Any] | None:
    physical = _physical(side, source_root)
    if physical is None:
        return None
    location: dict[str, Any] = {"physicalLocation": physical}
    if id_ is not None:
        location["id"] = id_
    if message:
        location["message"] = {"text": message}
    if side.get("function"):
        location["logicalLocations"] = [{"name": str(side["function"]), "kind": "function"}]
    return location


def _describe(side: dict[str, Any]) -> str:
    return str(side.get("description") or f"{side.get('operation', 'write')} at "
               f"{os.path.basename(str(side.get('file', '?')))}:{side.get('line', '?')}")


def _result(distinct: DistinctReport, source_root: str | None) -> dict[str, Any]:
    report = distinct.report
    f = distinct.public_fields()        # the group's stale writes merged (reports.py)
    access = f.get("access") or {}
    previous = f.get("previous") or {}
    forced = f.get("forced") or {}
    rid = rule_id(report.kind, report.type)
    location_name = (f.get("location") or {}).get("name") or (f.get("location") or {}).get("address", "?")
    if report.kind == "race":
        text = f"Data race on {location_name}: {access.get('operation', 'access')} in {access.get('function', '?')}."
    else:
        what = "may read a stale value of" if report.type != "write" else "may be ordered out of SC order on"
        text = (f"Robustness violation ({report.type}): atomic {access.get('operation', 'access')} "
                f"({access.get('order', '?')}) by thread {access.get('thread', '?')} {what} "
                f"{location_name}; previous: {_describe(previous)}; SC forces: {_describe(forced)}.")
    if f.get("suggestion"):
        text += f" Suggestion: {f['suggestion']}"
    if report.kind != "race":
        text += f" Consequence: {report.consequence}."
    result: dict[str, Any] = {
        "ruleId": rid,
        "ruleIndex": _RULE_INDEX[rid],
        "level": "note" if report.benign else "warning",
        "message": {"text": text},
        "partialFingerprints": {"pyrsanKey/v1": report.key},
        "properties": {"kind": report.kind, "type": report.type, "model": f.get("model"),
                       "timestamps": f.get("timestamps"), "suggestion": f.get("suggestion"),
                       "processesSeen": distinct.runs_seen, "consequence": f.get("consequence"),
                       "staleWrites": f.get("stale_writes")},
    }
    main = _location(access, source_root)
    result["locations"] = [main] if main else []
    related = []
    for id_, side, label in ((1, previous, "write it may still see or overwrite"),
                             (2, forced, "write SC forces it to see")):
        location = _location(side, source_root, f"{label}: {_describe(side)}", id_)
        if location:
            related.append(location)
    if related:
        result["relatedLocations"] = related
    flows = code_flows(f.get("explanation"), source_root)
    if flows:
        result["codeFlows"] = flows
    return result


def code_flows(explanation: Any, source_root: str | None) -> list[dict[str, Any]]:
    """One codeFlow: a threadFlow per thread, its events as threadFlowLocations. executionOrder
    numbers the events across threads in the order the run performed them (§3.38.11), so a
    viewer can replay the interleaving; the weak outcome is the flow's message."""
    if not isinstance(explanation, dict) or explanation.get("error") or not explanation.get("events"):
        return []
    flows: dict[Any, list[dict[str, Any]]] = {}
    roles = {"access": "the access", "forced": "the write SC forces", "stale": "the write it may still see",
             "previous": "the earlier racing access"}
    cycle = set(explanation.get("cycle") or [])
    for order, event in enumerate(explanation["events"], 1):
        physical = _physical(event, source_root)
        if physical is None:
            continue
        text = str(event.get("label", ""))
        note = roles.get(str(event.get("role", "")))
        if note:
            text += f" ({note})"
        elif event.get("id") in cycle:
            text += " (on the cycle)"
        location: dict[str, Any] = {"physicalLocation": physical, "message": {"text": text}}
        if event.get("function"):
            location["logicalLocations"] = [{"name": str(event["function"]), "kind": "function"}]
        step: dict[str, Any] = {"location": location, "executionOrder": order,
                                "importance": "essential" if note or event.get("id") in cycle else "important"}
        flows.setdefault(event.get("tid"), []).append(step)
    thread_flows = [{"id": f"T{tid}", "message": {"text": f"thread T{tid}"}, "locations": steps}
                    for tid, steps in flows.items() if tid is not None]
    if not thread_flows:
        return []
    flow: dict[str, Any] = {"message": {"text": str(explanation.get("outcome", ""))}, "threadFlows": thread_flows}
    if explanation.get("cycle_text"):
        flow["properties"] = {"cycle": explanation["cycle_text"]}
    return [flow]


def sarif_document(reports: Iterable[DistinctReport], source_root: str | None = None) -> dict[str, Any]:
    run: dict[str, Any] = {
        "tool": {"driver": {
            "name": "pyrsan",
            "version": __version__,
            "rules": [{
                "id": rid, "name": name, "shortDescription": {"text": short},
                "fullDescription": {"text": full}, "defaultConfiguration": {"level": "warning"},
            } for rid, name, short, full in RULES],
        }},
        "results": [_result(r, source_root) for r in reports],
        "columnKind": "unicodeCodePoints",
    }
    if source_root is not None:
        root_uri = Path(os.path.abspath(source_root)).as_uri().rstrip("/") + "/"
        run["originalUriBaseIds"] = {SRCROOT: {"uri": root_uri}}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
