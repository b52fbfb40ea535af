"""Where a function's pointers come from: which stack slots never escape their
thread, and the object a pointer is derived from (to skip constant globals).

A stack slot (`%a = alloca ...`) is private to its thread, and its accesses need no
instrumentation, when its address, and the address of every value derived from it by
`getelementptr` / `bitcast` / `addrspacecast`, is only ever used

  - as the pointer operand of a load or store (atomic or not), of `atomicrmw` or `cmpxchg`,
  - by the lifetime and debug intrinsics (`llvm.lifetime.*`, `llvm.dbg.*`, `#dbg_*` records),
  - as an operand of `llvm.memcpy/memmove/memset` (nocapture: they copy the contents, the
    address goes nowhere),

A slot's address stored into a *reference slot* (slot_refs.py: a slot that holds only that
address and whose loaded values are only the addresses of plain accesses, clang -O0's reference
parameters and result buffers of inlined accessors) does not escape: the values loaded from
the reference are derived from the slot.

Anything else (stored as a value, passed to a call, `ptrtoint`, returned, `phi`, `select`,
`icmp`, a vector GEP) lets the address escape: another thread may then reach the slot, so its
accesses are instrumented (toolchain.md §3.2: at -O0 a local whose address goes to another
thread is an alloca). The check is conservative: any use it does not recognise is an escape.
"""
from __future__ import annotations

import re

from .model import IRFunction
from .slot_refs import reference_slots
from .syntax import INSTR_RE, LOCAL_NAME_RE, split_top_level, strip_keywords

# `  %7 = alloca [4 x i32], align 16`
_ALLOCA_RE = re.compile(r'^  (%"[^"]*"|%[-\w.$]+) = alloca ')
# a pointer-producing instruction whose result points into its first pointer operand:
# `  %p = getelementptr inbounds [4 x i32], ptr %a, i64 0, i64 %i`   `  %q = bitcast ptr %a to ptr`
_DERIVE_RE = re.compile(
    r'^  (%"[^"]*"|%[-\w.$]+) = (getelementptr|bitcast|addrspacecast)\b')
# the base global of a constant expression: `getelementptr inbounds (i8, ptr @buf, i64 1)`
_CONST_BASE_RE = re.compile(r'^(?:getelementptr|bitcast|addrspacecast)\b[^@%]*?\bptr (@"[^"]*"|@[-\w.$]+)')
# intrinsics that neither capture a pointer argument nor let it reach another thread
_HARMLESS_INTRINSIC_RE = re.compile(
    r'@llvm\.(?:lifetime\.(?:start|end)|dbg\.(?:declare|value|assign)|'
    r'mem(?:cpy|move|set)(?:\.inline)?)\.')
_GEP_FLAGS = ("inbounds", "nuw", "nusw")
# the common shapes of a pointer-operand use, checked before the general parse (-O0 code is
# mostly these): `  %9 = load i32, ptr %3, align 4`   `  store i32 %9, ptr %5, align 4`
_SIMPLE_LOAD_RE = re.compile(r'^  %[-\w.$]+ = load (?:volatile )?[-\w.%]+, ptr (%[-\w.$]+), align \d+(?:,|$)')
_SIMPLE_STORE_RE = re.compile(
    r'^  store (?:volatile )?[-\w.%]+ (%[-\w.$]+|[-\w.]+), ptr (%[-\w.$]+), align \d+(?:,|$)')


def gep_base(rest: str) -> str | None:
    """The base operand text of a GEP (`ptr %a`), given the text after `getelementptr`."""
    rest = strip_keywords(rest, _GEP_FLAGS)
    if rest.startswith("inrange("):
        rest = rest[rest.index(")") + 1:].lstrip()
    parts = split_top_level(rest)
    return parts[1] if len(parts) > 1 else None


def simple_pointer(text: str) -> str | None:
    """The local pointer operand of a load/store line of the common shape, else None."""
    m = _SIMPLE_LOAD_RE.match(text) or _SIMPLE_STORE_RE.match(text)
    return m.group(m.lastindex) if m and m.lastindex else None


def _pointer_operand(text: str) -> str | None:
    """`%a` from `ptr %a`; None for other address spaces or vectors of pointers."""
    if text.startswith("ptr ") and not text.startswith("ptr addrspace("):
        return text[4:].strip()
    return None


def _classify(text: str, name: str) -> tuple[str, str | None]:
    """How instruction line `text` uses local `name`: ("ok", None), ("derive", result) or
    ("escape", None). (Debug records and the simple load/store shapes are decided before.)"""
    m = INSTR_RE.match(text)
    if m is None or text.startswith("   "):
        return "escape", None   # a continuation line (switch case, invoke labels, ...)
    result, opcode = m.group(1), m.group(3)
    rest = text[m.end():].lstrip()
    uses = LOCAL_NAME_RE.findall(text)
    count = uses.count(name) - (1 if result == name else 0)
    if opcode in ("load", "store", "atomicrmw", "cmpxchg"):
        parts = split_top_level(strip_keywords(rest, ("atomic", "volatile", "weak")))
        where = 1 if opcode in ("load", "store") else 0
        operand = _pointer_operand(parts[where]) if len(parts) > where else None
        # the ordering words follow the pointer of an atomic load/store: `ptr %a acquire`
        if count == 1 and operand is not None and (operand == name or operand.startswith(name + " ")):
            return "ok", None
        return "escape", None
    if opcode == "getelementptr":
        base = gep_base(rest)
        if count == 1 and base is not None and _pointer_operand(base) == name:
            return "derive", result
        return "escape", None
    if opcode in ("bitcast", "addrspacecast"):
        if count == 1 and rest.startswith("ptr ") and " to ptr" in rest:
            return "derive", result
        return "escape", None
    if opcode in ("call", "invoke") and _HARMLESS_INTRINSIC_RE.search(text):
        return "ok", None
    return "escape", None


class PointerOrigins:
    """Per function: the private (non-escaping) stack pointers, and the object a pointer
    operand is derived from (through local GEPs and casts)."""

    def __init__(self, fn: IRFunction):
        lines = fn.lines
        self._derived: dict[str, str] = {}    # local result -> the operand it derives from
        allocas: list[str] = []
        for text in lines:
            if " = alloca " in text:
                m = _ALLOCA_RE.match(text)
                if m:
                    allocas.append(m.group(1))
            elif " = getelementptr " in text or " = bitcast " in text or " = addrspacecast " in text:
                m = _DERIVE_RE.match(text)
                if m:
                    rest = text[m.end():].lstrip()
                    base = gep_base(rest) if m.group(2) == "getelementptr" else rest
                    operand = _pointer_operand(base or "")
                    if operand is not None:
                        self._derived[m.group(1)] = operand.split(" to ", 1)[0].strip()
        self.private: frozenset[str] = frozenset(self._private(lines, allocas)) if allocas else frozenset()

    def _private(self, lines: list[str], allocas: list[str]) -> set[str]:
        # every value derived from a slot, with its slot (the derivations are known up front:
        # a use may come textually before its definition's block)
        root_of = {a: a for a in allocas}
        refs = reference_slots(lines)
        kept = set().union(*(ref.address_lines for ref in refs.values()))
        for ref in refs.values():
            for x in ref.loaded:
                self._derived[x] = ref.target
        for name in self._derived:
            base, depth = name, 0
            while base in self._derived and depth < 64:
                base, depth = self._derived[base], depth + 1
            if base in root_of and base != name:
                root_of[name] = base
        escaped: set[str] = set()
        for i, text in enumerate(lines):
            if i in kept:
                continue   # a slot's address into its reference slot
            if text.startswith("    #dbg_") or _SIMPLE_LOAD_RE.match(text):
                continue   # a debug record, or a pointer operand (a loaded value is no slot)
            m = _SIMPLE_STORE_RE.match(text)
            if m:   # the pointer operand is fine; the stored value escapes
                if m.group(1) in root_of:
                    escaped.add(root_of[m.group(1)])
                continue
            for name in set(LOCAL_NAME_RE.findall(text)):
                root = root_of.get(name)
                if root is None or root in escaped or text.startswith("  " + name + " = "):
                    continue   # not a slot's, already escaped, or the definition itself
                how, result = _classify(text, name)
                if how == "escape" or (how == "derive" and result is not None and root_of.get(result) != root):
                    escaped.add(root)
        return {name for name, root in root_of.items() if root not in escaped}

    def underlying(self, operand: str) -> str:
        """The object operand is derived from: `@g`, or the local it ultimately comes from.

        `getelementptr inbounds (i8, ptr @buf, i64 1)` -> `@buf`; `%p` defined by a GEP of
        `@tbl` -> `@tbl`."""
        seen = 0
        while True:
            if operand.startswith("%"):
                base = self._derived.get(operand)
                if base is None or seen > 64:
                    return operand
                operand = base
                seen += 1
                continue
            if operand.startswith("@"):
                return operand
            m = _CONST_BASE_RE.match(operand)
            return m.group(1) if m else operand
