"""Signed views of some bits of a spin loop's value read (spinloops.py): `sext` of the bits
and `ashr` by a constant, compared with `==` / `!=` (docs/toolchain.md §5.5).

Rule: a sign-extension is injective, so `sext_w->W(y) == c` holds iff c (read as a signed
W-bit number) lies in the signed range of w bits and `y == c mod 2^w`; outside that range it
never holds. `ashr y, k` at w bits is the sign-extension from w - k bits of `y >> k` (its top
w - k bits), so it reduces to the same rule on the bits spinvalues.py already keeps exactly
(`("VM", mask, shift, width)`). The comparison then is the masked wait's `(x & m) == c << s`
with the bits' own unsigned constant: exact, the runtime needs nothing new. A sign-extended
fixed value (a slot, an SSA value from before the loop) compared with sign-extended bits of
the same width is equal iff equal at that width. Anything else on a signed view (arithmetic,
`and` after the extension, an extension of another width, an ordered comparison) is not a
wait for one value: the loop is left alone.

The signed view is ("VX", "sextm", bits, W): the `("VM", ...)` bits `bits`, sign-extended to W
bits. It counts as a value read for spinvalues.on_read (its tag is "VX"), and every comparison
that meets one goes through compare_signed here, not spinvalues.compare."""
from __future__ import annotations

from .spinvalues import NotALoop, compare, mask_op, masked, ones, signed

SEXT = "sextm"


def is_signed_view(v) -> bool:
    return isinstance(v, tuple) and len(v) == 4 and v[:2] == ("VX", SEXT)


def sext_of(v, bits: int, width: int, to: int):
    """`sext iwidth v to ito` of bits of the value read (bits: the width of the value read), or
    None when v is not such bits."""
    vm = masked(v, bits, width)
    if vm is None or to <= width:
        return None
    return ("VX", SEXT, vm, to)


def ashr_of(v, bits: int, k: int, width: int):
    """`ashr iwidth v, k` of bits of the value read: the top width - k bits sign-extended back
    to width; None when v is not such bits or k is out of range."""
    vm = masked(v, bits, width)
    if vm is None or not 0 <= k < width:
        return None
    if k == 0:
        return vm
    top = mask_op(mask_op(vm, "lshr", k, width), "trunc", 0, width - k)
    return ("VX", SEXT, top, width)


def compare_signed(a, b, eq: bool, bits: int):
    """icmp eq/ne where a or b is a signed view (see the module's rule)."""
    if is_signed_view(b):
        a, b = b, a
    _, _, vm, to = a
    w = vm[3]
    if b[0] == "int":
        c = signed(b[1], to)
        if not -(1 << (w - 1)) <= c < 1 << (w - 1):
            return ("int", int(not eq))
        return compare(vm, ("int", c & ones(w)), eq, bits)
    if b[0] == "FX" and b[1] == "sext" and b[3] == w:
        return compare(vm, b[2], eq, bits)
    raise NotALoop("sign-extended bits of the value read compared with something else")
