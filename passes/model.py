"""A light model of a textual LLVM module: top-level lines, and functions made of lines
that carry their parsed instruction (result name, opcode, own and effective !dbg)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .syntax import DBG_RE, DEFINE_RE, INSTR_RE


@dataclass
class IRLine:
    """One instruction line (with its continuation lines) or any other body line.

    opcode is None for labels, blank lines, `#dbg_*` records and comments.
    loc is the `!dbg` of the line or, failing that, of the nearest previous line of the
    function that has one (None if there is none).
    """
    text: str
    opcode: str | None = None
    result: str | None = None
    tail: str = ""            # `tail `, `musttail `, `notail ` or ""
    cont: list[str] = field(default_factory=list)
    dbg: str | None = None
    loc: str | None = None

    def lines(self) -> list[str]:
        return [self.text] + self.cont


@dataclass
class IRFunction:
    header: str
    index: int                 # n-th `define` of the module
    subprogram: str | None     # `!dbg !N` of the define line
    body: list[IRLine]
    footer: str = "}"


@dataclass
class IRModule:
    """items: top-level text lines (str) and IRFunction objects, in module order."""
    items: list
    counter: int = 0           # for fresh `%__rsan.N` names
    used: set = field(default_factory=set)   # runtime functions called by inserted code

    def functions(self):
        return [it for it in self.items if isinstance(it, IRFunction)]

    def top_level_lines(self):
        return [it for it in self.items if isinstance(it, str)]

    def fresh(self) -> str:
        self.counter += 1
        return "%%__rsan.%d" % self.counter


def _finish_line(line: IRLine) -> None:
    if line.opcode is None:
        return
    for text in reversed(line.cont):
        m = DBG_RE.search(text)
        if m:
            line.dbg = m.group(1)
            return
    m = DBG_RE.search(line.text) if "!dbg" in line.text else None
    line.dbg = m.group(1) if m else None


def parse_module(text: str) -> IRModule:
    items: list = []
    lines = text.split("\n")
    n = len(lines)
    i = 0
    nfunc = 0
    while i < n:
        raw = lines[i]
        if not DEFINE_RE.match(raw):
            items.append(raw)
            i += 1
            continue
        m = DBG_RE.search(raw)
        fn = IRFunction(header=raw, index=nfunc, subprogram=m.group(1) if m else None, body=[])
        nfunc += 1
        i += 1
        last_loc = None
        current: IRLine | None = None
        while i < n and lines[i] != "}":
            raw = lines[i]
            i += 1
            if raw.startswith("  ") and not raw.startswith("   "):
                mi = INSTR_RE.match(raw)
                if current is not None:
                    _finish_line(current)
                    last_loc = current.dbg or last_loc
                    current.loc = current.dbg or current.loc
                if mi:
                    current = IRLine(raw, mi.group(3), mi.group(1), mi.group(2), loc=last_loc)
                    fn.body.append(current)
                    continue
                current = None
                fn.body.append(IRLine(raw))
            elif raw.startswith("   ") and current is not None and not raw.lstrip().startswith("#dbg_"):
                current.cont.append(raw)
            else:
                fn.body.append(IRLine(raw))
        if current is not None:
            _finish_line(current)
            current.loc = current.dbg or current.loc
        i += 1  # the closing brace
        items.append(fn)
    return IRModule(items)


def print_module(module: IRModule) -> str:
    out: list[str] = []
    for it in module.items:
        if isinstance(it, str):
            out.append(it)
            continue
        out.append(it.header)
        for line in it.body:
            out.append(line.text)
            out.extend(line.cont)
        out.append(it.footer)
    return "\n".join(out)
