"""Repairs of `pyrsan fix` applied to the IR before instrumentation: a
`fence seq_cst` inserted before or after an atomic instruction, or an instruction's memory
order strengthened.

An atomic instruction is named by its site in the unrepaired module (`index`: the site index
rewrite_atomics gives it, so the site id `id_prefix | index` of a report) or by its
source position (every atomic instruction whose primary frame is at that file:line[:column]).
Inserted fences must not renumber the program's own sites, or the driver could not match the
reports of a repaired build to those of the original: `insert_repairs` leaves a placeholder
line that no pass reads, and `number_repair_fences`, run after rewrite_atomics, turns each
into an `__rsan_fence` call with a site numbered after every atomic instruction.

The repairs file (`python -m pyrsan.passes ... --repairs FILE.json`):

    {"repairs": [
      {"kind": "fence", "position": "after", "site": {"module": "/abs/app.c", "index": 3}},
      {"kind": "fence", "position": "before", "at": {"file": "/abs/app.c", "line": 17, "column": 13}},
      {"kind": "order", "order": "seq_cst", "site": {"module": "/abs/app.c", "index": 5}}]}

Repairs naming another module are ignored (one file serves every translation unit).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from pyrsan.abi import primary_frame

from .atomics import atomic_instructions
from .model import IRFunction, IRLine, IRModule
from .sites import SiteTable
from .spinloops import find_spin_loops
from .syntax import ORDER_NUMBER, ORDERING_RE, i64_literal

FENCE_POSITIONS = ("before", "after")
# A seq_cst order is the only one the fix loop asks for; the others are accepted where
# LLVM allows them on the instruction.
ORDERS = ("acquire", "release", "acq_rel", "seq_cst")

# `  ; pyrsan.repair fence !64`: a comment line, so that the spin-loop recogniser and the
# atomics pass see the block as it was. `fence spin`: the fence is next to the load of a
# recognised spin loop (a wait), inside the loop.
PLACEHOLDER = "  ; pyrsan.repair fence"
_PLACEHOLDER_RE = re.compile(r"^  ; pyrsan\.repair fence( spin)?(?: (![0-9]+))?$")


class RepairError(ValueError):
    """A repairs file that cannot be applied; str() is one line."""


@dataclass(frozen=True)
class IRRepair:
    kind: str                    # "fence" or "order"
    module: str | None = None    # site: module id and index
    index: int | None = None
    file: str | None = None      # or source position
    line: int | None = None
    column: int | None = None
    position: str = ""           # fence: before / after
    order: str = ""              # order: the new order


def _position_repair(entry: dict, where: str) -> dict:
    at = entry.get("at")
    if not isinstance(at, dict) or not isinstance(at.get("file"), str) \
            or not isinstance(at.get("line"), int):
        raise RepairError(f"{where}: 'at' needs a file and a line")
    column = at.get("column")
    if column is not None and not isinstance(column, int):
        raise RepairError(f"{where}: 'at.column' must be an integer")
    return {"file": at["file"], "line": at["line"], "column": column}


def parse_repairs(document: object) -> list[IRRepair]:
    """The repairs of a decoded repairs file; RepairError names the first bad entry."""
    if not isinstance(document, dict) or not isinstance(document.get("repairs"), list):
        raise RepairError("expected an object with a 'repairs' list")
    repairs = []
    for number, entry in enumerate(document["repairs"], 1):
        where = f"repair {number}"
        if not isinstance(entry, dict):
            raise RepairError(f"{where}: not an object")
        kind = entry.get("kind")
        fields: dict = {}
        if kind == "fence":
            position = entry.get("position")
            if position not in FENCE_POSITIONS:
                raise RepairError(f"{where}: position must be 'before' or 'after'")
            fields["position"] = position
        elif kind == "order":
            order = entry.get("order")
            if order not in ORDERS:
                raise RepairError(f"{where}: order must be one of {', '.join(ORDERS)}")
            fields["order"] = order
        else:
            raise RepairError(f"{where}: kind must be 'fence' or 'order'")
        site = entry.get("site")
        if site is not None:
            if not isinstance(site, dict) or not isinstance(site.get("module"), str) \
                    or not isinstance(site.get("index"), int) or site["index"] < 0:
                raise RepairError(f"{where}: 'site' needs a module and an index >= 0")
            fields.update(module=site["module"], index=site["index"])
        else:
            fields.update(_position_repair(entry, where))
        repairs.append(IRRepair(kind=kind, **fields))
    return repairs


def load_repairs(path: str) -> list[IRRepair]:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except OSError as exc:
        raise RepairError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RepairError(f"{path} is not JSON: {exc}") from None
    try:
        return parse_repairs(document)
    except RepairError as exc:
        raise RepairError(f"{path}: {exc}") from None


def _same_file(frame_file: str, wanted: str) -> bool:
    if frame_file == wanted:
        return True
    if os.path.isabs(wanted) and os.path.isabs(frame_file):
        return os.path.realpath(frame_file) == os.path.realpath(wanted)
    return os.path.basename(frame_file) == os.path.basename(wanted) and (
        frame_file.endswith("/" + wanted) or wanted.endswith("/" + frame_file)
        or "/" not in wanted)


def _matches(repair: IRRepair, module_id: str, index: int, table: SiteTable, fn: IRFunction,
             line: IRLine) -> bool:
    if repair.index is not None:
        return repair.module == module_id and repair.index == index
    frame = primary_frame(table.frames_at(fn, line))
    return (frame is not None and frame.line == repair.line
            and (repair.column is None or frame.column == repair.column)
            and _same_file(frame.file, repair.file or ""))


def _raised(current: str, order: str) -> str:
    """The weakest order at least as strong as both (release + acquire = acq_rel)."""
    current = "monotonic" if current == "unordered" else current
    if "seq_cst" in (current, order):
        return "seq_cst"
    if current == "monotonic" or current == order:
        return order
    return "acq_rel"


def _strengthened(line: IRLine, order: str) -> str:
    """The instruction's text with its ordering raised to `order` (never weakened)."""
    if line.opcode == "fence":
        raise RepairError("a fence is not an access: its order is not repaired")
    if line.opcode == "load" and order in ("release", "acq_rel"):
        raise RepairError(f"a load cannot be made {order}")
    if line.opcode == "store" and order in ("acquire", "acq_rel"):
        raise RepairError(f"a store cannot be made {order}")
    text = line.text
    cut = text.find(", align ")
    if cut < 0:
        cut = text.find(", !")
    head, tail = (text[:cut], text[cut:]) if cut >= 0 else (text, "")
    m = ORDERING_RE.match(head)
    if m is None:
        raise RepairError("%s has no memory ordering to strengthen" % line.opcode)
    words = m.group(3).split()
    new = [_raised(words[0], order)]
    if len(words) == 2:
        # cmpxchg failure order: never release or acq_rel (LangRef)
        failure = {"seq_cst": "seq_cst", "acq_rel": "acquire", "acquire": "acquire"}.get(new[0])
        new.append(_raised(words[1], failure) if failure else words[1])
    return head[:m.start(3)] + " " + " ".join(new) + tail


def insert_repairs(module: IRModule, table: SiteTable, module_id: str,
                   repairs: list[IRRepair], spin_loops: bool = True) -> int:
    """Strengthen orders in place and leave fence placeholders; returns how many atomic
    instructions were repaired. Run just before rewrite_atomics (same site numbering), with
    its ``spin_loops``: a fence next to the load of a loop it will recognise as a wait is
    marked, because that load is one attempt of the wait (see number_repair_fences)."""
    if not repairs:
        return 0
    index = len(table.sites)  # the first atomic site comes after the plain-access sites
    repaired = 0
    for fn in module.functions():
        edits: dict[int, list[str]] = {}
        waits = {i for i, loop in (find_spin_loops(fn) if spin_loops else {}).items() if loop.kind == "wait"}
        for line in atomic_instructions(fn, table):
            wanted = [r for r in repairs if _matches(r, module_id, index, table, fn, line)]
            index += 1
            if not wanted:
                continue
            text = line.text
            for repair in wanted:
                if repair.kind == "order":
                    line.text = text = _strengthened(line, repair.order)
            placeholder = PLACEHOLDER + (" spin" if line.index in waits else "") + (
                " " + line.dbg if line.dbg else (" " + line.loc if line.loc else ""))
            before = [placeholder] if any(r.kind == "fence" and r.position == "before"
                                          for r in wanted) else []
            after = [placeholder] if any(r.kind == "fence" and r.position == "after"
                                         for r in wanted) else []
            edits[line.index] = before + [text] + after
            repaired += 1
        fn.apply(edits)
    return repaired


def number_repair_fences(module: IRModule, table: SiteTable) -> int:
    """Turn every placeholder into a seq_cst `__rsan_fence` call with a site of its own
    (numbered after the program's atomic instructions); returns how many.

    A fence before or after the load of a recognised spin loop becomes `__rsan_fence_spin`:
    it takes effect only where no failed attempt of the wait is pending. A failed attempt
    creates no event (spinloops.py), so the loop's events are those of its last, successful
    attempt, and "a fence right after (before) the load" means after (before) the loop: right
    after that attempt (before the first one). As a plain fence in the loop it would also be
    a step of every failed iteration, and a controlled run would spin on it for ever."""
    count = 0
    for fn in module.functions():
        edits: dict[int, list[str]] = {}
        for i, text in enumerate(fn.lines):
            m = _PLACEHOLDER_RE.match(text)
            if m is None:
                continue
            spin, ref = m.group(1), m.group(2)
            line = IRLine(i, text, "fence", dbg=ref, loc=ref)
            sid = table.add(fn, line, "fence", ORDER_NUMBER["seq_cst"], 0)
            dbg = ", !dbg %s" % ref if ref else ""
            if spin:
                module.used.add("__rsan_fence_spin")
                call = "@__rsan_fence_spin(i32 %d, i64 %s)"
            else:
                module.used.add("__rsan_fence")
                call = "@__rsan_fence(i32 %d, i32 0, i64 %s)"
            edits[i] = ["  notail call void " + (call % (ORDER_NUMBER["seq_cst"], i64_literal(sid))) + dbg]
            count += 1
        fn.apply(edits)
    return count
