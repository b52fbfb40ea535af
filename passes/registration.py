"""Pass: embed the site table, the table of global variables and the rsan_module
description, registered by a constructor appended to @llvm.global_ctors (priority 0)."""
from __future__ import annotations

import re

from .debuginfo import DebugInfo
from .layout import TypeLayout, UnsizedTypeError
from .model import IRModule, print_module
from .results import Frame
from .runtime_abi import (ABI_VERSION, DECLARATIONS, FRAME_TYPE, GLOBAL_TYPE, MODULE_TYPE,
                          SITE_TYPE)
from .sites import SiteTable
from .syntax import (CTORS_RE, DBG_RE, FUNC_NAME_RE, GLOBAL_RE, SOURCE_FILENAME_RE,
                     c_string_constant, i64_literal, read_type, unescape_string)

CTOR_NAME = "@__rsan.module_ctor"
CTOR_ENTRY = "{ i32, ptr, ptr } { i32 0, ptr %s, ptr null }" % CTOR_NAME
_SKIP_LINKAGE = re.compile(r"\b(external|extern_weak|private|available_externally|thread_local"
                           r"|addrspace|alias|ifunc)\b")


class _Strings:
    def __init__(self):
        self.names: dict[str, str] = {}
        self.lines: list[str] = []

    def ref(self, text: str) -> str:
        name = self.names.get(text)
        if name is None:
            name = "@__rsan.str.%d" % len(self.names)
            lit, n = c_string_constant(text)
            self.lines.append("%s = private unnamed_addr constant [%d x i8] %s, align 1"
                              % (name, n, lit))
            self.names[text] = name
        return name


def module_globals(module: IRModule, debug: DebugInfo) -> list[tuple[str, str, str]]:
    """(IR name, IR type, source name) of the variables this module defines."""
    return [g[:3] for g in _module_globals(module, debug)]


def _module_globals(module: IRModule, debug: DebugInfo) -> list[tuple[str, str, str, str | None]]:
    """module_globals with each variable's `!dbg` (a DIGlobalVariableExpression; None for a
    constant)."""
    found = []
    top = module.top_level_lines()
    opaque = {ln[: ln.index(" = type opaque")] for ln in top if ln.endswith(" = type opaque")}
    for line in top:
        if not line.startswith("@"):
            continue
        m = GLOBAL_RE.match(line)
        if not m:
            continue
        name, prefix, rest = m.group(1), m.group(2), m.group(4)
        bare = name.strip('"')
        if bare.startswith("llvm.") or bare.startswith("__rsan.") or _SKIP_LINKAGE.search(prefix):
            continue
        ty, _ = read_type(rest)
        if not ty or ty in opaque:
            continue
        dbg = DBG_RE.search(rest)
        source = debug.global_name(dbg.group(1)) if dbg else ""
        # (a constant's parts are never named: nothing writes it, so no report is about it)
        found.append(("@" + name, ty, source or unescape_string(bare),
                      dbg.group(1) if dbg and m.group(3) == "global" else None))
    return found


# named parts of globals (members, elements) registered per module at most: the runtime scans the
# table for a report's object name (once per report and repeated stale read, not per access)
_PARTS_PER_MODULE = 4096


def _parts(layout: TypeLayout, debug: DebugInfo, ty: str, dbg: str | None, budget: list) -> list:
    """(offset, size, path) of the named parts of a global of IR type ty (debuginfo.py
    global_members), none when the debug info's type is larger than the IR's (a part outside the
    variable could name another one's address)."""
    if not dbg or budget[0] <= 0:
        return []
    parts = debug.global_members(dbg, min(256, budget[0]))
    if not parts:
        return []
    try:
        size = layout.alloc_size(ty)
    except (UnsizedTypeError, ValueError):
        return []
    if any(offset + nbytes > size for offset, nbytes, _ in parts):
        return []
    budget[0] -= len(parts)
    return parts


def _frames_global(frames: tuple[Frame, ...], strings: _Strings, cache: dict, lines: list) -> str:
    name = cache.get(frames)
    if name is None:
        name = "@__rsan.frames.%d" % len(cache)
        elems = ", ".join(
            "%s { ptr %s, ptr %s, i32 %d, i32 %d }" % (
                FRAME_TYPE, strings.ref(f.file), strings.ref(f.function), f.line, f.column)
            for f in frames)
        lines.append("%s = private constant [%d x %s] [%s], align 8"
                     % (name, len(frames), FRAME_TYPE, elems))
        cache[frames] = name
    return name


def _module_name(module: IRModule, debug: DebugInfo, module_id: str) -> str:
    name = debug.compile_unit_file()
    if name:
        return name
    for line in module.top_level_lines():
        m = SOURCE_FILENAME_RE.match(line)
        if m:
            return unescape_string(m.group(1))
    return module_id


def _append_ctor(module: IRModule) -> None:
    """Append our constructor to @llvm.global_ctors, rewriting the existing definition."""
    for i, line in enumerate(module.items):
        if isinstance(line, str) and line.startswith("@llvm.global_ctors = "):
            m = CTORS_RE.match(line)
            if not m:
                raise ValueError("unexpected @llvm.global_ctors definition: " + line[:120])
            prefix, count, elem, init, suffix = m.groups()
            entry = CTOR_ENTRY if elem == "{ i32, ptr, ptr }" else (
                "{ i32, ptr } { i32 0, ptr %s }" % CTOR_NAME)
            items = "" if init == "zeroinitializer" else init[1:-1].strip()
            items = (items + ", " if items else "") + entry
            module.items[i] = "@llvm.global_ctors = %sappending global [%d x %s] [%s]%s" % (
                prefix, int(count) + 1, elem, items, suffix)
            return
    module.items.append(
        "@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [%s]" % CTOR_ENTRY)


def _missing_declarations(module: IRModule) -> list[str]:
    """The declarations of the runtime functions that inserted code calls and the module
    does not declare yet."""
    declared = set()
    for line in module.top_level_lines():
        if line.startswith("declare"):
            m = FUNC_NAME_RE.match(line)
            if m:
                declared.add(m.group(1).strip('"'))
    for fn in module.functions():
        m = FUNC_NAME_RE.match(fn.header)
        if m:
            declared.add(m.group(1).strip('"'))
    return [DECLARATIONS[n] for n in sorted(module.used) if n not in declared]


def declare_used(module: IRModule) -> str:
    """The module's text with the runtime functions it calls declared (instrumentation in
    two steps, instrument.py)."""
    return print_module(module) + "\n" + "\n".join(_missing_declarations(module)) + "\n"


def emit_registration(module: IRModule, table: SiteTable, debug: DebugInfo,
                      module_id: str) -> IRModule:
    strings = _Strings()
    frame_cache: dict = {}
    frame_lines: list[str] = []
    out: list[str] = ["", "; pyrsan: site table and module registration"]

    site_elems = []
    for site, entry in zip(table.sites, table.entries):
        frames = ("ptr " + _frames_global(site.frames, strings, frame_cache, frame_lines)
                  if site.frames else "ptr null")
        site_elems.append("%s { i32 %d, i32 %d, i32 %d, i32 %d, i32 %d, i32 %d, %s }" % (
            SITE_TYPE, entry.kind, entry.order, entry.order_fail, entry.size, entry.op,
            len(site.frames), frames))
    glob_elems = []
    layout = TypeLayout(module.top_level_lines())
    budget = [_PARTS_PER_MODULE]
    for ir_name, ty, source, dbg in _module_globals(module, debug):
        # its members and elements first: the runtime names an address by the first entry
        # that holds it (sites.c rsan_global_lookup), `ring.tail` rather than `ring+20`
        for offset, nbytes, path in _parts(layout, debug, ty, dbg, budget):
            glob_elems.append("%s { ptr getelementptr (i8, ptr %s, i64 %d), i64 %d, ptr %s }" % (
                GLOBAL_TYPE, ir_name, offset, nbytes, strings.ref(source + path)))
        size = "i64 ptrtoint (ptr getelementptr (%s, ptr null, i32 1) to i64)" % ty
        glob_elems.append("%s { ptr %s, %s, ptr %s }" % (
            GLOBAL_TYPE, ir_name, size, strings.ref(source)))

    name_ref = strings.ref(_module_name(module, debug, module_id))
    if site_elems:
        out.append("@__rsan.sites = private constant [%d x %s] [%s], align 8"
                   % (len(site_elems), SITE_TYPE, ", ".join(site_elems)))
    if glob_elems:
        out.append("@__rsan.globals = private constant [%d x %s] [%s], align 8"
                   % (len(glob_elems), GLOBAL_TYPE, ", ".join(glob_elems)))
    out.append("@__rsan.module = private constant %s { i32 %d, i32 %d, i32 %d, i32 0, i64 %s, "
               "ptr %s, ptr %s, ptr %s }, align 8" % (
                   MODULE_TYPE, ABI_VERSION, len(site_elems), len(glob_elems),
                   i64_literal(table.id_prefix),
                   "@__rsan.sites" if site_elems else "null",
                   "@__rsan.globals" if glob_elems else "null", name_ref))
    out.extend(strings.lines)
    out.extend(frame_lines)
    out.append("")
    out.append("define internal void %s() {" % CTOR_NAME)
    out.append("  call void @__rsan_register_module(ptr @__rsan.module)")
    out.append("  ret void")
    out.append("}")
    module.used.add("__rsan_register_module")
    _append_ctor(module)

    out.append("")
    out.extend(_missing_declarations(module))
    module.items.extend(out)
    return module
