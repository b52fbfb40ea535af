"""The data the passes hand to the driver (docs/interfaces.md §1)."""
from __future__ import annotations

from dataclasses import dataclass

from pyrsan.abi import Frame

__all__ = ["Frame", "Site", "InstrumentResult", "RecognisedLoop", "UnsupportedIRError"]


@dataclass(frozen=True)
class Site:
    """One instrumented instruction. kind: load, store, rmw, cas, fence, call, and read /
    write for plain accesses (size: the access size; for a range, its length when constant,
    else 0).

    order is the C11 order name (relaxed, acquire, release, acq_rel, seq_cst; "" for calls
    and plain accesses).
    The fields after `frames` are additions with defaults: the CAS failure order, the
    RMW operation (LLVM name, e.g. "add"), the CAS weak flag, retry_only: the CAS's failure
    only feeds its loop's retry (passes/casloops.py: the loop is one read-modify-write), and
    primitive: how many innermost frames are atomic primitives (passes/primitives.py).
    """
    id: int
    kind: str
    order: str
    size: int
    frames: tuple[Frame, ...]
    order_fail: str = ""
    op: str = ""
    weak: bool = False
    retry_only: bool = False
    primitive: int = 0


@dataclass(frozen=True)
class RecognisedLoop:
    """A loop the spin-loop pass treats as one blocking operation (spinloops.py).

    kind: "wait" (a spin loop: leaves when the location holds `value`, or, with `negated`,
    any other value), "bcas" (a CAS retry loop: `value` -> `desired`) or "rmw" (a CAS
    retry loop computing the new value from the old one: an atomic read-modify-write). obj names the
    atomic object (its source name when it is a global, else "*<IR pointer>")."""
    kind: str
    obj: str
    value: int | tuple
    file: str
    line: int
    desired: int | tuple = 0
    negated: bool = False

    def describe(self) -> str:
        """`spin loop at f.c:12 (wait for f == 1)`, `CAS retry loop at f.c:20 (bcas x: 0 -> 1)`."""
        where = "%s:%d" % (self.file.rsplit("/", 1)[-1] or "?", self.line)
        if self.kind == "rmw":
            return "CAS retry loop at %s (read-modify-write of %s)" % (where, self.obj)
        if self.kind == "bcas":
            return "CAS retry loop at %s (bcas %s: %s -> %s)" % (where, self.obj, _shown(self.value),
                                                                 _shown(self.desired))
        value, obj = _shown(self.value), self.obj
        if isinstance(self.value, tuple) and self.value[0] == "mask":
            # some bits of the location (spinloops.py): `(x & 0xffff0000) == 65536`
            _, mask, shift, fixed, _ = self.value
            obj = "(%s & %#x)" % (obj, mask)
            value = str(fixed[1] << shift) if fixed[0] == "int" else \
                "a value fixed before the loop" + (" << %d" % shift if shift else "")
        return "spin loop at %s (wait for %s %s %s)" % (where, obj, "!=" if self.negated else "==", value)


@dataclass(frozen=True)
class InstrumentResult:
    ir_text: str
    sites: tuple[Site, ...]
    loops: tuple[RecognisedLoop, ...] = ()
    asm: tuple = ()            # notes (describe(), warn) on inline asm and atomic library calls


class UnsupportedIRError(Exception):
    """IR the passes cannot instrument; str() is one line naming the construct and file:line."""

    exit_code = 2

    def __init__(self, construct: str, file: str | None = None, line: int | None = None):
        self.construct = construct
        self.file = file
        self.line = line
        where = "%s:%d" % (file, line or 0) if file else "unknown location"
        super().__init__("unsupported %s at %s" % (construct, where))


def _shown(value) -> str:
    """A loop's constant, or what it says of a value fixed before the loop (spinloops.py)."""
    return str(value) if isinstance(value, int) else "a value fixed before the loop"
