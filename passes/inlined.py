"""Pass: the plain-access hooks' sites after inlining.

Plain accesses are instrumented before optimisation (instrument.py, `optimise`), so each hook's
site records the frames of the function it was written in: `std::swap` at move.h:205. The
optimiser then inlines that function into its callers, and the hook's call, now in the caller's
body, carries a `!dbg` whose `inlinedAt:` chain names every inlined caller (swap <- _Sp_atomic::swap
<- store <- the lambda <- ... <- _M_run). No `__rsan_func_entry` stands for those callers (the
shadow call stack is built after optimisation, for the calls left), so a report through the old
site showed one frame where ThreadSanitizer shows the whole chain.

After optimisation each hook call with a constant site whose `!dbg` frames differ from its site's
gets a site of its own: the same entry (kind, size) with the frames of its `!dbg`, one per
(old site, frames), so the copies of one access inlined into different callers are told apart.
A site the optimiser turned into a value (a `phi` of two sites when it merged two hooks) keeps its
sites: the merged call's location names neither access exactly.
"""
from __future__ import annotations

import re

from .model import IRModule
from .sites import SiteTable
from .syntax import i64_literal

# `call void @__rsan_write_8(ptr ... %p, i64 -43502...)` (read/write, sized or range): the site
# is the last argument
_HOOK_RE = re.compile(r"@__rsan_(?:read|write)_(?:\d+|range)\(.*, i64 (-?\d+)\)")


def resite_inlined_hooks(module: IRModule, table: SiteTable) -> int:
    """Give each plain hook inlined into another function the frames of its inline chain.
    Returns the number of sites added."""
    first = len(table.sites)
    index_of = {site.id: i for i, site in enumerate(table.sites)}
    moved: dict[tuple[int, tuple], int] = {}
    for fn in module.functions():
        edits: dict[int, list[str]] = {}
        for line in fn.scan(("@__rsan_read_", "@__rsan_write_")):
            if line.opcode != "call" or not line.dbg:
                continue
            m = _HOOK_RE.search(line.text)
            if m is None:
                continue
            old = int(m.group(1)) & ((1 << 64) - 1)
            i = index_of.get(old)
            if i is None:
                continue
            frames = table.debug.frames(line.dbg)
            own = table.sites[i].frames
            if len(frames) <= len(own) or frames[:1] != own[:1]:
                continue  # not inlined, or a location the optimiser merged: the site's own
            key = (old, frames)
            new = moved.get(key)
            if new is None:
                new = moved[key] = table.copy(i, frames)
            text = line.text[:m.start(1)] + i64_literal(new) + line.text[m.end(1):]
            edits[line.index] = [text]
        fn.apply(edits)
    return len(table.sites) - first
