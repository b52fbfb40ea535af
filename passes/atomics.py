"""Pass: atomic instructions (load/store atomic, atomicrmw, cmpxchg, fence) become calls to
the runtime, which performs the operation itself (toolchain.md §3.1, rsan_interface.h)."""
from __future__ import annotations

import re
from typing import NoReturn

from pyrsan.abi import RMW_OP_NUMBER, primary_frame

from .localnames import LocalNames, field_offset, global_member, global_types, struct_field_counts
from .model import IRFunction, IRLine, IRModule
from .registration import module_globals
from .results import Frame, RecognisedLoop, Site, UnsupportedIRError
from .sites import SiteTable
from .asm import SPIN_ASM_PLACEHOLDER, asm_load
from .spinloops import LoopMatch, find_spin_loops
from .writeonly import store_target, write_only_globals
from .syntax import (FUNC_NAME_RE, ORDER_NUMBER, ORDERING_RE, i64_literal, read_type, split_top_level,
                     strip_keywords)
from . import wide

# value type -> (size in bytes, how it crosses the ABI as i64)
_VALUE_TYPES = {
    "i8": (1, "int"), "i16": (2, "int"), "i32": (4, "int"), "i64": (8, "int"),
    "ptr": (8, "ptr"), "float": (4, "float"), "double": (8, "float"),
}

# `call void @__atomic_store(i64 noundef 24, ptr noundef nonnull @big, ptr noundef nonnull %1, i32 noundef 5)`
LIBCALL_RE = re.compile(r'@"?(__atomic_\w+|__sync_\w+)"?\(')


def where(table: SiteTable, fn: IRFunction, line: IRLine) -> tuple[str | None, int | None]:
    frame = primary_frame(table.frames_at(fn, line))
    if frame is None or not frame.file:
        return None, None
    return frame.file, frame.line


class _Rewriter:
    def __init__(self, module: IRModule, table: SiteTable, fn: IRFunction, line: IRLine):
        self.module = module
        self.table = table
        self.fn = fn
        self.line = line
        self.indent = "  "
        self.dbg = ", !dbg %s" % line.dbg if line.dbg else ""
        self.out: list[str] = []

    def fail(self, construct: str) -> NoReturn:
        file, lineno = where(self.table, self.fn, self.line)
        raise UnsupportedIRError(construct, file, lineno)

    def emit(self, text: str) -> None:
        self.out.append(self.indent + text + self.dbg)

    def value_type(self, ty: str, what: str) -> tuple[int, str]:
        info = _VALUE_TYPES.get(ty)
        if info is None:
            self.fail("%s of type %s" % (what, ty))
        return info

    def pointer(self, operand: str, what: str) -> str:
        if not operand.startswith("ptr ") or operand.startswith("ptr addrspace("):
            self.fail("%s through pointer operand '%s'" % (what, operand))
        return operand

    def orders(self, text: str, what: str, count: int):
        m = ORDERING_RE.match(" " + text)
        if not m:
            self.fail("%s without a memory ordering" % what)
        words = m.group(3).split()
        if len(words) != count:
            self.fail("%s with orderings '%s'" % (what, " ".join(words)))
        scope = m.group(2)
        return m.group(1).strip(), [ORDER_NUMBER[w] for w in words], scope

    def to_i64(self, ty: str, value: str) -> str:
        """`i64 <operand>` for a value of type ty zero-extended to i64."""
        kind = _VALUE_TYPES[ty][1]
        if ty == "i64":
            return "i64 " + value
        tmp = self.module.fresh()
        if kind == "int":
            self.emit("%s = zext %s %s to i64" % (tmp, ty, value))
        elif kind == "ptr":
            self.emit("%s = ptrtoint ptr %s to i64" % (tmp, value))
        elif ty == "double":
            self.emit("%s = bitcast double %s to i64" % (tmp, value))
        else:
            bits = self.module.fresh()
            self.emit("%s = bitcast float %s to i32" % (bits, value))
            self.emit("%s = zext i32 %s to i64" % (tmp, bits))
        return "i64 " + tmp

    def from_i64(self, ty: str, value: str, result: str) -> None:
        """Define `result` of type ty from an i64 value (never called for ty i64)."""
        kind = _VALUE_TYPES[ty][1]
        if kind == "int":
            self.emit("%s = trunc i64 %s to %s" % (result, value, ty))
        elif kind == "ptr":
            self.emit("%s = inttoptr i64 %s to ptr" % (result, value))
        elif ty == "double":
            self.emit("%s = bitcast i64 %s to double" % (result, value))
        else:
            bits = self.module.fresh()
            self.emit("%s = trunc i64 %s to i32" % (bits, value))
            self.emit("%s = bitcast i32 %s to float" % (result, bits))

    def call_with_result(self, ty: str, result: str | None, call: str) -> None:
        """`call i64 ...` whose i64 result is converted to `result` of type ty."""
        if result is None:
            self.emit("notail call i64 " + call)
        elif ty == "i64":
            self.emit("%s = notail call i64 %s" % (result, call))
        else:
            tmp = self.module.fresh()
            self.emit("%s = notail call i64 %s" % (tmp, call))
            self.from_i64(ty, tmp, result)

    def use(self, name: str) -> str:
        self.module.used.add(name)
        return "@" + name

    # --- the instruction families -------------------------------------------------

    def load(self, rest: str, runtime: str = "__rsan_load_%d") -> str:
        parts = split_top_level(strip_keywords(rest, ("atomic", "volatile")))
        ty = parts[0]
        if ty == "i128":
            ptr, (order,), _ = self.orders(parts[1], "atomic load", 1)
            return wide.load16(self, self.pointer(ptr, "atomic load"), order)
        size, _ = self.value_type(ty, "atomic load")
        ptr, (order,), _ = self.orders(parts[1], "atomic load", 1)
        self.pointer(ptr, "atomic load")
        sid = self.table.add(self.fn, self.line, "load", order, size)
        fn = self.use(runtime % size)
        self.call_with_result(ty, self.line.result,
                              "%s(%s, i32 %d, i64 %s)" % (fn, ptr, order, i64_literal(sid)))
        return ptr

    def spin_load(self, rest: str, loop: LoopMatch) -> str:
        """The load of a recognised spin loop (spinloops.py): one attempt of a wait for
        loop.value (__rsan_spin_load_N) or for any other value (__rsan_spin_load_ne_N)."""
        parts = split_top_level(strip_keywords(rest, ("atomic",)))
        ty = parts[0]
        size, _ = self.value_type(ty, "atomic load")
        ptr, (order,), _ = self.orders(parts[1], "atomic load", 1)
        self.pointer(ptr, "atomic load")
        sid = self.table.add(self.fn, self.line, "load", order, size)
        return self.spin_call(ptr, ty, size, order, sid, loop)

    def spin_call(self, ptr: str, ty: str, size: int, order: int, sid: int, loop: LoopMatch) -> str:
        """The call of one attempt of a recognised wait reading ptr (ty, size bytes) with order,
        defining the line's result (also an asm load's: asm.py)."""
        if isinstance(loop.value, tuple) and loop.value[0] == "mask":
            return self.spin_load_mask(ptr, ty, size, order, sid, loop)
        fn = self.use("__rsan_spin_load_%s%d" % ("ne_" if loop.negated else "", size))
        if isinstance(loop.value, tuple) and loop.value[1][0] == "ptr":   # an SSA pointer (-O1)
            expected = self.to_i64("ptr", loop.value[1][1])
        else:
            _, expected = self.loop_operand(ty, loop.value)
        self.call_with_result(ty, self.line.result, "%s(%s, %s, i32 %d, i64 %s)" % (
            fn, ptr, expected, order, i64_literal(sid)))
        return ptr

    def spin_load_mask(self, ptr: str, ty: str, size: int, order: int, sid: int, loop: LoopMatch) -> str:
        """A recognised loop on some bits of the value read (spinloops.py, key ("mask", m, s, x,
        w)): one attempt of wait((p & m) == x << s) (__rsan_spin_load_mask_N; _ne_ for !=); a
        fixed x is computed again at its width w, zero-extended and shifted here."""
        assert isinstance(loop.value, tuple), "a masked wait's key (spinvalues.py _compare_masked)"
        _, mask, shift, value, width = loop.value
        fn = self.use("__rsan_spin_load_mask_%s%d" % ("ne_" if loop.negated else "", size))
        if value[0] == "int":
            expected = "i64 " + i64_literal(value[1] << shift)
        else:
            expected = self.to_i64("i%d" % width, self.fixed_value("i%d" % width, value))
            if shift:
                tmp = self.module.fresh()
                self.emit("%s = shl i64 %s, %d" % (tmp, expected.split()[1], shift))
                expected = "i64 " + tmp
        self.call_with_result(ty, self.line.result, "%s(%s, %s, i64 %s, i32 %d, i64 %s)" % (
            fn, ptr, expected, i64_literal(mask), order, i64_literal(sid)))
        return ptr

    def fixed_value(self, ty: str, fixed: tuple) -> str:
        """The operand text of a value fixed before a spin loop, computed again here: a
        constant, an SSA value from before the loop, a stack slot's content, or arithmetic
        on those, all of type ty."""
        if fixed[0] == "int":
            return str(fixed[1])
        if fixed[0] == "ext":
            return fixed[1]
        tmp = self.module.fresh()
        if fixed[0] == "entry":
            self.emit("%s = load %s, ptr %s, align 1" % (tmp, ty, fixed[1]))
        else:
            _, op, a, b = fixed
            left, right = self.fixed_value(ty, a), self.fixed_value(ty, b)
            self.emit("%s = %s %s %s, %s" % (tmp, op, ty, left, right))
        return tmp

    def loop_operand(self, ty: str, value) -> tuple[str, str]:
        """A recognised loop's constant or fixed value (spinloops.py): its operand of type ty,
        and as `i64 <operand>`."""
        if not isinstance(value, tuple):
            return str(value), "i64 " + i64_literal(value)
        typed = self.fixed_value(ty, value[1])
        return typed, self.to_i64(ty, typed)

    def bcas_loop(self, rest: str, loop: LoopMatch) -> str:
        """The cmpxchg of a recognised CAS retry loop (spinloops.py): one blocking BCAS
        (RSAN paper §4.3) with the success order; its result is the success pair
        {expected, true}, so the loop leaves at once."""
        parts = split_top_level(strip_keywords(rest, ("weak",)))
        ptr = self.pointer(parts[0], "cmpxchg")
        ty, _ = read_type(parts[1])
        _, (succ, fail), _ = self.orders(parts[2], "cmpxchg", 2)
        size, _ = self.value_type(ty, "cmpxchg")
        sid = self.table.add(self.fn, self.line, "cas", succ, size, order_fail=fail,
                             weak=rest.startswith("weak "))
        fn = self.use("__rsan_bcas_%d" % size)
        expected, expected64 = self.loop_operand(ty, loop.value)
        _, desired64 = self.loop_operand(ty, loop.desired)
        self.emit("notail call void %s(%s, %s, %s, i32 %d, i64 %s)" % (
            fn, ptr, expected64, desired64, succ, i64_literal(sid)))
        if self.line.result is not None:
            pair = "{ %s, i1 }" % ty
            partial = self.module.fresh()
            self.emit("%s = insertvalue %s poison, %s %s, 0" % (partial, pair, ty, expected))
            self.emit("%s = insertvalue %s %s, i1 true, 1" % (self.line.result, pair, partial))
        return ptr

    def store(self, rest: str) -> None:
        parts = split_top_level(strip_keywords(rest, ("atomic", "volatile")))
        ty, value = read_type(parts[0])
        if ty == "i128":
            ptr, (order,), _ = self.orders(parts[1], "atomic store", 1)
            return wide.store16(self, self.pointer(ptr, "atomic store"), value, order)
        size, _ = self.value_type(ty, "atomic store")
        ptr, (order,), _ = self.orders(parts[1], "atomic store", 1)
        self.pointer(ptr, "atomic store")
        sid = self.table.add(self.fn, self.line, "store", order, size,
                             write_only=store_target(ptr, self.table.write_only))
        v = self.to_i64(ty, value)
        fn = self.use("__rsan_store_%d" % size)
        self.emit("notail call void %s(%s, %s, i32 %d, i64 %s)" % (fn, ptr, v, order, i64_literal(sid)))

    def atomicrmw(self, rest: str) -> None:
        rest = strip_keywords(rest, ("volatile",))
        op, _, rest = rest.partition(" ")
        if op not in RMW_OP_NUMBER:
            self.fail("atomicrmw %s" % op)
        parts = split_top_level(rest)
        ptr = self.pointer(parts[0], "atomicrmw")
        operand, (order,), _ = self.orders(parts[1], "atomicrmw", 1)
        ty, value = read_type(operand)
        if ty == "i128" and op in ("xchg", "add", "sub", "and", "nand", "or", "xor",
                                   "max", "min", "umax", "umin"):
            return wide.rmw16(self, ptr, op, RMW_OP_NUMBER[op], value, order)
        size, _ = self.value_type(ty, "atomicrmw %s" % op)
        sid = self.table.add(self.fn, self.line, "rmw", order, size, op=op)
        v = self.to_i64(ty, value)
        fn = self.use("__rsan_rmw_%d" % size)
        self.call_with_result(ty, self.line.result, "%s(%s, %s, i32 %d, i32 %d, i64 %s)" % (
            fn, ptr, v, RMW_OP_NUMBER[op], order, i64_literal(sid)))

    def cmpxchg(self, rest: str, runtime: str = "__rsan_cas_%d", retry_only: bool = False) -> str:
        weak = rest.startswith("weak ")
        parts = split_top_level(strip_keywords(rest, ("weak", "volatile")))
        ptr = self.pointer(parts[0], "cmpxchg")
        ty, expected = read_type(parts[1])
        desired_part, (succ, fail), _ = self.orders(parts[2], "cmpxchg", 2)
        ty2, desired = read_type(desired_part)
        if ty == "i128" and ty2 == ty:
            return wide.cas16(self, ptr, expected, desired, succ, fail, weak)
        size, kind = self.value_type(ty, "cmpxchg")
        if ty2 != ty or kind == "float":
            self.fail("cmpxchg of type %s" % ty)
        sid = self.table.add(self.fn, self.line, "cas", succ, size, order_fail=fail, weak=weak,
                             retry_only=retry_only)
        e = self.to_i64(ty, expected)
        d = self.to_i64(ty, desired)
        fn = self.use(runtime % size)
        ret = self.module.fresh()
        self.emit("%s = notail call { i64, i64 } %s(%s, %s, %s, i32 %d, i32 %d, i32 %d, i64 %s)" % (
            ret, fn, ptr, e, d, succ, fail, int(weak), i64_literal(sid)))
        if self.line.result is None:
            return ptr
        old64 = self.module.fresh()
        self.emit("%s = extractvalue { i64, i64 } %s, 0" % (old64, ret))
        if ty == "i64":
            old = old64
        else:
            old = self.module.fresh()
            self.from_i64(ty, old64, old)
        ok64 = self.module.fresh()
        ok = self.module.fresh()
        self.emit("%s = extractvalue { i64, i64 } %s, 1" % (ok64, ret))
        self.emit("%s = trunc i64 %s to i1" % (ok, ok64))
        partial = self.module.fresh()
        pair = "{ %s, i1 }" % ty
        self.emit("%s = insertvalue %s poison, %s %s, 0" % (partial, pair, ty, old))
        self.emit("%s = insertvalue %s %s, i1 %s, 1" % (self.line.result, pair, partial, ok))
        return ptr

    def fence(self, rest: str) -> None:
        parts = split_top_level(rest)
        _, (order,), scope = self.orders(parts[0], "fence", 1)
        singlethread = 1 if scope == "singlethread" else 0
        sid = self.table.add(self.fn, self.line, "fence", order, 0)
        fn = self.use("__rsan_fence")
        self.emit("notail call void %s(i32 %d, i32 %d, i64 %s)" % (fn, order, singlethread, i64_literal(sid)))


# library calls that only ask a question: no memory access to model
_NOT_ACCESSES = {"__atomic_is_lock_free", "__atomic_always_lock_free"}
_NEEDLES = ("atomic", "cmpxchg", "fence", "@__sync_", '@"__sync_')


def _object_name(ptr: str, names: dict[str, str], local: LocalNames | None = None, bits: int = 0,
                 types: dict[str, str | None] | None = None) -> str:
    """`ptr @f` -> the source name of @f; a member or element of a global at constant indices
    (a constant `getelementptr`) -> `f+4` (a byte offset) or `f[0][1]` (its indices); a pointer
    variable or a member through one (localnames.py) -> `*f`, `c->ready`; another pointer ->
    `*%3`."""
    operand = ptr.split(" ", 1)[1].strip()
    if local is not None and operand.startswith("%"):
        name = local.name(operand, bits)
        if name:
            return name
    if operand.startswith("@"):
        base = names.get(operand) or operand[1:].strip('"')
        member = global_member(local.debug, (types or {}).get(operand), base, 0, bits) if local else None
        return member or base
    m = _CONST_GEP_NAME_RE.match(operand)
    if m:
        base = names.get(m.group(2)) or m.group(2)[1:].strip('"')
        indices = [int(i) for i in re.findall(r"i\d+ (-?\d+)", m.group(3))]
        ty = (types or {}).get(m.group(2))
        element = m.group(1).strip()
        offset = None
        if element == "i8" and len(indices) == 1 and indices[0] >= 0:
            offset = indices[0] * 8
        elif local and len(indices) == 2 and indices[0] == 0 and element.startswith("%"):
            offset = field_offset(local.debug, local.fields, ty, element, indices[1])
        member = global_member(local.debug, ty, base, offset, bits) if local and offset is not None else None
        if member:
            return member
        if element == "i8" and len(indices) == 1:
            return "%s%+d" % (base, indices[0]) if indices[0] else base
        return base + "".join("[%d]" % i for i in indices[1:])
    return "*" + operand


# `getelementptr inbounds nuw (i8, ptr @lock, i64 4)`: (element type, global, indices)
_CONST_GEP_NAME_RE = re.compile(r'^getelementptr (?:[\w(), -]+? )?\(([^(),]+), ptr (@[-\w.$]+|@"[^"]*")'
                                r'((?:, i\d+ -?\d+)*)\)$')


def atomic_instructions(fn: IRFunction, table: SiteTable):
    """The atomic instructions of fn that rewrite_atomics turns into sites, in site order
    (passes/repairs.py numbers them the same way)."""
    for line in fn.scan(_NEEDLES):
        op = line.opcode
        if op in ("call", "invoke"):
            m = LIBCALL_RE.search(line.text)
            if m and m.group(1) not in _NOT_ACCESSES:
                yield line  # rewrite_atomics: wide.libcall
            continue
        if op in ("load", "store"):
            if not line.rest.startswith(("atomic ", "volatile atomic ")):
                continue
        elif op not in ("atomicrmw", "cmpxchg", "fence"):
            continue
        yield line


def _asm_line(fn: IRFunction, index: int) -> IRLine:
    """The parsed asm statement at body line index (its debug location for the loop list)."""
    return next(line for line in fn.scan((" asm ",)) if line.index == index)


class _LoopListing:
    """RecognisedLoop entries for `--list-loops`: the names of the module's globals and of a
    function's locals, computed on the first listed loop of each."""

    def __init__(self, module: IRModule, table: SiteTable):
        self.module, self.table = module, table
        self._globals: tuple[dict[str, str], dict[str, int], dict[str, str | None]] | None = None
        self._fn: IRFunction | None = None
        self._local: LocalNames | None = None

    def loop(self, fn: IRFunction, kind: str, loop: LoopMatch, ptr: str, size: int,
             frame: Frame | None) -> RecognisedLoop:
        if self._globals is None:
            top = self.module.top_level_lines()
            self._globals = ({ir: src for ir, _, src in module_globals(self.module, self.table.debug)},
                             struct_field_counts(top), global_types(top, self.table.debug))
        names, fields, types = self._globals
        if self._fn is not fn:
            self._fn, self._local = fn, LocalNames(fn, self.table.debug, fields)
        return RecognisedLoop(kind, _object_name("ptr " + loop.location if loop.location else ptr, names,
                                                 self._local, size * 8, types),
                              loop.value, frame.file if frame else "", frame.line if frame else 0,
                              loop.desired, loop.negated)


def rewrite_atomics(module: IRModule, table: SiteTable, spin_loops: bool = False,
                    loops: list[RecognisedLoop] | None = None,
                    notes: list | None = None) -> tuple[IRModule, list[Site]]:
    """loops: when given, gets one RecognisedLoop per loop the spin-loop pass recognised.
    notes: gets a wide.LibcallNote per atomic library call left as it is."""
    first = len(table.sites)
    listing = _LoopListing(module, table)
    decls: dict[str, str] = {}
    notes = notes if notes is not None else []
    table.write_only = write_only_globals(module.top_level_lines(), [fn.lines for fn in module.functions()])
    for fn in module.functions():
        edits: dict[int, list[str]] = {}
        spins = find_spin_loops(fn) if spin_loops else {}
        for line in atomic_instructions(fn, table):
            op = line.opcode
            rw = _Rewriter(module, table, fn, line)
            if op in ("call", "invoke"):
                callee = LIBCALL_RE.search(line.text)
                assert callee is not None, "atomic_instructions yields the calls LIBCALL_RE matches"
                new = wide.libcall(rw, callee.group(1), notes, decls)
                if new is not None:
                    edits[line.index] = new
                continue
            if line.index in spins and " i128" not in line.text:
                loop = spins[line.index]
                if loop.kind == "wait":
                    ptr = rw.spin_load(line.rest, loop)
                elif loop.kind == "bcas":
                    ptr = rw.bcas_loop(line.rest, loop)
                elif loop.kind == "casloop_load":   # casloops.py: the RMW's first read
                    ptr = rw.load(line.rest, "__rsan_casloop_load_%d")
                elif loop.kind == "casloop_cas":    # casloops.py: one attempt of the RMW
                    ptr = rw.cmpxchg(line.rest, "__rsan_casloop_cas_%d")
                else:                               # casloops.py: failure only feeds a retry
                    ptr = rw.cmpxchg(line.rest, retry_only=True)
                if loops is not None and loop.listed:
                    loops.append(listing.loop(fn, "rmw" if loop.kind == "casloop_cas" else loop.kind, loop, ptr,
                                              table.sites[-1].size, primary_frame(table.sites[-1].frames)))
            else:
                getattr(rw, op)(line.rest)
            edits[line.index] = rw.out
        for index, loop in sorted(spins.items()):
            if loop.kind == "wait" and index not in edits and " asm " in fn.lines[index]:
                # an asm load (asm.py asm_load): rewrite_asm makes it the spin load
                edits[index] = [SPIN_ASM_PLACEHOLDER % len(module.asm_spins), fn.lines[index]]
                module.asm_spins.append(loop)
                if loops is not None and loop.listed:
                    _, ptr, size = asm_load(fn.lines[index]) or ("", "", 0)
                    frame = primary_frame(table.frames_at(fn, _asm_line(fn, index)))
                    loops.append(listing.loop(fn, "wait", loop, ptr, size, frame))
        fn.apply(edits)
    if decls:
        declared = {m.group(1).strip('"') for m in map(FUNC_NAME_RE.match, module.top_level_lines()) if m}
        module.items.extend(d for n, d in sorted(decls.items()) if n not in declared)
    return module, table.sites[first:]
