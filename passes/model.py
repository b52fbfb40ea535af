"""A light model of a textual LLVM module: top-level lines, and functions whose body lines
are parsed into instructions (result name, opcode, own and effective !dbg) on demand.

Parsing every one of a big module's lines up front costs more than the whole rewrite, so a
pass asks a function for the lines that contain one of a few words (`scan`), gets them
parsed, and hands back replacement lines by index (`apply`)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from .syntax import DBG_RE, DEFINE_RE, INSTR_RE


@dataclass
class IRLine:
    """One parsed instruction line of a function body.

    loc is the `!dbg` of the instruction or, failing that, of the nearest previous line of
    the function that has one (None if there is none). `invoke` carries its `!dbg` on its
    continuation line (`to label %a unwind label %b, !dbg !7`); dbg looks there.
    """
    index: int
    text: str
    opcode: str
    result: str | None = None
    tail: str = ""            # `tail `, `musttail `, `notail ` or ""
    dbg: str | None = None
    loc: str | None = None

    @property
    def rest(self) -> str:
        """The text after the opcode: `atomic i32 1, ptr @x release, align 4, !dbg !3`."""
        m = INSTR_RE.match(self.text)
        return self.text[m.end():].lstrip() if m else ""


@dataclass
class IRFunction:
    header: str
    index: int                 # n-th `define` of the module
    subprogram: str | None     # `!dbg !N` of the define line
    lines: list[str]           # body lines, continuation lines included
    footer: str = "}"

    def scan(self, needles: tuple[str, ...]):
        """Yield the instructions whose line contains one of `needles`, parsed, in order."""
        lines = self.lines
        last_dbg_line = -1
        wanted = _needle_re(needles).search
        for i, text in enumerate(lines):
            if not wanted(text):
                if "!dbg !" in text:
                    last_dbg_line = i
                continue
            m = INSTR_RE.match(text)
            if m is None or text.startswith("   "):
                if "!dbg !" in text:
                    last_dbg_line = i
                continue
            line = IRLine(i, text, m.group(3), m.group(1), m.group(2))
            line.dbg = _dbg(text)
            if line.opcode == "invoke":
                j = i + 1
                while j < len(lines) and lines[j].startswith("   ") and "#dbg_" not in lines[j]:
                    line.dbg = _dbg(lines[j]) or line.dbg
                    j += 1
            if line.dbg:
                line.loc = line.dbg
            elif last_dbg_line >= 0:
                line.loc = _dbg(lines[last_dbg_line])
            if "!dbg !" in text:
                last_dbg_line = i
            yield line

    def apply(self, edits: dict[int, list[str]]) -> None:
        """Replace body line i by the lines edits[i]."""
        if not edits:
            return
        out: list[str] = []
        prev = 0
        for i in sorted(edits):
            out.extend(self.lines[prev:i])
            out.extend(edits[i])
            prev = i + 1
        out.extend(self.lines[prev:])
        self.lines = out


@functools.lru_cache(maxsize=None)
def _needle_re(needles: tuple[str, ...]):
    return re.compile("|".join(re.escape(n) for n in needles))


def _dbg(text: str) -> str | None:
    if "!dbg !" not in text:
        return None
    m = DBG_RE.search(text)
    return m.group(1) if m else None


@dataclass
class IRModule:
    """items: top-level text lines (str) and IRFunction objects, in module order."""
    items: list
    counter: int = 0           # for fresh `%__rsan.N` names
    used: set = field(default_factory=set)   # runtime functions called by inserted code
    asm_spins: list = field(default_factory=list)   # asm loads of recognised waits (asm.py)

    def functions(self):
        return [it for it in self.items if isinstance(it, IRFunction)]

    def top_level_lines(self):
        return [it for it in self.items if isinstance(it, str)]

    def fresh(self) -> str:
        self.counter += 1
        return "%%__rsan.%d" % self.counter


_FRESH_NAME_RE = re.compile(r"%__rsan\.(\d+)\b")


def parse_module(text: str) -> IRModule:
    items: list = []
    lines = text.split("\n")
    n = len(lines)
    i = 0
    nfunc = 0
    while i < n:
        raw = lines[i]
        if not (raw.startswith("define") and DEFINE_RE.match(raw)):
            items.append(raw)
            i += 1
            continue
        try:
            end = lines.index("}", i + 1)
        except ValueError:
            end = n
        m = DBG_RE.search(raw)
        items.append(IRFunction(header=raw, index=nfunc, subprogram=m.group(1) if m else None,
                                lines=lines[i + 1:end]))
        nfunc += 1
        i = end + 1
    # A module instrumented in two stages (plain accesses before clang's optimisation, atomics
    # after it) already holds `%__rsan.N` values of the first stage that the optimiser kept:
    # fresh names continue after the largest, so that the second stage never redefines one.
    taken = [int(m) for m in _FRESH_NAME_RE.findall(text)]
    return IRModule(items, counter=max(taken, default=0))


def print_module(module: IRModule) -> str:
    out: list[str] = []
    for it in module.items:
        if isinstance(it, str):
            out.append(it)
            continue
        out.append(it.header)
        out.extend(it.lines)
        out.append(it.footer)
    return "\n".join(out)
