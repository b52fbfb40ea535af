"""Spin-loop recognition (issue 3 item 3): a block that only re-reads one atomic location
until it holds a constant,

    1:                                    ; preds = %1, %0
      %2 = load atomic i32, ptr @f acquire, align 4
      %3 = icmp eq i32 %2, 1
      br i1 %3, label %4, label %1

is a wait(f = 1) (papers/002 §4.3). Its load becomes `__rsan_spin_load_N(p, 1, order, site)`:
one attempt that makes no event unless it reads the constant. The loop itself is unchanged.
Only loops that leave exactly when the value equals the constant are recognised (a loop
that leaves on "any other value" is not a wait for one value and is left alone)."""
from __future__ import annotations

import os
import re

from .model import IRFunction

ENV_OFF = "PYRSAN_NO_SPIN_LOOPS"

_LABEL_RE = re.compile(r'^("[^"]+"|[-\w.$]+):')
_LOAD_RE = re.compile(r'^\s+(%[-\w.$]+) = load atomic (i8|i16|i32|i64), ptr ')
_ICMP_RE = re.compile(r'^\s+(%[-\w.$]+) = icmp (eq|ne) (i8|i16|i32|i64) (%[-\w.$]+), (-?\d+)(,|$)')
_BR_RE = re.compile(r'^\s+br i1 (%[-\w.$]+), label (%[-\w.$"]+), label (%[-\w.$"]+)(,|$)')


def enabled_by_default() -> bool:
    return os.environ.get(ENV_OFF, "") in ("", "0")


def _instructions(lines: list[str], start: int):
    """(index, text) of the instructions of the block whose label is lines[start]."""
    out = []
    for i in range(start + 1, len(lines)):
        text = lines[i]
        stripped = text.strip()
        if not stripped or stripped.startswith((";", "#dbg_")):
            continue
        if not text.startswith(" ") or text.startswith("   "):
            # next label, or a continuation line (never part of a recognised loop)
            if text.startswith("   "):
                return None
            break
        out.append((i, text))
        if len(out) > 3:
            return None
    return out


def find_spin_loads(fn: IRFunction) -> dict[int, int]:
    """Body line index of each recognised spin-loop load -> the value the loop waits for."""
    found: dict[int, int] = {}
    lines = fn.lines
    for start, text in enumerate(lines):
        m = _LABEL_RE.match(text)
        if not m:
            continue
        label = "%" + m.group(1)
        insns = _instructions(lines, start)
        if not insns or len(insns) != 3:
            continue
        (li, load), (_, icmp), (_, br) = insns
        ml, mc, mb = _LOAD_RE.match(load), _ICMP_RE.match(icmp), _BR_RE.match(br)
        if not (ml and mc and mb):
            continue
        if mc.group(3) != ml.group(2) or mc.group(4) != ml.group(1) or mb.group(1) != mc.group(1):
            continue
        if "volatile" in load:
            continue
        on_true, on_false = mb.group(2), mb.group(3)
        if (on_true == label) == (on_false == label):
            continue  # not a self-loop (or both edges to itself)
        exits_on_true = on_false == label
        # the loop must leave exactly when the value equals the constant
        if exits_on_true != (mc.group(2) == "eq"):
            continue
        found[li] = int(mc.group(5))
    return found
