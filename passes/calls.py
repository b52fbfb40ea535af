"""Pass: the shadow call stack. Every call to a real function is bracketed by
`__rsan_func_entry(call site id)` / `__rsan_func_exit()`; `invoke` gets the entry only."""
from __future__ import annotations

import re

from .model import IRLine, IRModule
from .results import Site
from .sites import SiteTable
from .syntax import ASM_CALL_RE, ATTRIBUTE_GROUP_RE, CALLEE_RE, i64_literal


def _callee(line: IRLine) -> str | None:
    """The callee text (`@f`, `%3`), or None for inline asm and unparsable calls."""
    text = line.text
    if " asm " in text and ASM_CALL_RE.search(text):
        return None
    start = text.find(line.opcode)
    m = CALLEE_RE.search(text, start)
    return m.group(1) if m else None


def _wants_bracket(line: IRLine) -> bool:
    if line.opcode not in ("call", "invoke") or line.tail == "musttail ":
        return False
    callee = _callee(line)
    if callee is None:
        return False
    name = callee[1:].strip('"')
    return not (callee.startswith("@") and (name.startswith("llvm.") or name.startswith("__rsan_")))


def _naked_groups(module: IRModule) -> set[str]:
    """Attribute groups (`#3`) that contain `naked`: such functions may hold nothing but asm."""
    groups = set()
    for line in module.top_level_lines():
        m = ATTRIBUTE_GROUP_RE.match(line)
        if m and re.search(r"(?<![\w\"])naked(?![\w\"])", m.group(2)):
            groups.add(m.group(1))
    return groups


def _is_naked(header: str, naked: set[str]) -> bool:
    if re.search(r"\)[^@]*\bnaked\b", header):
        return True
    return any(g in naked for g in re.findall(r"#\d+", header))


def shadow_call_stack(module: IRModule, table: SiteTable) -> tuple[IRModule, list[Site]]:
    first = len(table.sites)
    naked = _naked_groups(module)
    for fn in module.functions():
        if _is_naked(fn.header, naked):
            continue
        edits: dict[int, list[str]] = {}
        for line in fn.scan(("call ", "invoke ")):
            if not _wants_bracket(line):
                continue
            dbg = ", !dbg %s" % line.dbg if line.dbg else ""
            sid = table.add(fn, line, "call")
            module.used.add("__rsan_func_entry")
            new = ["  notail call void @__rsan_func_entry(i64 %s)%s" % (i64_literal(sid), dbg), line.text]
            if line.opcode == "call":
                module.used.add("__rsan_func_exit")
                new.append("  notail call void @__rsan_func_exit()" + dbg)
            edits[line.index] = new
        fn.apply(edits)
    return module, table.sites[first:]
