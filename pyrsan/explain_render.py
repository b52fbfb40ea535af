"""Rendering an explanation (explain.py): the terminal timeline and the execution graph as
Graphviz ``dot`` (and ``svg`` through the ``dot`` program, Debian package ``graphviz``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any, Mapping, Sequence

from .errors import UsageError

COLUMN = 34
#: Edge styles: po grey, rf green, mo orange, fr red dashed, sc purple, hb blue (RSAN paper Fig. 1).
EDGE_STYLE = {
    "po": 'color="gray50"',
    "spawn": 'color="gray50", style="dashed"',
    "join": 'color="gray50", style="dashed"',
    "rf": 'color="darkgreen", fontcolor="darkgreen"',
    "mo": 'color="darkorange", fontcolor="darkorange"',
    "fr": 'color="red3", fontcolor="red3", style="dashed"',
    "sc": 'color="purple", fontcolor="purple", style="dotted"',
    "hb": 'color="blue", fontcolor="blue", style="bold"',
    "race": 'color="red", fontcolor="red", style="dashed", dir="both"',
}


def _where(event: Mapping[str, Any]) -> str:
    if not event.get("file"):
        return ""
    return f"{os.path.basename(str(event['file']))}:{event.get('line', '?')}"


def render_timeline(explanation: Mapping[str, Any], title: str = "") -> str:
    """One column per thread involved, the events in execution order, then the weak outcome
    and (robustness) the cycle."""
    if explanation.get("error"):
        return f"{title}\n  (no explanation: {explanation['error']})\n" if title else \
            f"  (no explanation: {explanation['error']})\n"
    threads = list(explanation.get("threads") or [])
    lines = [title] if title else []
    has_init = any(e.get("tid") is None for e in explanation.get("events", []))
    columns = (["init"] if has_init else []) + [f"T{t}" for t in threads]
    lines.append("  " + "".join(c.ljust(COLUMN) for c in columns).rstrip())
    lines.append("  " + "".join(("-" * (COLUMN - 2)).ljust(COLUMN) for _ in columns).rstrip())
    cycle = set(explanation.get("cycle") or [])
    marks = {"access": ">>", "forced": "!!", "stale": "..", "previous": ">>"}
    for event in explanation.get("events", []):
        tid = event.get("tid")
        index = 0 if tid is None else (threads.index(tid) + (1 if has_init else 0)) if tid in threads else None
        if index is None:
            continue
        mark = marks.get(event.get("role", ""), "* " if event["id"] in cycle else "  ")
        where = _where(event)
        cell = f"{mark}{event['label']}" + (f" {where}" if where else "")
        if event.get("pending"):
            cell += " (next)"
        lines.append("  " + " " * (COLUMN * index) + cell)
    lines.append("")
    width = max(60, min(110, shutil.get_terminal_size((100, 20)).columns - 4))
    lines += ["  " + row for row in textwrap.wrap(str(explanation.get("outcome", "")), width, break_on_hyphens=False)]
    if explanation.get("cycle_text"):
        lines.append("  cycle (po ∪ rf ∪ mo ∪ fr, impossible under SC):")
        lines += ["    " + row for row in textwrap.wrap(str(explanation["cycle_text"]), width - 2,
                                                     break_on_hyphens=False)]
    lines.append("  legend: >> the access   !! the write SC forces   .. the write it may still see   * on the cycle"
                 if explanation.get("kind") == "robustness" else "  legend: >> the two racing accesses")
    return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(explanation: Mapping[str, Any], title: str = "") -> str:
    """The execution graph: one cluster per thread, po / rf / mo / fr / sc / hb edges, the
    cycle (or the race) in bold red, nodes labelled with the event and its source line."""
    events = [e for e in explanation.get("events", [])]
    cycle_nodes = set(explanation.get("cycle") or [])
    out = ["digraph execution {", "  rankdir=TB; newrank=true;",
           '  node [shape=box, style="rounded,filled", fillcolor="white", fontname="Helvetica", fontsize=11];',
           '  edge [fontname="Helvetica", fontsize=10];']
    if title:
        out.append(f"  labelloc=t; label={_quote(title)};")
    by_thread: dict[Any, list[Mapping[str, Any]]] = {}
    for e in events:
        by_thread.setdefault(e.get("tid"), []).append(e)
    for tid, items in by_thread.items():
        name = "init" if tid is None else f"T{tid}"
        out.append(f"  subgraph cluster_{name} {{ label={_quote(name)}; color=gray70;")
        for e in items:
            where = _where(e)
            label = e["label"] + (f"\\n{where}" if where else "")
            fill = {"access": "lightyellow", "forced": "mistyrose", "stale": "honeydew",
                    "previous": "lightyellow"}.get(e.get("role", ""), "white")
            pen = ', color="red", penwidth=2' if e["id"] in cycle_nodes or e.get("role") in ("access", "previous") \
                else ""
            label_text = label.replace("\\n", "\n")
            out.append(f"    n{_node(e['id'])} [label={_quote(label_text).replace(chr(10), chr(92) + 'n')}, "
                       f"fillcolor={fill}{pen}];")
        out.append("  }")
    ids = {e["id"] for e in events}
    for edge in explanation.get("edges", []):
        if edge["from"] not in ids or edge["to"] not in ids:
            continue
        style = EDGE_STYLE.get(edge["kind"], "")
        extra = ', penwidth=2.5, color="red"' if edge.get("cycle") else ""
        if edge.get("weak"):
            extra += f', style="dashed", label="{edge["kind"]} (weak)"'
            out.append(f"  n{_node(edge['from'])} -> n{_node(edge['to'])} [{style}{extra}];")
            continue
        constraint = "" if edge["kind"] in ("po", "spawn", "join") else ", constraint=false"
        out.append(f"  n{_node(edge['from'])} -> n{_node(edge['to'])} "
                   f"[label={_quote(edge['kind'])}, {style}{extra}{constraint}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _node(identifier: int) -> str:
    return f"m{-identifier}" if identifier < 0 else str(identifier)


def dot_program() -> str | None:
    return shutil.which("dot")


def write_graph(explanation: Mapping[str, Any], directory: str, stem: str, title: str = "") -> list[Path]:
    """Writes DIR/STEM.dot and, when Graphviz's dot is installed, DIR/STEM.svg."""
    target = Path(directory)
    try:
        target.mkdir(parents=True, exist_ok=True)
        dot_path = target / f"{stem}.dot"
        dot_path.write_text(render_dot(explanation, title), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the graph into {directory}: {exc.strerror or exc}") from None
    written = [dot_path]
    dot = dot_program()
    if dot is None:
        return written
    svg_path = target / f"{stem}.svg"
    proc = subprocess.run([dot, "-Tsvg", "-o", str(svg_path), str(dot_path)], capture_output=True, text=True)
    if proc.returncode != 0:
        first = proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else proc.returncode
        raise UsageError(f"dot failed on {dot_path}: {first}")
    written.append(svg_path)
    return written


GRAPHVIZ_MISSING = ("pyrsan: Graphviz's dot is not installed (Debian: apt-get install graphviz); "
                    "wrote the .dot files only")


def _title(index: int, fields: Mapping[str, Any]) -> str:
    access = fields.get("access") or {}
    where = f"{os.path.basename(str(access.get('file') or '?'))}:{access.get('line', '?')}"
    what = "data race" if fields.get("kind") == "race" else f"robustness violation ({fields.get('type', '?')})"
    return f"pyrsan explain #{index}: {what} at {where}  [{fields.get('key', '?')}]"


def render_explanations(reports: Sequence[Mapping[str, Any]], numbers: list[int] | None = None) -> str:
    """The timelines of reports (their fields, with an ``explanation``), numbered from 1 (or
    by ``numbers``)."""
    blocks = []
    for index, fields in zip(numbers or range(1, len(reports) + 1), reports):
        explanation = fields.get("explanation") or {"error": "this report carries no explanation "
                                                             "(run with --explain or explain_path)"}
        blocks.append(render_timeline(explanation, _title(index, fields)))
    return "\n".join(blocks)


def write_graphs(reports: Sequence[Mapping[str, Any]], directory: str,
                 numbers: list[int] | None = None) -> tuple[list[Path], bool]:
    """report-N.dot (and .svg) per report with an explanation; (paths, dot was found)."""
    written: list[Path] = []
    for index, fields in zip(numbers or range(1, len(reports) + 1), reports):
        explanation = fields.get("explanation")
        if not explanation or explanation.get("error"):
            continue
        written += write_graph(explanation, directory, f"report-{index}", _title(index, fields))
    return written, dot_program() is not None
