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

Before the optimiser (pyrsan's -O1 and above instrument plain accesses on clang's unoptimised
IR first: build.py) the same holds for a header's inline functions: plain.py's hooks make a
libstdc++ member such as `std::atomic<bool>::compare_exchange_weak` larger than the optimiser
inlines at -O1, and the spin lock around it was a loop that calls a function. Those
(`linkonce_odr`, holding an atomic, called in a loop, not `noinline`) are marked
`alwaysinline` and the optimiser inlines them (`mark_atomic_accessors`).

A function is inlined at -O0 when clang made it (`noinline optnone`), it is defined here, it is
small (at most MAX_LINES body lines: an accessor, not a worker; MAX_HEADER_LINES for an inline
function of a header, `linkonce_odr`, such as libstdc++'s members whose -O0 body is a switch
over the memory orders with a copy of the instruction per case), not variadic, holds an atomic
instruction or calls such an accessor (`std::atomic_load_explicit` calls the member), and is
called in a loop (or by another inlined one). Inlining keeps the program's meaning (the body runs as before, with
its own debug locations and an inline chain naming the caller), so no verdict changes except
through the recognition; the functions keep their definitions when something else refers to
them."""
from __future__ import annotations

import re

import llvmlite.binding as llvm

from . import backoff
from .asm import asm_load
from .codegen import init_llvm
from .model import IRFunction, IRModule, parse_module
from .registration import declare_used
from .spinloops import lines_in_cycles
from .syntax import FUNC_NAME_RE

MAX_LINES = 120
MAX_HEADER_LINES = 500
_ATOMIC_RE = re.compile(r"= (?:load atomic|cmpxchg|atomicrmw)\b|^\s*store atomic\b|^\s*fence\b")
_CALL_RE = re.compile(r'\b(?:call|invoke)\b[^@]*@("[^"]+"|[-\w.$]+)\(')
_GROUP_RE = re.compile(r"\)\s+(?:[a-z_]+\s+)*#(\d+)\b")
_ATTRS_RE = re.compile(r"^attributes #(\d+) = \{ (.*) \}$")


def _holds_atomic(line: str) -> bool:
    """An atomic instruction, or an asm statement asm.py models as an atomic load (Concurrency
    Kit's `ck_pr_load_*` in its inline-asm mode)."""
    return bool(_ATOMIC_RE.search(line)) or (" asm " in line and asm_load(line.rstrip()) is not None)


def _inert_only(func: IRFunction) -> bool:
    """A function whose body only makes inert calls (backoff.py: `ck_pr_stall`'s `pause`): a
    wait loop that calls it is a wait once it is inlined."""
    seen = False
    for line in func.lines:
        text = backoff._TRAILER_RE.sub("", line.rstrip())
        m = backoff._INSTR_RE.match(text)
        if not m:
            continue
        if m.group(2) == "ret" and m.group(3).strip() == "void":
            continue
        if m.group(2) != "call" or not backoff.is_inert("call", m.group(3), lambda _: None):
            return False
        seen = True
    return seen


def _callees(lines) -> set[str]:
    return {m.group(1) for line in lines for m in _CALL_RE.finditer(line)}


def _chosen(module: IRModule, groups: dict[str, list[str]], optimised: bool) -> dict[str, IRFunction]:
    """The accessors to inline: small functions that hold an atomic instruction or call such
    an accessor, called in a loop of some function or by another chosen one (a call outside
    any loop recognises nothing, and a helper the user kept out of line stays so there). At
    -O0, the functions clang made `noinline optnone`; before the optimiser (optimised), the
    inline functions of headers (`linkonce_odr`) not marked `noinline`, which the optimiser
    may leave out of line once plain.py's hooks have made them larger."""
    small: dict[str, IRFunction] = {}
    for func in module.functions():
        m = _GROUP_RE.search(func.header)
        name = FUNC_NAME_RE.match(func.header)
        if not (m and name) or "...)" in func.header:
            continue
        attrs = set(groups.get(m.group(1), ()))
        header = " linkonce_odr " in func.header
        if optimised:
            fits = header and "noinline" not in attrs and len(func.lines) <= MAX_HEADER_LINES
        else:
            fits = {"noinline", "optnone"} <= attrs and len(func.lines) <= (MAX_HEADER_LINES if header else MAX_LINES)
        if fits:
            small[name.group(1)] = func
    holders = {n for n, f in small.items() if any(_holds_atomic(line) for line in f.lines) or _inert_only(f)}
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


def _mark_always_inline(module: IRModule, optimised: bool) -> bool:
    """Give each chosen accessor a copy of its attribute group with `alwaysinline` (and without
    `noinline optnone`); whether there was one."""
    groups = {}
    for line in module.top_level_lines():
        m = _ATTRS_RE.match(line)
        if m:
            groups[m.group(1)] = m.group(2).split(" ")
    copies: dict[str, str] = {}   # attribute group of a chosen function -> its inlinable copy
    for func in _chosen(module, groups, optimised).values():
        m = _GROUP_RE.search(func.header)
        assert m is not None, "chosen functions have an attribute group"
        group = m.group(1)
        if group not in copies:
            copies[group] = str(max(int(g) for g in groups) + 1 + len(copies))
        func.header = func.header[:m.start(1)] + copies[group] + func.header[m.end(1):]
    for group, new in copies.items():
        attrs = [a for a in groups[group] if a not in ("noinline", "optnone", "alwaysinline")] + ["alwaysinline"]
        module.items.append("attributes #%s = { %s }" % (new, " ".join(attrs)))
    return bool(copies)


def mark_atomic_accessors(module: IRModule) -> None:
    """Before the optimiser: the header accessors that hold an atomic and are called in a loop
    are marked `alwaysinline`, so that the recognition finds their loops whole at every level."""
    _mark_always_inline(module, optimised=True)


def inline_atomic_helpers(module: IRModule) -> IRModule | None:
    """The module with its -O0 atomic helpers inlined (a new parse), or None when it has none."""
    if not _mark_always_inline(module, optimised=False):
        return None
    init_llvm()
    parsed = llvm.parse_assembly(declare_used(module))
    builder = llvm.create_pass_builder(
        llvm.Target.from_triple(parsed.triple or llvm.get_default_triple()).create_target_machine(),
        llvm.create_pipeline_tuning_options(speed_level=0))
    passes = llvm.create_new_module_pass_manager()
    passes.add_always_inliner_pass()
    passes.run(parsed, builder)
    return parse_module(str(parsed))
