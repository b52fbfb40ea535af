"""Pass: plain (non-atomic) memory accesses, for race detection (rsan_interface.h).

A call to the runtime is inserted BEFORE each access; the access itself is kept:

    %v = load i32, ptr %p, align 4          call void @__rsan_read_4(ptr %p, i64 <site>)
                                      ->    %v = load i32, ptr %p, align 4
    store <3 x float> %w, ptr @g            call void @__rsan_write_range(ptr @g, i64 12, i64 <site>)

- loads and stores of every type: the store size from the data layout (layout.py); sizes
  1/2/4/8/16 call `__rsan_read_N`/`__rsan_write_N`, other sizes the `_range` hooks;
- `llvm.memcpy/memmove` (+ `.inline`): read of the source, write of the destination, n bytes;
  `llvm.memset` (+ `.inline`): write;
- libc: `memcpy`/`mempcpy`/`memmove` (d, s, n), `memset` (d, c, n), `bzero`/`explicit_bzero`
  (d, n), and the functions that stop early, with the extent they really touch (reporting
  bytes a call never compares could be a false alarm), measured before the call by a small
  helper (`__rsan_string_extent`): `memcmp`/`bcmp` read both up to and including the first
  difference (at most n), `strlen(s)` reads strlen(s)+1, `strcpy(d, s)` reads and writes
  strlen(s)+1, `strncpy(d, s, n)` reads min(strnlen(s, n)+1, n) and writes n,
  `strcmp`/`strncmp` read up to and including the first difference or NUL (at most n);
  the `_FORTIFY_SOURCE` variants (`__memcpy_chk`, `__strcpy_chk`, ...) alike.

Skipped, because no other thread can reach the memory (escape.py): private stack slots (allocas
whose address never escapes, and what is derived from them); constant globals (never written);
the runtime's own tables (`@__rsan.*`) and `@llvm.*`; pointers in non-default address spaces
(segment-relative on x86, as ThreadSanitizer skips them); accesses through null/undef/poison.
Atomic instructions are not plain (atomics.py handles them).

Volatile accesses are also shown to the controlled scheduler (docs/scheduling.md "Volatile
spin loops"): after a volatile load of an integer or pointer of at most 8 bytes in a block on a
cycle, or in a short helper the optimiser will inline (the pass runs before inlining),
`__rsan_volatile_load(p, value)`; after every volatile store, `__rsan_volatile_store(p)`.
A loop that waits on a volatile word then yields like one that waits on an atomic.

Also skipped, as ThreadSanitizer does: a read followed in the same block by a write of at least
the same size through the same pointer, with no call, atomic or fence in between. Any access of
another thread that races with the read races with the write too (same thread, same clock), so
the verdict is the same and the hot `x += v` pattern costs one hook instead of two.
"""
from __future__ import annotations

import re

from . import libcio
from .atomics import where
from .escape import PointerOrigins, simple_pointer
from .layout import TypeLayout, UnsizedTypeError
from .model import IRFunction, IRLine, IRModule
from .results import Site, UnsupportedIRError
from .sites import SiteTable
from .spinloops import lines_in_cycles
from .syntax import CALLEE_RE, GLOBAL_RE, i64_literal, read_type, split_top_level

HOOK_SIZES = (1, 2, 4, 8, 16)

# memory intrinsics: name prefix -> (source argument or None, destination argument or None)
_INTRINSICS = (
    ("llvm.memcpy.inline.", (1, 0)),
    ("llvm.memcpy.", (1, 0)),
    ("llvm.memmove.", (1, 0)),
    ("llvm.memset.inline.", (None, 0)),
    ("llvm.memset.", (None, 0)),
)
# libc functions with a length argument: name -> (read args, write args, length arg)
_LIBC_LENGTH = {
    "memcpy": ((1,), (0,), 2),
    "mempcpy": ((1,), (0,), 2),
    "memmove": ((1,), (0,), 2),
    "memset": ((), (0,), 2),
    # _FORTIFY_SOURCE's checking variants (one more argument: the destination's size)
    "__memcpy_chk": ((1,), (0,), 2),
    "__mempcpy_chk": ((1,), (0,), 2),
    "__memmove_chk": ((1,), (0,), 2),
    "__memset_chk": ((), (0,), 2),
    "bzero": ((), (0,), 1),
    "explicit_bzero": ((), (0,), 1),
}
# functions that read up to a difference or a NUL: name -> (first string, second string or
# None, bound arg or None, whether a NUL ends the reading)
_LIBC_STRING = {
    "strlen": (0, None, None, True),
    "strcpy": (1, None, None, True),
    "strncpy": (1, None, 2, True),
    "__strcpy_chk": (1, None, None, True),
    "__strncpy_chk": (1, None, 2, True),
    "strcmp": (0, 1, None, True),
    "strncmp": (0, 1, 2, True),
    "memcmp": (0, 1, 2, False),
    "bcmp": (0, 1, 2, False),
}
_NEEDLES = ("load ", "store ", "@llvm.mem") + tuple(
    "@%s(" % name for name in (*_LIBC_LENGTH, *_LIBC_STRING, *libcio.NAMES))

# Parameter attributes that may precede an argument's value (LangRef "Parameter Attributes").
_PARAM_ATTRIBUTES = frozenset((
    "align", "alignstack", "allocalign", "allocptr", "byref", "byval", "captures",
    "dead_on_return", "dead_on_unwind", "dereferenceable", "dereferenceable_or_null",
    "elementtype", "immarg", "inalloca", "initializes", "inreg", "nest", "noalias", "nocapture",
    "nofpclass", "nofree", "nonnull", "noundef", "preallocated", "range", "readnone", "readonly",
    "returned", "signext", "sret", "swiftasync", "swifterror", "swiftself", "writable",
    "writeonly", "zeroext"))
_WORD_RE = re.compile(r"[a-z_]+")
_UNUSABLE_POINTERS = ("null", "undef", "poison", "zeroinitializer")
# a line between a read and a write that keeps the read: synchronisation or a call
_SYNC_RE = re.compile(r"call |invoke | atomic |atomicrmw |cmpxchg |fence ")

# An internal helper (one per module that needs it): how many bytes of a and b a comparison
# or string function reads, up to and including the first difference (or NUL, when nul_ends),
# at most n.
STRING_EXTENT = "__rsan_string_extent"
_STRING_EXTENT_DEFINITION = """
define internal i64 @__rsan_string_extent(ptr %a, ptr %b, i64 %n, i1 %nul_ends) nounwind {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %body ]
  %bound = icmp uge i64 %i, %n
  br i1 %bound, label %done, label %body
body:
  %pa = getelementptr i8, ptr %a, i64 %i
  %ca = load i8, ptr %pa, align 1
  %pb = getelementptr i8, ptr %b, i64 %i
  %cb = load i8, ptr %pb, align 1
  %next = add i64 %i, 1
  %differ = icmp ne i8 %ca, %cb
  %zero = icmp eq i8 %ca, 0
  %nul = and i1 %zero, %nul_ends
  %stop = or i1 %differ, %nul
  br i1 %stop, label %stopped, label %loop
stopped:
  ret i64 %next
done:
  ret i64 %i
}"""


def argument_value(arg: str) -> tuple[str, str]:
    """(type, value) of a call argument, without its attributes:
    `ptr noundef align 8 dereferenceable(24) %p` -> (`ptr`, `%p`)."""
    ty, rest = read_type(arg)
    while True:
        m = _WORD_RE.match(rest)
        if not m or m.group(0) not in _PARAM_ATTRIBUTES:
            return ty, rest
        word = m.group(0)
        rest = rest[m.end():]
        if rest.startswith("("):
            depth = 0
            for i, ch in enumerate(rest):
                depth += ch == "("
                depth -= ch == ")"
                if depth == 0:
                    rest = rest[i + 1:]
                    break
        rest = rest.lstrip()
        if word == "align" and rest[:1].isdigit():
            rest = rest.split(" ", 1)[1] if " " in rest else ""


def call_arguments(text: str, callee_end: int) -> list[str] | None:
    """The top-level argument texts of the call whose callee ends at text[callee_end] == "("."""
    depth = 0
    i = callee_end
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i = text.find('"', i + 1)
            if i < 0:
                return None
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
            if depth == 0:
                inner = text[callee_end + 1:i].strip()
                return split_top_level(inner) if inner else []
        i += 1
    return None


def constant_globals(module: IRModule) -> frozenset[str]:
    """`@name` of every constant global (never written: no race on it)."""
    found = set()
    for line in module.top_level_lines():
        if line.startswith("@"):
            m = GLOBAL_RE.match(line)
            if m and m.group(3) == "constant":
                found.add("@" + m.group(1))
    return frozenset(found)


class _Pass:
    def __init__(self, module: IRModule, table: SiteTable):
        self.module = module
        self.table = table
        self.layout = TypeLayout(module.top_level_lines())
        self.constants = constant_globals(module)
        self.needs_string_extent = False
        self.defined = libcio.defined_functions(module)
        self.after: dict[int, list[str]] = {}   # line index -> hooks right after the call (libcio.py)

    # --- deciding what is shared ---------------------------------------------------------

    def shared(self, origins: PointerOrigins, pointer: str) -> bool:
        """Whether the pointer operand text (`ptr %p`) may point at memory another thread sees."""
        if not pointer.startswith("ptr ") or pointer.startswith("ptr addrspace("):
            return False
        value = pointer[4:].strip()
        if value in _UNUSABLE_POINTERS:
            return False
        if value in origins.private:
            return False
        base = origins.underlying(value)
        if base in origins.private or base in self.constants:
            return False
        # the runtime's own tables and LLVM's special globals
        return not base.startswith(('@"__rsan', "@__rsan", "@llvm.", '@"llvm.'))

    # --- emitting --------------------------------------------------------------------------

    def hook(self, fn: IRFunction, line: IRLine, kind: str, pointer: str, size: int,
             length: str | None = None) -> str:
        """One hook call line. length: an `i64 <value>` for a range whose size is dynamic."""
        sid = i64_literal(self.table.add(fn, line, kind, 0, size))
        dbg = ", !dbg %s" % line.dbg if line.dbg else ""
        if length is None and size in HOOK_SIZES:
            name = "__rsan_%s_%d" % (kind, size)
            args = "%s, i64 %s" % (pointer, sid)
        else:
            name = "__rsan_%s_range" % kind
            args = "%s, %s, i64 %s" % (pointer, length or "i64 %d" % size, sid)
        self.module.used.add(name)
        return "  notail call void @%s(%s)%s" % (name, args, dbg)

    def to_i64(self, line: IRLine, ty: str, value: str, out: list[str]) -> str:
        """`i64 <value>` for an integer length argument of type ty."""
        if ty == "i64":
            return "i64 " + value
        if value.lstrip("-").isdigit():
            return "i64 %d" % (int(value) & ((1 << int(ty[1:])) - 1))
        tmp = self.module.fresh()
        dbg = ", !dbg %s" % line.dbg if line.dbg else ""
        out.append("  %s = zext %s %s to i64%s" % (tmp, ty, value, dbg))
        return "i64 " + tmp

    # --- the access shapes -----------------------------------------------------------------

    def access(self, fn: IRFunction, line: IRLine, origins: PointerOrigins) -> tuple[str, str, int] | None:
        """(kind, pointer operand, size) of a plain load/store to instrument, else None."""
        rest = line.rest
        if rest.startswith("volatile "):
            rest = rest[len("volatile "):]
        if rest.startswith("atomic "):
            return None
        parts = split_top_level(rest)
        if len(parts) < 2:
            return None
        if line.opcode == "load":
            kind, ty = "read", parts[0]
        else:
            kind, ty = "write", read_type(parts[0])[0]
        pointer = parts[1]
        if not self.shared(origins, pointer):
            return None
        try:
            size = self.layout.store_size(ty)
        except UnsizedTypeError:
            file, lineno = where(self.table, fn, line)
            raise UnsupportedIRError("%s of type %s" % (line.opcode, ty), file, lineno) from None
        if size == 0:
            return None
        return kind, pointer, size

    def call(self, fn: IRFunction, line: IRLine, origins: PointerOrigins) -> list[str] | None:
        """The hook lines to put before a memory intrinsic or libc call (None: not one)."""
        m = CALLEE_RE.search(line.text, line.text.find(line.opcode))
        if m is None or not m.group(1).startswith("@"):
            return None
        name = m.group(1)[1:].strip('"')
        args = None
        out: list[str] = []
        reads: tuple[int, ...]
        if name.startswith("llvm.mem"):
            for prefix, (src, dst) in _INTRINSICS:
                if name.startswith(prefix):
                    args = call_arguments(line.text, m.end(1))
                    if args is None or len(args) < 3:
                        return None
                    reads, writes = ((src,) if src is not None else ()), (dst,)
                    length = argument_value(args[2])
                    break
            else:
                return None
        elif name in _LIBC_LENGTH:
            reads, writes, length_arg = _LIBC_LENGTH[name]
            args = call_arguments(line.text, m.end(1))
            if args is None or len(args) <= max((*reads, *writes, length_arg)):
                return None
            length = argument_value(args[length_arg])
        elif name in _LIBC_STRING:
            return self.string_call(fn, line, origins, name)
        elif name in libcio.NAMES and name not in self.defined:
            args = call_arguments(line.text, m.end(1))
            got = libcio.io_hooks(self, fn, line, origins, name, args) if args is not None else None
            if got is None:
                return None
            if got[1]:
                self.after[line.index] = got[1]
            return got[0]
        else:
            return None
        ty, value = length
        if not re.fullmatch(r"i\d+", ty):
            return None
        constant = value.lstrip("-").isdigit()
        n = self.to_i64(line, ty, value, out)
        size = int(n[4:]) if constant else 0
        if constant and size == 0:
            return out
        for kind, indices in (("read", reads), ("write", writes)):
            for index in indices:
                pointer = " ".join(argument_value(args[index]))
                if self.shared(origins, pointer):
                    out.append(self.hook(fn, line, kind, pointer, size, length=n))
        return out

    def string_call(self, fn: IRFunction, line: IRLine, origins: PointerOrigins,
                    name: str) -> list[str] | None:
        first, second, bound_arg, nul_ends = _LIBC_STRING[name]
        args = call_arguments(line.text, line.text.find("@" + name + "(") + len(name) + 1)
        if args is None or len(args) <= max(first, second or 0, bound_arg or 0):
            return None
        out: list[str] = []
        source = " ".join(argument_value(args[first]))
        other = " ".join(argument_value(args[second])) if second is not None else source
        if bound_arg is not None:
            bty, bvalue = argument_value(args[bound_arg])
            bound = self.to_i64(line, bty, bvalue, out)
        else:
            bound = "i64 -1"
        reads = [p for p in dict.fromkeys((source, other)) if self.shared(origins, p)]
        writes = []
        if name in ("strcpy", "strncpy", "__strcpy_chk", "__strncpy_chk"):
            dest = " ".join(argument_value(args[0]))
            if self.shared(origins, dest):
                writes.append(dest)
        if not reads and not writes:
            return out or None
        dbg = ", !dbg %s" % line.dbg if line.dbg else ""
        extent = self.module.fresh()
        out.append("  %s = call i64 @%s(%s, %s, %s, i1 %s)%s" % (
            extent, STRING_EXTENT, source, other, bound, "true" if nul_ends else "false", dbg))
        self.needs_string_extent = True
        for pointer in reads:
            out.append(self.hook(fn, line, "read", pointer, 0, length="i64 " + extent))
        for pointer in writes:
            # strncpy pads the destination with NULs: it always writes n bytes
            length = bound if bound_arg is not None else "i64 " + extent
            out.append(self.hook(fn, line, "write", pointer, 0, length=length))
        return out

    # --- one function ----------------------------------------------------------------------

    def run(self, fn: IRFunction) -> None:
        lines = fn.lines
        found = list(fn.scan(_NEEDLES))
        if not found:
            return
        origins = PointerOrigins(fn)
        edits: dict[int, list[str]] = {}
        accesses: list[tuple[IRLine, str, str, int]] = []
        for line in found:
            if line.opcode in ("load", "store"):
                if origins.private and simple_pointer(line.text) in origins.private:
                    continue   # the bulk of -O0 code: skip it before the full parse
                got = self.access(fn, line, origins)
                if got is not None:
                    accesses.append((line, *got))
            elif line.opcode in ("call", "invoke"):
                hooks = self.call(fn, line, origins)
                trailing = self.after.pop(line.index, [])
                if hooks or trailing:
                    edits[line.index] = (hooks or []) + [line.text] + trailing
        covered = _reads_covered_by_writes(accesses, lines)
        cycles: set[int] | None = None
        for line, kind, pointer, size in accesses:
            after: list[str] = []
            if line.rest.startswith("volatile "):
                if kind == "read" and cycles is None:
                    cycles = set(range(len(lines))) if _is_load_helper(fn) else lines_in_cycles(fn)
                after = self.volatile(line, kind, pointer, size, cycles or set())
            if line.index in covered:
                if after:
                    edits[line.index] = [line.text, *after]
                continue
            edits[line.index] = [self.hook(fn, line, kind, pointer, size), line.text, *after]
        fn.apply(edits)

    def volatile(self, line: IRLine, kind: str, pointer: str, size: int, cycles: set[int]) -> list[str]:
        """The scheduler call to put after a volatile access (module docstring), or none."""
        dbg = ", !dbg %s" % line.dbg if line.dbg else ""
        if kind == "write":
            self.module.used.add("__rsan_volatile_store")
            return ["  call void @__rsan_volatile_store(%s)%s" % (pointer, dbg)]
        ty = split_top_level(line.rest[len("volatile "):])[0]
        if line.index not in cycles or not line.result or size > 8 or not re.fullmatch(r"i\d+|ptr", ty):
            return []
        out = []
        value = line.result
        if ty != "i64":
            value = self.module.fresh()
            cast = "ptrtoint" if ty == "ptr" else "zext"
            out.append("  %s = %s %s %s to i64%s" % (value, cast, ty, line.result, dbg))
        self.module.used.add("__rsan_volatile_load")
        out.append("  call void @__rsan_volatile_load(%s, i64 %s)%s" % (pointer, value, dbg))
        return out


_HELPER_LINKAGE_RE = re.compile(r"^define\s+(?:internal|private|linkonce_odr|linkonce|available_externally)\b")


def _is_load_helper(fn: IRFunction) -> bool:
    """A short function the optimiser will inline (internal or inline linkage), such as
    Concurrency Kit's ck_pr_md_load_uint or a READ_ONCE wrapper: the passes run before
    inlining, so the loop that calls it is not visible here, and its volatile loads count as
    if they were in a loop."""
    return bool(_HELPER_LINKAGE_RE.match(fn.header)) and len(fn.lines) <= 40


def _reads_covered_by_writes(accesses, lines: list[str]) -> set[int]:
    """Line indices of reads that a later write of the same block covers (module docstring)."""
    covered: set[int] = set()
    pending: dict[str, list[tuple[int, int]]] = {}   # pointer -> (line index, size) of reads
    for line, kind, pointer, size in accesses:
        if kind == "read":
            pending.setdefault(pointer, []).append((line.index, size))
            continue
        for index, read_size in pending.pop(pointer, ()):
            if read_size <= size and not any(
                    not text.startswith("  ") or _SYNC_RE.search(text)
                    for text in lines[index + 1:line.index]):
                covered.add(index)
    return covered


def instrument_plain_accesses(module: IRModule, table: SiteTable) -> tuple[IRModule, list[Site]]:
    first = len(table.sites)
    work = _Pass(module, table)
    for fn in module.functions():
        work.run(fn)
    if work.needs_string_extent:
        module.items.append(_STRING_EXTENT_DEFINITION)
    return module, table.sites[first:]
