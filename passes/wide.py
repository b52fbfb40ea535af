"""16-byte atomics (`load atomic i128`, `cmpxchg ... i128`, DCAS) and libatomic calls
(`__atomic_load(i64 24, ...)`, `__atomic_compare_exchange_16(...)`), for the atomics pass.

The runtime models them with a lock-based fallback (runtime/src/atomic16.c, atomic_wide.h).
i128 values cross the ABI as two i64 halves (lo, hi) and come back as `{ i64, i64 }` (RAX:RDX);
a 16-byte CAS returns the old value only: it never fails spuriously under the lock, so
`ok = (old == expected)` is exact. A libatomic call keeps its arguments and gets the site id
appended: `@__atomic_X(args)` becomes `@__rsan_atomic_X(args, i64 site)`, the runtime entry
point of the same C signature plus the site. A `__sync_*` call or an `__atomic_*` function the
runtime does not provide is left as it is and named in a warning (never an error)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .syntax import i64_literal, read_type

_SIZED_OPS = ("load", "store", "exchange", "compare_exchange",
              "fetch_add", "fetch_sub", "fetch_and", "fetch_or", "fetch_xor", "fetch_nand",
              "add_fetch", "sub_fetch", "and_fetch", "or_fetch", "xor_fetch", "nand_fetch")
#: the libatomic functions the runtime provides as `__rsan_atomic_<name>` (+ i64 site)
RUNTIME_LIBCALLS = frozenset(
    ["load", "store", "exchange", "compare_exchange"]
    + ["%s_%d" % (op, n) for op in _SIZED_OPS for n in (1, 2, 4, 8, 16)])



@dataclass(frozen=True)
class LibcallNote:
    """An atomic library call the passes left as it is (warn) or modelled."""
    file: str
    line: int
    name: str
    warn: bool = True

    def describe(self) -> str:
        where = "%s:%d" % (self.file.rsplit("/", 1)[-1] or "?", self.line) if self.file else "?"
        return ("call to %s at %s is not modelled: it runs uninstrumented (no robustness or race "
                "check on that object)" % (self.name, where))


def split128(rw, value: str) -> tuple[str, str]:
    """`i64 lo`, `i64 hi` operands for an i128 value."""
    if re.fullmatch(r"-?\d+", value):
        v = int(value) & ((1 << 128) - 1)
        return "i64 " + i64_literal(v), "i64 " + i64_literal(v >> 64)
    lo, shifted, hi = rw.module.fresh(), rw.module.fresh(), rw.module.fresh()
    rw.emit("%s = trunc i128 %s to i64" % (lo, value))
    rw.emit("%s = lshr i128 %s, 64" % (shifted, value))
    rw.emit("%s = trunc i128 %s to i64" % (hi, shifted))
    return "i64 " + lo, "i64 " + hi


def join128(rw, pair: str, result: str) -> None:
    """Define `result` (i128) from a `{ i64, i64 }` value (lo, hi)."""
    lo, hi, lo128, hi128, shl = (rw.module.fresh() for _ in range(5))
    rw.emit("%s = extractvalue { i64, i64 } %s, 0" % (lo, pair))
    rw.emit("%s = extractvalue { i64, i64 } %s, 1" % (hi, pair))
    rw.emit("%s = zext i64 %s to i128" % (lo128, lo))
    rw.emit("%s = zext i64 %s to i128" % (hi128, hi))
    rw.emit("%s = shl i128 %s, 64" % (shl, hi128))
    rw.emit("%s = or i128 %s, %s" % (result, shl, lo128))


def load16(rw, ptr: str, order: int) -> str:
    """Returns the pointer operand, as the other atomic families do."""
    sid = rw.table.add(rw.fn, rw.line, "load", order, 16)
    pair = rw.module.fresh()
    rw.emit("%s = notail call { i64, i64 } %s(%s, i32 %d, i64 %s)" % (
        pair, rw.use("__rsan_load_16"), ptr, order, i64_literal(sid)))
    if rw.line.result is not None:
        join128(rw, pair, rw.line.result)
    return ptr


def store16(rw, ptr: str, value: str, order: int) -> None:
    sid = rw.table.add(rw.fn, rw.line, "store", order, 16)
    lo, hi = split128(rw, value)
    rw.emit("notail call void %s(%s, %s, %s, i32 %d, i64 %s)" % (
        rw.use("__rsan_store_16"), ptr, lo, hi, order, i64_literal(sid)))


def rmw16(rw, ptr: str, op: str, op_number: int, value: str, order: int) -> None:
    sid = rw.table.add(rw.fn, rw.line, "rmw", order, 16, op=op)
    lo, hi = split128(rw, value)
    pair = rw.module.fresh()
    rw.emit("%s = notail call { i64, i64 } %s(%s, %s, %s, i32 %d, i32 %d, i64 %s)" % (
        pair, rw.use("__rsan_rmw_16"), ptr, lo, hi, op_number, order, i64_literal(sid)))
    if rw.line.result is not None:
        join128(rw, pair, rw.line.result)


def cas16(rw, ptr: str, expected: str, desired: str, succ: int, fail: int, weak: bool) -> str:
    """Returns the pointer operand, as the other atomic families do."""
    sid = rw.table.add(rw.fn, rw.line, "cas", succ, 16, order_fail=fail, weak=weak)
    elo, ehi = split128(rw, expected)
    dlo, dhi = split128(rw, desired)
    pair = rw.module.fresh()
    rw.emit("%s = notail call { i64, i64 } %s(%s, %s, %s, %s, %s, i32 %d, i32 %d, i32 %d, i64 %s)" % (
        pair, rw.use("__rsan_cas_16"), ptr, elo, ehi, dlo, dhi, succ, fail, int(weak), i64_literal(sid)))
    if rw.line.result is None:
        return ptr
    old, ok, partial = rw.module.fresh(), rw.module.fresh(), rw.module.fresh()
    join128(rw, pair, old)
    rw.emit("%s = icmp eq i128 %s, %s" % (ok, old, expected))
    rw.emit("%s = insertvalue { i128, i1 } poison, i128 %s, 0" % (partial, old))
    rw.emit("%s = insertvalue { i128, i1 } %s, i1 %s, 1" % (rw.line.result, partial, ok))
    return ptr


_CALL_HEAD_RE = re.compile(r'^(.*?\b(?:call|invoke)\b)(.*?)@"?(__atomic_\w+|__sync_\w+)"?\(')


def _call_args_end(text: str, open_paren: int) -> int:
    depth = 0
    in_str = False
    for i in range(open_paren, len(text)):
        ch = text[i]
        if in_str:
            in_str = ch != '"'
            continue
        if ch == '"':
            in_str = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _arg_type(arg: str) -> str:
    ty, _ = read_type(arg)
    return ty


def _order_of(args: list[str], index: int) -> int:
    """The constant memory order argument `i32 [noundef] 5` (seq_cst when not a constant)."""
    if index >= len(args):
        return 5
    m = re.search(r"(-?\d+)\s*$", args[index])
    order = int(m.group(1)) if m else 5
    return order if 0 <= order <= 5 else 5


def libcall(rw, name: str, notes: list, decls: dict[str, str]) -> list[str] | None:
    """The rewritten line(s) of an `__atomic_*` call, or None (left alone, with a warning);
    decls gets the declaration of the runtime function it now calls."""
    from .atomics import where
    from .syntax import split_top_level

    text = rw.line.text
    short = name[len("__atomic_"):] if name.startswith("__atomic_") else ""
    if short not in RUNTIME_LIBCALLS:
        file, lineno = where(rw.table, rw.fn, rw.line)
        notes.append(LibcallNote(file or "", lineno or 0, name))
        return None
    m = _CALL_HEAD_RE.match(text)
    start = m.end() - 1 if m else -1
    end = _call_args_end(text, start) if m else -1
    if m is None or end < 0:
        file, lineno = where(rw.table, rw.fn, rw.line)
        notes.append(LibcallNote(file or "", lineno or 0, name))
        return None
    args = split_top_level(text[start + 1:end])
    size_m = re.search(r"_(\d+)$", short)
    generic = size_m is None
    if size_m is None:
        sm = re.search(r"(\d+)\s*$", args[0]) if args else None
        size = int(sm.group(1)) if sm else 0
    else:
        size = int(size_m.group(1))
    op = short.rsplit("_", 1)[0] if not generic else short
    kind = {"load": "load", "store": "store", "compare_exchange": "cas"}.get(op, "rmw")
    order_index = {"load": 1, "store": 2, "exchange": 2, "compare_exchange": 3}.get(op, 2) + (1 if generic else 0)
    if generic and op == "exchange":
        order_index = 4
    if generic and op == "compare_exchange":
        order_index = 4
    order = _order_of(args, order_index)
    if kind == "rmw":
        stem = op.replace("fetch_", "").replace("_fetch", "")
        rmw_op = {"exchange": "xchg"}.get(stem, stem)
        sid = rw.table.add(rw.fn, rw.line, "rmw", order, size, op=rmw_op)
    elif kind == "cas":
        sid = rw.table.add(rw.fn, rw.line, "cas", order, size, order_fail=_order_of(args, order_index + 1))
    else:
        sid = rw.table.add(rw.fn, rw.line, kind, order, size)
    target = "__rsan_atomic_" + short
    ret = m.group(2).strip()
    for word in ("tail", "musttail", "notail"):
        ret = re.sub(r"^%s\s+" % word, "", ret)
    decl = "declare %s @%s(%s)" % (ret or "void", target,
                                   ", ".join([_arg_type(a) for a in args] + ["i64"]))
    decls[target] = decl
    new_args = text[start + 1:end] + (", " if args else "") + "i64 " + i64_literal(sid)
    head = text[:text.rfind("@", 0, m.start(3))]
    return [head + "@" + target + "(" + new_args + text[end:]]
