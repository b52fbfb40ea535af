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
from dataclasses import dataclass

from .debuginfo import DebugInfo
from .model import IRFunction, IRLine, IRModule
from .syntax import CALLEE_RE, FUNC_NAME_RE

# the opcodes that may touch memory or call
_NEEDLES = ("load", "store", "atomicrmw", "cmpxchg", "fence", "call", "invoke", "alloca", "getelementptr")
_MEMORY_OPCODES = ("load", "store", "atomicrmw", "cmpxchg", "fence", "call", "invoke")
# `%8 = getelementptr inbounds [4 x i8], ptr %5, i64 0, i64 0`: a part of %5
_GEP_BASE_RE = re.compile(r'^(?:(?:inbounds|nuw|nusw|inrange\(\S+\)) )*[^,]+, ptr (%[-\w.$]+|%"[^"]*")')
# `store ptr %8, ptr %2, align 8`: a pointer kept in a slot
_STORE_PTR_RE = re.compile(r'^ptr (%[-\w.$]+|%"[^"]*"), ptr (%[-\w.$]+|%"[^"]*")')
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
# how deep wrappers of wrappers are found (boost::atomic<T>::load -> base -> operations: 3)
_MAX_NESTING = 8
# calls that touch only the memory their pointer arguments name: fine on the function's own
# stack slots (a temporary of an inlined atomic wrapper, copied and checked by plain hooks)
_LOCAL_ONLY_RE = re.compile(r"llvm\.mem(?:cpy|move|set)\b|__rsan_(?:read|write)_")
# the failure paths of an assertion inside a wrapper (BOOST_ASSERT on the memory order)
_ASSERT_RE = re.compile(r"__assert_fail$|__assert_rtn$|abort$|llvm\.trap$")
# passes/asm.py's actions for asm that is one atomic access
_ASM_ATOMICS = ("load", "store", "rmw", "cas")


@dataclass(frozen=True)
class _Access:
    """What one memory line of a function is, for the primitive rule.

    kind: "free" (a fence, an intrinsic without memory effects, an asm barrier or an asm that
    touches no memory, an assertion's failure call), "atomic" (also an asm atomic: address is
    its address), "plain" (address), "local-call" (memcpy or a plain hook: pointers), "call" (a
    direct call of callee, address its first pointer argument) or "other"."""
    kind: str
    address: str | None = None
    callee: str | None = None
    pointers: tuple[str | None, ...] = ()


def _access(line: IRLine) -> _Access:
    op, text = line.opcode, line.text
    if op == "fence":
        return _Access("free")
    if op in ("load", "store", "atomicrmw", "cmpxchg"):
        rest = line.rest
        m = (_ADDRESS_AFTER_VALUE_RE if op in ("load", "store") else _ADDRESS_FIRST_RE).search(rest)
        address = m.group(1) if m else None
        atomic = op in ("atomicrmw", "cmpxchg") or rest.startswith(("atomic ", "volatile atomic "))
        return _Access("atomic" if atomic else "plain", address)
    if _HARMLESS_CALL_RE.search(text):
        return _Access("free")
    if " asm " in text:
        from .asm import asm_plan   # asm.py adds sites: imported here, not at the top
        found = asm_plan(text)
        if found is not None:
            plan = found[1]
            if plan.action in _ASM_ATOMICS:
                return _Access("atomic", plan.ptr.split()[-1])
            return _Access("other" if plan.action == "warning" else "free")
    callee = _callee(text)
    if callee is None:
        return _Access("other")
    if _ASSERT_RE.match(callee):
        return _Access("free")
    pointers = _pointers(text)
    if _LOCAL_ONLY_RE.match(callee):
        return _Access("local-call", pointers=pointers)
    return _Access("call", pointers[0] if pointers else None, callee)


def _callee(text: str) -> str | None:
    """The name of a direct call's callee (`f` for `call i64 @f(...)`), else None."""
    m = CALLEE_RE.search(text, _call_start(text))
    return m.group(1)[1:].strip('"') if m and m.group(1).startswith("@") else None


def _call_start(text: str) -> int:
    i = text.find(" call ")
    return i if i >= 0 else max(text.find("invoke"), 0)


def _pointers(text: str) -> tuple[str | None, ...]:
    """The pointer arguments of a call, in order (None for one that is not a plain name)."""
    from .asm import _call_args, _pointer_arg
    m = CALLEE_RE.search(text, _call_start(text))
    if m is None:
        return (None,)
    out: list[str | None] = []
    for arg in _call_args(text, m.end() - 1):
        if arg.startswith("ptr"):
            ptr, _ = _pointer_arg(arg)
            out.append(ptr.split()[-1] if ptr else None)
    return tuple(out)


class _Function:
    """One function's memory lines as accesses (each under every instance it belongs to), and
    what it knows of its own stack: its slots, the -O0 reloads of pointers kept in them, and
    which pointers name only its own stack memory (a slot, a part of one, or a reload from a
    slot into which only such pointers are stored: the -O0 reference parameter of an inlined
    wrapper)."""

    def __init__(self, debug: DebugInfo, fn: IRFunction):
        self.accesses: list[_Access] = []
        self.members: dict[tuple, list[_Access]] = {}
        self.slots: set[str] = set()
        self.slot_of: dict[str, str] = {}
        self._base: dict[str, str] = {}
        self._stored: dict[str, list[str]] = {}
        self._local: dict[str, bool] = {}
        for line in fn.scan(_NEEDLES):
            op = line.opcode
            if op == "alloca" and line.result:
                self.slots.add(line.result)
                continue
            if op == "getelementptr" and line.result:
                m = _GEP_BASE_RE.match(line.rest)
                if m:
                    self._base[line.result] = m.group(1)
                continue
            if op not in _MEMORY_OPCODES:
                continue
            if op == "load" and line.result:
                m = _SLOT_LOAD_RE.match(line.rest)
                if m:
                    self.slot_of[line.result] = m.group(1)
            elif op == "store":
                m = _STORE_PTR_RE.match(line.rest)
                if m:
                    self._stored.setdefault(m.group(2), []).append(m.group(1))
            access = _access(line)
            self.accesses.append(access)
            for key in debug.instances(line.loc):
                self.members.setdefault(key, []).append(access)

    def key(self, address: str | None) -> str | None:
        """An address up to the -O0 reload of a pointer argument from its stack slot."""
        if address is None:
            return None
        slot = self.slot_of.get(address)
        return "slot " + slot if slot in self.slots else address

    def local(self, ptr: str | None, depth: int = 0) -> bool:
        """ptr names memory of this function's own stack frame."""
        if ptr is None or depth > 16:
            return False
        if ptr in self.slots:
            return True
        known = self._local.get(ptr)
        if known is not None:
            return known
        self._local[ptr] = False   # a cycle through the stores proves nothing
        if ptr in self._base:
            result = self.local(self._base[ptr], depth + 1)
        else:
            slot = self.slot_of.get(ptr)
            stored = self._stored.get(slot, []) if slot in self.slots else []
            result = bool(stored) and all(self.local(v, depth + 1) for v in stored)
        self._local[ptr] = result
        return result


class Primitives:
    """depth(debug, fn, line): the number of innermost frames of a site (an atomic, or a call
    of a function that is an atomic primitive) that are atomic primitives.

    prepare(module, debug) indexes every function before the atomics are rewritten and finds
    the *wrappers*: functions whose whole body is a primitive, so that a call of one (a call
    site of the shadow stack, or a wrapper inside a wrapper) counts as the atomic it makes.
    A function not prepared is indexed when first asked about."""

    def __init__(self) -> None:
        self.debug: DebugInfo | None = None
        self._functions: dict[int, _Function] = {}
        self._wrappers: dict[str, bool] = {}       # name -> its atomics have an address

    def prepare(self, module: IRModule, debug: DebugInfo) -> None:
        self.debug = debug
        self._wrappers = {}
        self._functions = {}
        candidates = []
        for fn in module.functions():
            m = FUNC_NAME_RE.match(fn.header)
            f = self._functions[fn.index] = _Function(debug, fn)
            if m and f.accesses:
                candidates.append((m.group(1).strip('"'), f))
        for _ in range(_MAX_NESTING):
            grown = False
            for name, f in candidates:
                if name in self._wrappers:
                    continue
                key = next((k for k in (self._site_key(f, a) for a in f.accesses) if k), None)
                if all(self._fits(f, a, key) for a in f.accesses):
                    self._wrappers[name] = key is not None
                    grown = True
            if not grown:
                break

    def _site_key(self, f: _Function, a: _Access) -> str | None:
        """The address an atomic or a wrapper call of f accesses."""
        if a.kind == "atomic" or (a.kind == "call" and self._wrappers.get(a.callee or "")):
            return f.key(a.address)
        return None

    def _fits(self, f: _Function, a: _Access, key: str | None) -> bool:
        if a.kind == "free":
            return True
        if a.kind == "atomic":
            return key is not None and f.key(a.address) == key
        if a.kind == "plain":
            return f.local(a.address)   # the function's own stack memory
        if a.kind == "local-call":
            return all(f.local(p) for p in a.pointers)
        if a.kind == "call" and a.callee in self._wrappers:
            return not self._wrappers[a.callee] or (key is not None and f.key(a.address) == key)
        return False

    def depth(self, debug: DebugInfo, fn: IRFunction, line: IRLine) -> int:
        if debug is not self.debug:
            self.debug, self._functions, self._wrappers = debug, {}, {}
        f = self._functions.get(fn.index)
        if f is None:
            f = self._functions[fn.index] = _Function(debug, fn)
        a = _access(line)
        key = self._site_key(f, a)
        if key is None and a.kind != "atomic":
            return 0
        depth = 0
        for instance in debug.instances(line.loc):
            members = f.members.get(instance, ())
            if not members or not all(self._fits(f, m, key) for m in members):
                break
            depth += 1
        return depth
