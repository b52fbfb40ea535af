"""libc calls that read or write the program's memory on its behalf, beyond plain.py's memory and
string functions: formatted output into a buffer, file and socket I/O. The race detector sees the
bytes they really touch (ThreadSanitizer intercepts the same functions):

- written, measured from the return value, by a hook right after the call (the call makes no
  synchronisation, so the write may be placed at its end): `snprintf(d, n, ...)` and
  `vsnprintf` write min(ret + 1, n) bytes of d (none when ret < 0 or n == 0), `sprintf` and
  `vsprintf` ret + 1; `read(fd, b, n)`, `pread`, `recv`, `recvfrom` write ret bytes of b
  when ret > 0; `fread(p, size, n, f)` writes ret * size bytes; `fgets(s, n, f)` writes up to and
  including the NUL it stores, when it returns s (`__*_chk` forms alike);
- read, before the call: `write(fd, b, n)`, `pwrite`, `send`, `sendto` read n bytes of b;
  `fwrite(p, size, n, f)` size * n; `fputs(s, f)` and `puts(s)` up to and including the NUL.

A function of one of these names that the module defines itself (a program's own `read`) is left
alone. What is measured never exceeds what the call touched (a short fread's partial element is
not counted): a miss at worst, never a false alarm."""
from __future__ import annotations

# name -> (mode, destination arg, bound arg or None, size arg or None)
#   mode "fmt": ret + 1 capped by the bound; "count": ret when > 0; "items": ret * size arg;
#   "line": the string's extent (NUL included, at most the bound) when ret is non-null
AFTER = {
    "snprintf": ("fmt", 0, 1, None),
    "vsnprintf": ("fmt", 0, 1, None),
    "__snprintf_chk": ("fmt", 0, 1, None),
    "__vsnprintf_chk": ("fmt", 0, 1, None),
    "sprintf": ("fmt", 0, None, None),
    "vsprintf": ("fmt", 0, None, None),
    "__sprintf_chk": ("fmt", 0, None, None),
    "__vsprintf_chk": ("fmt", 0, None, None),
    "read": ("count", 1, None, None),
    "__read_chk": ("count", 1, None, None),
    "pread": ("count", 1, None, None),
    "pread64": ("count", 1, None, None),
    "recv": ("count", 1, None, None),
    "recvfrom": ("count", 1, None, None),
    "fread": ("items", 0, None, 1),
    "fread_unlocked": ("items", 0, None, 1),
    "__fread_chk": ("items", 0, None, 2),
    "fgets": ("line", 0, 1, None),
    "fgets_unlocked": ("line", 0, 1, None),
    "__fgets_chk": ("line", 0, 2, None),
}
# name -> (source arg, length arg, count arg or None): bytes read before the call
BEFORE = {
    "write": (1, 2, None),
    "pwrite": (1, 2, None),
    "pwrite64": (1, 2, None),
    "send": (1, 2, None),
    "sendto": (1, 2, None),
    "fwrite": (0, 1, 2),
    "fwrite_unlocked": (0, 1, 2),
}
# read up to and including the NUL (plain.py's string functions): name -> string arg
STRINGS_READ = {"fputs": 0, "puts": 0, "fputs_unlocked": 0}

NAMES = (*AFTER, *BEFORE, *STRINGS_READ)


def defined_functions(module) -> frozenset[str]:
    """The names of the functions the module defines (`define ... @read(`)."""
    from .syntax import FUNC_NAME_RE
    names = set()
    for fn in module.functions():
        m = FUNC_NAME_RE.match(fn.header)
        if m:
            names.add(m.group(1).strip('"'))
    return frozenset(names)


def io_hooks(work, fn, line, origins, name: str, args: list[str]) -> tuple[list[str], list[str]] | None:
    """(lines before the call, lines after it) for a call of one of NAMES, or None."""
    from .plain import STRING_EXTENT, argument_value
    dbg = ", !dbg %s" % line.dbg if line.dbg else ""
    fresh = work.module.fresh
    if name in BEFORE:
        source, length_arg, count_arg = BEFORE[name]
        if len(args) <= max(source, length_arg, count_arg or 0):
            return None
        pointer = " ".join(argument_value(args[source]))
        if not work.shared(origins, pointer):
            return [], []
        before: list[str] = []
        length = work.to_i64(line, *argument_value(args[length_arg]), before)
        if count_arg is not None:
            count = work.to_i64(line, *argument_value(args[count_arg]), before)
            product = fresh()
            before.append("  %s = mul i64 %s, %s%s" % (product, length[4:], count[4:], dbg))
            length = "i64 " + product
        before.append(work.hook(fn, line, "read", pointer, 0, length=length))
        return before, []
    if name in STRINGS_READ:
        index = STRINGS_READ[name]
        if len(args) <= index:
            return None
        pointer = " ".join(argument_value(args[index]))
        if not work.shared(origins, pointer):
            return [], []
        extent = fresh()
        work.needs_string_extent = True
        return ["  %s = call i64 @%s(%s, %s, i64 -1, i1 true)%s" % (extent, STRING_EXTENT, pointer, pointer, dbg),
                work.hook(fn, line, "read", pointer, 0, length="i64 " + extent)], []
    mode, dest, bound_arg, size_arg = AFTER[name]
    if line.opcode != "call" or not line.result or len(args) <= max(dest, bound_arg or 0, size_arg or 0):
        return None
    pointer = " ".join(argument_value(args[dest]))
    if not work.shared(origins, pointer):
        return [], []
    ret_ty = next((w for w in line.text[line.text.find(line.opcode) + len(line.opcode):].split()
                   if w == "ptr" or (w[:1] == "i" and w[1:].isdigit())), "")
    ret = line.result
    after: list[str] = []
    if mode == "line":
        if ret_ty != "ptr":
            return None
        bound = work.to_i64(line, *argument_value(args[bound_arg or 0]), after)
        extent, nonnull, length = fresh(), fresh(), fresh()
        work.needs_string_extent = True
        after += ["  %s = icmp ne ptr %s, null%s" % (nonnull, ret, dbg),
                  "  %s = call i64 @%s(%s, %s, %s, i1 true)%s" % (extent, STRING_EXTENT, pointer, pointer, bound, dbg),
                  "  %s = select i1 %s, i64 %s, i64 0%s" % (length, nonnull, extent, dbg)]
        after.append(work.hook(fn, line, "write", pointer, 0, length="i64 " + length))
        return [], after
    if not (ret_ty.startswith("i") and ret_ty[1:].isdigit()):
        return None
    wide = "i64 " + ret
    if ret_ty != "i64":
        wide = "i64 " + fresh()
        after.append("  %s = sext %s %s to i64%s" % (wide[4:], ret_ty, ret, dbg))
    if mode == "fmt":
        plus = fresh()
        after.append("  %s = add i64 %s, 1%s" % (plus, wide[4:], dbg))   # ret = -1: 0 bytes
        length = plus
        if bound_arg is not None:
            bound = work.to_i64(line, *argument_value(args[bound_arg]), after)
            below, capped = fresh(), fresh()
            after += ["  %s = icmp ult i64 %s, %s%s" % (below, plus, bound[4:], dbg),
                      "  %s = select i1 %s, i64 %s, %s%s" % (capped, below, plus, bound, dbg)]
            length = capped
    elif mode == "count":
        positive, length = fresh(), fresh()
        after += ["  %s = icmp sgt i64 %s, 0%s" % (positive, wide[4:], dbg),
                  "  %s = select i1 %s, i64 %s, i64 0%s" % (length, positive, wide[4:], dbg)]
    else:   # items: size_t ret (never negative)
        size = work.to_i64(line, *argument_value(args[size_arg or 0]), after)
        length = fresh()
        after.append("  %s = mul i64 %s, %s%s" % (length, wide[4:], size[4:], dbg))
    after.append(work.hook(fn, line, "write", pointer, 0, length="i64 " + length))
    return [], after
