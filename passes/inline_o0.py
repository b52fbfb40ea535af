"""Pass: at -O0, the small functions that hold an atomic access are inlined into their callers
before the atomics are rewritten (docs/toolchain.md §3.1, spinloops.py).

The spin-loop recognition reads a loop's own blocks: a wait is a loop whose atomic reads sit in
it. At -O1 and above the optimiser has inlined the accessors before the recognition runs. At
-O0 clang inlines only `always_inline` functions, and a common accessor is not one: libstdc++'s
`std::atomic<T*>`, `std::atomic<bool>` and generic `std::atomic<T>` members forward to the
always-inline `__atomic_base` ones through an ordinary inline member, and C code has its own
helpers (`static bool ready(void) { return atomic_load(&f); }`). A wait through one is a loop
that calls a function: not recognised, so each failed iteration's stale read was a report of a
program that is robust. This pass gives such a function what clang gives `always_inline` ones
and runs LLVM's always-inliner, so that -O0 code reaches the recognition in the shape of the
-O0 `std::atomic<int>` members, which it knows (a constant order through a stack slot, `this`
through another).

A function is inlined when clang -O0 made it (`noinline optnone`), it is defined here, it is
small (at most MAX_LINES body lines: an accessor, not a worker), not variadic, holds an atomic
instruction or calls such an accessor (`std::atomic_load_explicit` calls the member), and is
called in a loop (or by another inlined one). Inlining keeps the program's meaning (the body runs as before, with
its own debug locations and an inline chain naming the caller), so no verdict changes except
through the recognition; the functions keep their definitions when something else refers to
them."""
from __future__ import annotations

import re

import llvmlite.binding as llvm

from .codegen import init_llvm
from .model import IRFunction, IRModule, parse_module
from .registration import declare_used
from .spinloops import lines_in_cycles
from .syntax import FUNC_NAME_RE

MAX_LINES = 120
_ATOMIC_RE = re.compile(r"= (?:load atomic|cmpxchg|atomicrmw)\b|^\s*store atomic\b|^\s*fence\b")
_CALL_RE = re.compile(r'\b(?:call|invoke)\b[^@]*@("[^"]+"|[-\w.$]+)\(')
_GROUP_RE = re.compile(r"\)\s+(?:[a-z_]+\s+)*#(\d+)\b")
_ATTRS_RE = re.compile(r"^attributes #(\d+) = \{ (.*) \}$")


def _callees(lines) -> set[str]:
    return {m.group(1) for line in lines for m in _CALL_RE.finditer(line)}


def _chosen(module: IRModule, groups: dict[str, list[str]]) -> dict[str, IRFunction]:
    """The accessors to inline: small clang -O0 functions (`noinline optnone`, not variadic)
    that hold an atomic instruction or call such an accessor, called in a loop of some
    function or by another chosen one (a call outside any loop recognises nothing, and a
    helper the user kept out of line stays so there)."""
    small: dict[str, IRFunction] = {}
    for func in module.functions():
        m = _GROUP_RE.search(func.header)
        name = FUNC_NAME_RE.match(func.header)
        if m and name and {"noinline", "optnone"} <= set(groups.get(m.group(1), ())) \
                and "...)" not in func.header and len(func.lines) <= MAX_LINES:
            small[name.group(1)] = func
    holders = {n for n, f in small.items() if any(_ATOMIC_RE.search(line) for line in f.lines)}
    calls = {n: _callees(f.lines) & set(small) for n, f in small.items()}
    while True:
        more = {n for n in small if n not in holders and calls[n] & holders}
        if not more:
            break
        holders |= more
    chosen: set[str] = set()
    for func in module.functions():
        if holders & _callees(func.lines):
            cycle = lines_in_cycles(func)
            chosen |= holders & _callees(func.lines[i] for i in cycle)
    work = list(chosen)
    while work:
        for callee in calls[work.pop()] & holders - chosen:
            chosen.add(callee)
            work.append(callee)
    return {n: small[n] for n in chosen}


def inline_atomic_helpers(module: IRModule) -> IRModule | None:
    """The module with its -O0 atomic helpers inlined (a new parse), or None when it has none."""
    groups = {}
    for line in module.top_level_lines():
        m = _ATTRS_RE.match(line)
        if m:
            groups[m.group(1)] = m.group(2).split(" ")
    copies: dict[str, str] = {}   # attribute group of a chosen function -> its inlinable copy
    for func in _chosen(module, groups).values():
        m = _GROUP_RE.search(func.header)
        assert m is not None, "chosen functions have an attribute group"
        group = m.group(1)
        if group not in copies:
            copies[group] = str(max(int(g) for g in groups) + 1 + len(copies))
        func.header = func.header[:m.start(1)] + copies[group] + func.header[m.end(1):]
    if not copies:
        return None
    for group, new in copies.items():
        attrs = ["alwaysinline" if a == "noinline" else a for a in groups[group] if a != "optnone"]
        module.items.append("attributes #%s = { %s }" % (new, " ".join(attrs)))
    init_llvm()
    parsed = llvm.parse_assembly(declare_used(module))
    builder = llvm.create_pass_builder(
        llvm.Target.from_triple(parsed.triple or llvm.get_default_triple()).create_target_machine(),
        llvm.create_pipeline_tuning_options(speed_level=0))
    passes = llvm.create_new_module_pass_manager()
    passes.add_always_inliner_pass()
    passes.run(parsed, builder)
    return parse_module(str(parsed))
