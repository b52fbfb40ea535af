"""Pass: the shadow call stack. Every call to a real function is bracketed by
`__rsan_func_entry(call site id)` / `__rsan_func_exit()`; `invoke` gets the entry only."""
from __future__ import annotations

from .model import IRLine, IRModule
from .results import Site
from .sites import SiteTable
from .syntax import ASM_CALL_RE, CALLEE_RE, i64_literal


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


def shadow_call_stack(module: IRModule, table: SiteTable) -> tuple[IRModule, list[Site]]:
    first = len(table.sites)
    for fn in module.functions():
        if not any(_wants_bracket(l) for l in fn.body):
            continue
        body: list[IRLine] = []
        for line in fn.body:
            if not _wants_bracket(line):
                body.append(line)
                continue
            dbg = ", !dbg %s" % line.dbg if line.dbg else ""
            sid = table.add(fn, line, "call")
            module.used.add("__rsan_func_entry")
            body.append(IRLine("  call void @__rsan_func_entry(i64 %s)%s" % (i64_literal(sid), dbg),
                               loc=line.loc))
            body.append(line)
            if line.opcode == "call":
                module.used.add("__rsan_func_exit")
                body.append(IRLine("  call void @__rsan_func_exit()" + dbg, loc=line.loc))
        fn.body = body
    return module, table.sites[first:]
