"""Atomic primitives: the innermost frames of an atomic site that are nothing but the atomic.

A frame of a site is a function instance (the function itself, or one inlined copy of it). The
instance is an *atomic primitive* for the site when every memory operation it holds (nested
inlined calls included) is an atomic access of the site's own address, a fence, or an access
of the function's own stack slots, and every call it makes is an intrinsic without memory
effects, or inline asm that passes/asm.py models as such an atomic, a fence or nothing. Such a
function is an atomic operation under another name (`AO_load_acquire`, `ck_pr_load_int`,
`__atomic_base::load`, a CAS-loop `fetch_max`): the program's use of it is the program's own
atomic access.

The runtime uses the count (rsan_site.op bits RSAN_SITE_PRIMITIVE_SHIFT) to tell the program's
accesses through an atomic-operations library in a system header from the accesses of a
library's own synchronisation objects (std::barrier's phase word), which are `library`
(docs/reports.md §2). A count that is too small only leaves a report `library`; the instances
counted are exactly those the rule above accepts.
"""
from __future__ import annotations

import re

from .debuginfo import DebugInfo
from .model import IRFunction, IRLine

# the opcodes that may touch memory or call
_NEEDLES = ("load", "store", "atomicrmw", "cmpxchg", "fence", "call", "invoke", "alloca")
# `%2 = load atomic i64, ptr %0 acquire, align 8`   `store atomic i32 1, ptr @x release`
_ADDRESS_AFTER_VALUE_RE = re.compile(r', ptr (%[-\w.$]+|%"[^"]*"|@[-\w.$]+|@"[^"]*")')
# `atomicrmw add ptr %p, i64 1 seq_cst`   `cmpxchg weak ptr @x, i32 0, i32 1 acq_rel monotonic`
_ADDRESS_FIRST_RE = re.compile(r'\bptr (%[-\w.$]+|%"[^"]*"|@[-\w.$]+|@"[^"]*")')
# `%0 = load ptr, ptr %addr.addr, align 8` (at -O0, a pointer argument read from its slot)
_SLOT_LOAD_RE = re.compile(r'^ptr, ptr (%[-\w.$]+|%"[^"]*")')
# calls that neither read nor write memory the program sees; the runtime hooks that bracket a
# modelled asm atomic (passes/asm.py), whose asm line is checked on its own
_HARMLESS_CALL_RE = re.compile(
    r"@llvm\.(?:dbg\.|lifetime\.|assume|expect|experimental\.noalias\.scope\.decl|"
    r"invariant\.|pseudoprobe|donothing|sideeffect)|@__rsan_asm_(?:begin|end)\(")
# passes/asm.py's actions for asm that is one atomic access
_ASM_ATOMICS = ("load", "store", "rmw", "cas")


def _asm(line: IRLine):
    """passes/asm.py's model of the inline asm this call line runs, None if it runs none."""
    from .asm import asm_plan   # asm.py adds sites: imported here, not at the top
    found = asm_plan(line.text) if line.opcode in ("call", "invoke") and " asm " in line.text else None
    return found[1] if found else None


def _address(line: IRLine) -> str | None:
    """The address operand of an atomic or plain access (an asm atomic's too), else None."""
    rest = line.rest
    if line.opcode in ("load", "store"):
        m = _ADDRESS_AFTER_VALUE_RE.search(rest)
    elif line.opcode in ("atomicrmw", "cmpxchg"):
        m = _ADDRESS_FIRST_RE.search(rest)
    else:
        plan = _asm(line)
        if plan is None or plan.action not in _ASM_ATOMICS:
            return None
        return plan.ptr.split()[-1]
    return m.group(1) if m else None


class Primitives:
    """depth(debug, fn, line): the number of innermost frames of an atomic site that are
    atomic primitives. A function is indexed once per debug info; its lines must not change
    between calls."""

    def __init__(self) -> None:
        self.debug: DebugInfo | None = None
        self._fn: IRFunction | None = None
        self._members: dict[tuple, list[IRLine]] = {}
        self._slots: set[str] = set()
        self._slot_of: dict[str, str] = {}

    def _index(self, debug: DebugInfo, fn: IRFunction) -> None:
        self.debug = debug
        self._fn = fn
        self._members = {}
        self._slots = set()
        self._slot_of = {}
        for line in fn.scan(_NEEDLES):
            if line.opcode == "alloca" and line.result:
                self._slots.add(line.result)
                continue
            if line.opcode == "load" and line.result:
                m = _SLOT_LOAD_RE.match(line.rest)
                if m:
                    self._slot_of[line.result] = m.group(1)
            for key in debug.instances(line.loc):
                self._members.setdefault(key, []).append(line)

    def _key(self, address: str | None) -> str | None:
        """An address up to the -O0 reload of a pointer argument from its stack slot."""
        if address is None:
            return None
        slot = self._slot_of.get(address)
        return "slot " + slot if slot in self._slots else address

    def _fits(self, line: IRLine, key: str | None) -> bool:
        op, rest = line.opcode, line.rest
        if op == "alloca" or op == "fence":
            return True
        if op in ("load", "store"):
            if rest.startswith(("atomic ", "volatile atomic ")):
                return key is not None and self._key(_address(line)) == key
            return _address(line) in self._slots   # the function's own stack slot
        if op in ("atomicrmw", "cmpxchg"):
            return key is not None and self._key(_address(line)) == key
        if op in ("call", "invoke"):
            if _HARMLESS_CALL_RE.search(rest):
                return True
            plan = _asm(line)   # asm.py: an atomic, a fence, a barrier, nothing, or unknown
            if plan is None or plan.action == "warning":
                return False
            return plan.action not in _ASM_ATOMICS or (key is not None and self._key(_address(line)) == key)
        return False

    def depth(self, debug: DebugInfo, fn: IRFunction, line: IRLine) -> int:
        if fn is not self._fn or debug is not self.debug:
            self._index(debug, fn)
        key = self._key(_address(line))
        depth = 0
        for instance in debug.instances(line.loc):
            members = self._members.get(instance, ())
            if not members or not all(self._fits(m, key) for m in members):
                break
            depth += 1
        return depth
