"""The symbolic values of the spin-loop recognition (spinloops.py): what a loop's walk knows
of each SSA value and stack slot, and how comparisons and branches narrow what the value read
may be."""
from __future__ import annotations

import re


class NotALoop(Exception):
    """The region does something a failed iteration must not (or that we cannot follow)."""


# symbolic values: ("int", n) a constant; ("V",) the value read (the CAS's old value);
# ("OK",) the CAS success bit; ("PAIR",) the cmpxchg result; ("pred", what, C, positive) a
# condition: what "V" -> (V == C) if positive else (V != C); what "OK" -> OK or !OK;
# ("entry", slot) what a stack slot held when the loop was entered; ("ext", name) an SSA
# value defined before the loop (loop-invariant); ("expr", op, a, b) op (`add nsw`) of two
# such values, at the width of the value read; ("VM", mask, shift, width) some bits of the value
# read, `(V & mask) >> shift` as a `width`-bit value (masked() below).
TRUE, FALSE = ("int", 1), ("int", 0)


def ones(bits: int) -> int:
    return (1 << bits) - 1


def masked(v, bits: int, width: int):
    """The value read as ("VM", mask, shift, width) when v is it, or it zero-extended, or some of
    its bits (bits: the width of the value read; width: the type v has here), else None.
    The mask keeps only the bits that can reach the result: within the value read, at or above
    the shift, below shift + width."""
    if v == ("V",) and width == bits:
        return ("VM", ones(bits), 0, bits)
    if v == ("VX", "zext"):
        return ("VM", ones(bits), 0, width)
    if v[0] == "VM" and v[3] == width:
        return v
    return None


def mask_op(v, op: str, c: int, width: int):
    """`and` with the constant c, `lshr` by c, `trunc` / `zext` to width of a masked value
    (None: not one of these, or a shift out of range)."""
    _, m, s, w = v
    if op == "and":
        return ("VM", m & ((c & ones(w)) << s), s, w)
    if op == "lshr":
        if not 0 <= c < w:
            return None
        return ("VM", m & ~ones(s + c), s + c, w)
    if op == "trunc":
        return ("VM", m & (ones(width) << s), s, width)
    if op == "zext":
        return ("VM", m, s, width)
    return None


def literal(text: str):
    text = text.strip()
    if text == "true":
        return TRUE
    if text == "false":
        return FALSE
    if re.fullmatch(r"-?\d+", text):
        return ("int", int(text))
    if text == "null":
        return ("int", 0)
    return None


def fixed(v) -> bool:
    """Whether a symbolic value is the same in every iteration and known how to compute again
    where the loop reads: a constant, a stack slot no iteration changes, an SSA value from
    before the loop, or arithmetic on those."""
    return v[0] in ("int", "entry", "ext", "expr")


def mentions(v, part) -> bool:
    return v == part or (isinstance(v, tuple) and any(isinstance(x, tuple) and mentions(x, part) for x in v))


def on_read(v) -> bool:
    """Whether a symbolic value depends on the value read (or the CAS's outcome)."""
    return v[0] in ("V", "VX", "VM", "PAIR") or (v[0] == "pred")


def negate(v):
    if v[0] == "ctr":
        return v
    if v[0] == "pred":
        return ("pred", v[1], v[2], not v[3])
    if v in (TRUE, FALSE):
        return FALSE if v == TRUE else TRUE
    raise NotALoop("negation of a non-boolean")


def signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def compare(a, b, eq: bool, bits: int):
    """icmp eq/ne of two symbolic values (bits: the width of the value read). Constants
    compared with the value read are kept as LLVM prints them: signed, at that width."""
    if a[0] == "int" and b[0] != "int":
        a, b = b, a
    if b[0] == "VM" and a[0] != "VM":
        a, b = b, a
    if a[0] == "VM":
        return _compare_masked(a, b, eq, bits)
    if not on_read(a) and not on_read(b) and not (a[0] == "int" and b[0] == "int") and \
            "ctr" in (a[0], b[0]):
        return ("ctr", "cmp")
    if b == ("V",) and a[0] in ("ext", "entry", "expr"):
        a, b = b, a     # eq and ne are symmetric (`me != load(&x)`, -O1's `icmp eq ptr %old, %v`)
    if a == ("V",) and b[0] in ("ext", "entry", "expr"):
        # a value fixed before the loop (an SSA value defined outside it, or a stack slot
        # no iteration writes): the loop waits for it (`while (load(&rd_pos) != rd)`)
        return ("pred", "V", ("sym", b), eq)
    if b[0] == "VX" and a[0] == "FX":
        a, b = b, a
    if a[0] == "VX" and b[0] == "FX":
        # both widened the same way from the width of the value read: equal iff equal at
        # that width, so the loop waits for the fixed value itself (its slot or SSA value
        # is read at that width); another extension or width is not told apart: left alone
        if b[1] != a[1] or b[3] != bits:
            raise NotALoop("a fixed value widened from another width or otherwise")
        return ("pred", "V", ("sym", b[2]), eq)
    if b[0] != "int":
        raise NotALoop("comparison without a constant")
    if a[0] == "int":
        return TRUE if (a[1] == b[1]) == eq else FALSE
    if a == ("V",):
        return ("pred", "V", signed(b[1], bits), eq)
    if a[0] == "VX":
        # the value read, sign- or zero-extended: equal to C iff C is in the range of the
        # extension and the value equals C at its own width
        c = b[1]
        lo, hi = (-(1 << (bits - 1)), 1 << (bits - 1)) if a[1] == "sext" else (0, 1 << bits)
        if not lo <= c < hi:
            return FALSE if eq else TRUE
        return ("pred", "V", signed(c, bits), eq)
    if a[0] == "pred" and b[1] in (0, 1):
        # a boolean compared with 0 / 1 (clang -O0: `icmp ne i8 %b, 0`)
        return a if (b[1] == 1) == eq else negate(a)
    raise NotALoop("comparison")


def _compare_masked(a, b, eq: bool, bits: int):
    """`(V & m) >> s == b` (width w): the wait for `(V & m) == b << s`, the key ("mask", m, s, b,
    w) (b ("int", c) or a value fixed before the loop, of w bits). The bits of all of V with no
    shift are the value read itself. A constant with a bit outside what the masked value can
    hold is never equal; a fixed value is compared by the runtime as it is (a bit outside the
    mask: never equal, rsan_interface.h), so it must fit in 64 bits once shifted."""
    _, m, s, w = a
    whole = m == ones(bits) and s == 0
    if b[0] == "int":
        c = b[1] & ones(w)
        if (c << s) & ~m:
            return FALSE if eq else TRUE
        if whole:
            return ("pred", "V", signed(c, bits), eq)
        return ("pred", "V", ("mask", m, s, ("int", c), w), eq)
    if b[0] in ("ext", "entry", "expr"):
        if whole and w == bits:
            return ("pred", "V", ("sym", b), eq)
        if w + s > 64:
            raise NotALoop("a fixed value shifted beyond 64 bits")
        return ("pred", "V", ("mask", m, s, b, w), eq)
    if b[0] == "FX" and b[1] == "zext" and b[3] + s <= 64:
        # a fixed value zero-extended (clang -O0 compares a char in int): the same number
        return ("pred", "V", ("mask", m, s, b[2], b[3]), eq)
    raise NotALoop("some bits of the value read compared with something not fixed")


def narrow(cond, taken: bool, assume):
    """The assumption (on V, on OK) under which the branch goes `taken`, None if impossible.
    On V: None (unknown), ("eq", C) or ("ne", frozenset of constants)."""
    on_v, on_ok = assume
    if cond in (TRUE, FALSE):
        return assume if (cond == TRUE) == taken else None
    if cond[0] == "ctr":              # a counter decides: both ways, nothing learnt of V
        return assume
    if cond[0] != "pred":
        raise NotALoop("branch on a non-boolean")
    want = cond[3] == taken          # the compared fact must hold (True) or fail (False)
    if cond[1] == "OK":
        if on_ok is not None and on_ok != want:
            return None
        return (on_v, want)
    c = cond[2]
    if want:                          # V == C
        if on_v is None or (on_v[0] == "ne" and c not in on_v[1]) or on_v == ("eq", c):
            return (("eq", c), on_ok)
        return None
    if on_v is not None and on_v[0] == "eq":
        return assume if on_v[1] != c else None
    return (("ne", (on_v[1] if on_v else frozenset()) | {c}), on_ok)
