"""Pass: site ids for the annotations of runtime/include/pyrsan.h.

The header calls `__rsan_wait_N`, `__rsan_bcas_N` and `__rsan_track_N` with site 0 (it cannot
know a site id) from helpers that are always inlined, so the call sits in the annotated
function with the annotation's source line in its inline chain. This pass gives each such
call a site of its own whose frames are the call's frames without the innermost ones that
lie in pyrsan.h: reports then name the annotation's line (`pyrsan_wait(&x, 1);` in app.c:12),
not the header. A call whose frames are all in pyrsan.h (the helper was not inlined) keeps
site 0, and the report names the caller from the shadow call stack as before.

    call void @__rsan_wait_4(ptr noundef nonnull @x, i64 noundef 1, i32 noundef 5, i64 noundef 0)
 -> call void @__rsan_wait_4(ptr noundef nonnull @x, i64 noundef 1, i32 noundef 5, i64 <site>)
"""
from __future__ import annotations

import re

from .model import IRModule
from .results import Frame, Site
from .sites import SiteTable
from .syntax import i64_literal, split_top_level

HEADER_NAME = "pyrsan.h"

# `  tail call void @__rsan_bcas_4(ptr noundef nonnull @x, i64 noundef 1, i64 noundef 2,
#    i32 noundef 2, i64 noundef 0) #3, !dbg !136`
_ANNOTATION_RE = re.compile(r'\bcall void @__rsan_(wait|bcas|track)_([1248])\((.*)\)')
_ZERO_SITE_RE = re.compile(r'^i64(?: noundef)? 0$')
_ORDER_RE = re.compile(r'^i32(?: noundef)? ([0-5])$')

# annotation -> (site kind, index of its order argument or None)
_KINDS = {"wait": ("load", 2), "bcas": ("cas", 3), "track": ("load", None)}


def _in_header(frame: Frame) -> bool:
    return frame.file.rsplit("/", 1)[-1] == HEADER_NAME


def annotation_sites(module: IRModule, table: SiteTable) -> tuple[IRModule, list[Site]]:
    first = len(table.sites)
    for fn in module.functions():
        edits: dict[int, list[str]] = {}
        for line in fn.scan(("@__rsan_wait_", "@__rsan_bcas_", "@__rsan_track_")):
            if line.opcode != "call":
                continue
            m = _ANNOTATION_RE.search(line.text)
            if not m:
                continue
            args = split_top_level(m.group(3))
            if not args or not _ZERO_SITE_RE.match(args[-1]):
                continue  # already has a site (or an unexpected shape): leave it
            frames = table.frames_at(fn, line)
            skip = 0
            while skip < len(frames) and _in_header(frames[skip]):
                skip += 1
            if skip == len(frames):
                continue  # not inlined into user code: site 0, the shadow call stack names it
            kind, order_at = _KINDS[m.group(1)]
            order = _ORDER_RE.match(args[order_at]) if order_at is not None else None
            sid = table.add(fn, line, kind, int(order.group(1)) if order else 0,
                            int(m.group(2)), frames=frames[skip:])
            args[-1] = "i64 " + i64_literal(sid)
            start, end = m.span(3)
            edits[line.index] = [line.text[:start] + ", ".join(args) + line.text[end:]]
        fn.apply(edits)
    return module, table.sites[first:]
