"""Globals no code of the program image can read (issue 19, consequence `write-only`).

A global is write-only when it has internal or private linkage (no other unit can name it)
and every mention of it in the unit is the address of a store: `store [atomic] T v, ptr @g`
(or a constant `getelementptr` of @g there), or the address of a race hook of a write
(`__rsan_write_N`, inserted before optimisation). Its address never reaches memory, a call
or another global, so no load, RMW, compare-exchange or library call anywhere can read it.
The atomic stores must not be seq_cst (the argument, docs/reports.md §2, removes the
location's writes from the program; a seq_cst store also orders other accesses).

A write-type report of a store to such a global has the consequence `write-only`.
"""
from __future__ import annotations

import re

# `@hits = internal global i64 0, align 8, !dbg !0`   `@x = internal unnamed_addr global ...`
_DEF_RE = re.compile(r'^(@[-\w.$]+|@"[^"]*") = (internal|private) (?:[\w()]+ )*global ')
_STORE_RE = re.compile(r'^  store (atomic )?(?!volatile)(\S+) (.+?), ptr (.+?)(?: (unordered|monotonic|acquire|'
                       r'release|acq_rel|seq_cst))?, align \d+')
_HOOK_RE = re.compile(r'^  (?:notail )?call void @__rsan_write_(?:1|2|4|8|16|range)\(ptr (.+?), i64 ')
_GEP_CONST_RE = re.compile(r'^getelementptr (?:inbounds |nuw |nusw )*'
                           r'\([^,]+, ptr (@[-\w.$]+|@"[^"]*")(?:, i\d+ -?\d+)+\)$')


def _mentions(text: str, name: str) -> int:
    return len(re.findall(re.escape(name) + r'(?![-\w.$"])', text))


def _address_of(operand: str, name: str) -> bool:
    """Whether a pointer operand is @name or a constant getelementptr of it."""
    operand = operand.strip()
    operand = re.sub(r'^(?:ptr |noundef |nonnull |align \d+ |dereferenceable\(\d+\) )+', '', operand)
    if operand == name:
        return True
    m = _GEP_CONST_RE.match(operand)
    return m is not None and m.group(1) == name


def write_only_globals(top_level: list[str], function_lines: list[list[str]]) -> set[str]:
    """The IR names of the unit's write-only globals (module docstring)."""
    candidates = {m.group(1) for m in map(_DEF_RE.match, top_level) if m}
    if not candidates:
        return set()
    for text in top_level:
        m = _DEF_RE.match(text)
        for name in list(candidates):
            uses = _mentions(text, name)
            if m and m.group(1) == name:
                uses -= 1
            if uses:
                candidates.discard(name)         # in another global's initialiser, llvm.used
    for lines in function_lines:
        for text in lines:
            if not candidates:
                return candidates
            if "@" not in text or text.lstrip().startswith(("#dbg_", ";")):
                continue
            for name in [n for n in candidates if _mentions(text, n)]:
                ms = _STORE_RE.match(text)
                mh = _HOOK_RE.match(text)
                ok = False
                if ms and _address_of(ms.group(4), name) and not _mentions(ms.group(3), name):
                    ok = not (ms.group(1) and ms.group(5) == "seq_cst")
                elif mh and _address_of(mh.group(1), name) and _mentions(text, name) == 1:
                    ok = True
                if not ok:
                    candidates.discard(name)
    return candidates


def store_target(ptr_operand: str, write_only: set[str]) -> bool:
    """Whether a store's pointer operand addresses one of the write-only globals."""
    return any(_address_of(ptr_operand, name) for name in write_only)
