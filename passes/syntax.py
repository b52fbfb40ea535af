"""Regular expressions and small lexers for the textual LLVM IR that llvmlite prints.

The patterns several passes share live here, each with a sample of the line it matches; a
pattern that one pass alone uses (the instruction shapes of spinloops, casloops, asm, escape...)
lives beside it, with its sample too.
"""
from __future__ import annotations

import re

from pyrsan import abi

# `define dso_local i32 @foo(i32 noundef %0) local_unnamed_addr #0 !dbg !56 {`
DEFINE_RE = re.compile(r"^define\b.*\{\s*$")
# `declare void @__atomic_store(i64, ptr, ptr, i32) local_unnamed_addr #2`
#  (also matches `define`; group 1 is the function name, quoted or not)
FUNC_NAME_RE = re.compile(r'^(?:declare|define)\b[^@]*@("(?:[^"\\]|\\.)*"|[-\w.$]+)\(')

# `  %2 = load atomic i64, ptr @y acquire, align 8, !dbg !65`
# `  %"x.y" = tail call i32 @f()`   `  store atomic i32 1, ptr @x release, align 4`
# Instructions are indented by exactly two spaces; continuation lines of `invoke`,
# `switch` and `landingpad` and `#dbg_value` records are indented further.
INSTR_RE = re.compile(
    r'^  (?:(%[-\w.$]+|%"[^"]*") = )?((?:tail |musttail |notail )?)([a-z_]+)\b')

# `  %3 = atomicrmw add ptr @x, i32 %0 monotonic, align 4, !dbg !71`  -> `!71`
DBG_RE = re.compile(r"!dbg (![0-9]+)")

# Trailing ordering words with an optional syncscope:
# `ptr @x syncscope("singlethread") acquire`   `i32 3 acq_rel acquire`
ORDERING_RE = re.compile(
    r'^(.*?)(?:\s*\bsyncscope\("([^"]*)"\))?'
    r"((?:\s+(?:unordered|monotonic|acquire|release|acq_rel|seq_cst))+)\s*$")

# `!64 = !DILocation(line: 7, column: 3, scope: !56, atomGroup: 1, atomRank: 1)`
METADATA_RE = re.compile(r"^(![0-9]+) = (?:distinct )?!(\w+)\((.*)\)\s*$")
# the common shape of a location, parsed without the generic field splitter
DILOCATION_RE = re.compile(
    r"^(![0-9]+) = (?:distinct )?!DILocation\(line: (\d+)(?:, column: (\d+))?, scope: (![0-9]+)"
    r"(?:, inlinedAt: (![0-9]+))?")
# one `field: value` of a specialised metadata node: `name: "foo"`, `scope: !56`, `line: 7`
MD_FIELD_RE = re.compile(r'(\w+): ("(?:[^"\\]|\\.)*"|[^,]+)')

# `@x = dso_local global i32 0, align 4, !dbg !0`
# `@"q.x" = internal global { i32 } { i32 1 }, align 4`
GLOBAL_RE = re.compile(r'^@("[^"]*"|[-\w.$]+) = (.*?)\b(global|constant) (.*)$')

# `@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 65535, ptr @f, ptr null }]`
CTORS_RE = re.compile(
    r"^@llvm\.global_ctors = (.*?)appending global \[(\d+) x (\{[^{}]*\})\] "
    r"(\[.*\]|zeroinitializer)(.*)$")

# `source_filename = "a.c"`
SOURCE_FILENAME_RE = re.compile(r'^source_filename = "(.*)"\s*$')

# LLVM's ordering keyword -> the runtime's order number (unordered and monotonic are relaxed)
ORDER_NUMBER = {
    "unordered": abi.ORDER_NUMBER["relaxed"],
    "monotonic": abi.ORDER_NUMBER["relaxed"],
    **{name: abi.ORDER_NUMBER[name] for name in ("acquire", "release", "acq_rel", "seq_cst")},
}
ORDER_NAME = abi.ORDER_NAME

_OPEN = "([{<"
_CLOSE = ")]}>"


def split_top_level(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside brackets and string literals; parts are stripped.

    `ptr getelementptr inbounds (i8, ptr @a, i64 8), i32 1` -> two parts.
    """
    if not any(c in text for c in '([{<"'):
        return [p.strip() for p in text.split(sep)]
    parts = []
    depth = 0
    start = 0
    in_str = False
    for i, ch in enumerate(text):
        if in_str:
            if ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def strip_keywords(text: str, words: tuple[str, ...]) -> str:
    """Drop leading keywords in any order: `volatile atomic i32 ...` -> `i32 ...`."""
    changed = True
    while changed:
        changed = False
        for w in words:
            if text.startswith(w + " "):
                text = text[len(w) + 1:]
                changed = True
    return text


def read_type(text: str) -> tuple[str, str]:
    """Split `T rest` into the leading type and the rest: `{ i32 } { i32 1 }` -> (`{ i32 }`, `{ i32 1 }`).

    Handles `[N x T]`, `<N x T>`, `{ ... }`, `<{ ... }>`, `ptr addrspace(1)`, `%"quoted"` names.
    """
    text = text.lstrip()
    if not text:
        return "", ""
    if text[0] in "[{<":
        depth = 0
        for i, ch in enumerate(text):
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth -= 1
                if depth == 0:
                    return text[: i + 1], text[i + 1:].lstrip()
        return text, ""
    if text.startswith('%"'):
        end = text.index('"', 2)
        return text[: end + 1], text[end + 1:].lstrip()
    m = re.match(r"[^\s,]+", text)
    if m is None:
        return "", text
    ty = m.group(0)
    rest = text[m.end():].lstrip()
    if rest.startswith("addrspace("):
        end = rest.index(")")
        ty = ty + " " + rest[: end + 1]
        rest = rest[end + 1:].lstrip()
    return ty, rest


def unescape_string(s: str) -> str:
    """Decode an IR/metadata string body (LLVM prints `"` and `\\` as `\\22`, `\\5C`) to text."""
    if "\\" not in s:
        return s
    raw = _HEX_ESCAPE_RE.sub(lambda m: bytes([int(m.group(1), 16)]), s.encode("utf-8"))
    return raw.decode("utf-8", errors="replace")


_HEX_ESCAPE_RE = re.compile(rb"\\([0-9A-Fa-f]{2})")


def c_string_constant(text: str) -> tuple[str, int]:
    """IR `c"..."` literal for a NUL-terminated string, and its length in bytes."""
    data = text.encode("utf-8") + b"\0"
    body = "".join(
        chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x5C) else "\\%02X" % b for b in data)
    return 'c"%s"' % body, len(data)


def i64_literal(value: int) -> str:
    """An i64 constant for an unsigned 64-bit value, printed signed as LLVM does."""
    value &= (1 << 64) - 1
    return str(value - (1 << 64) if value >= 1 << 63 else value)

# The callee of a call/invoke: `call void (ptr, ...) @printf(ptr @.str)` -> `@printf`;
# `call void %12(ptr %7)` -> `%12`; `invoke void @"_Z1fv$x"()` -> `@"_Z1fv$x"`
CALLEE_RE = re.compile(r'(?:^|[\s(])(@"[^"]*"|@[-\w.$]+|%"[^"]*"|%[-\w.$]+)\(')
# `call void asm sideeffect "", "~{memory}"()`: inline assembly (no callee symbol)
ASM_CALL_RE = re.compile(r'\b(?:call|invoke|callbr)\b[^@%"]*\basm\b')

# `attributes #0 = { noinline naked nounwind "frame-pointer"="all" }`
ATTRIBUTE_GROUP_RE = re.compile(r"^attributes (#\d+) = \{(.*)\}\s*$")

# `%struct.S = type { i64, i32, [5 x i8] }`   `%"class.std::a" = type <{ ptr, i8 }>`
# `%struct.opaque = type opaque`
NAMED_TYPE_RE = re.compile(r'^(%"[^"]*"|%[-\w.$]+) = type (.*)$')
# a local value or label: `%5`, `%arrayidx`, `%"x.y"`
LOCAL_NAME_RE = re.compile(r'%"[^"]*"|%[-\w.$]+')
