"""Source patches for the repairs of `pyrsan fix`: each IR-level repair becomes a line-level
edit of the source (a fence statement on its own line before or after the statement of the
access, or the access's order token replaced), and the edits become one unified diff that
`patch -p1` and `git apply` accept (a/ and b/ paths relative to the current directory).

Where a source edit would not be the repair that was checked, no edit is made and the plan
carries a manual instruction instead, with the reason: the access is in a system header, in a
macro expansion (no atomic operation is written at its position), on a line with several
atomic operations (for a fence; an order is replaced inside the access's own call), in a
statement whose boundaries are not plain (a condition, an unbraced body, a continuation line),
or in a file outside the current directory. A fence for an access in a one-line body
(`{ atomic_store(p, v); }`) goes on that line, before the access's statement or after its `;`;
one after a CAS in the condition of a one-line `if (cas(...)) return;` goes first in the (now
braced) body and on the line after the if.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field

from .abi import Frame, is_system_file
from .checker import Repair, SiteInfo
from .toolchain import is_cxx_source

C_FENCE = "atomic_thread_fence(memory_order_seq_cst);"
CXX_FENCE = "std::atomic_thread_fence(std::memory_order_seq_cst);"
C_INCLUDE = "#include <stdatomic.h>"

# The names of the operations an atomic access is written with, at the position clang's debug
# information gives it: C11 generic functions (stdatomic.h macros: the expansion position is
# the name), GNU/clang builtins, and C++ member or free functions (`x.store(`, `x->load(`,
# `std::atomic_store_explicit(`).
_C_OPERATION_RE = re.compile(
    r"(?:std::)?(?:atomic_(?:load|store|exchange|compare_exchange_(?:weak|strong)|fetch_\w+|flag_\w+)"
    r"(?:_explicit)?|__c11_atomic_\w+|__atomic_\w+|__sync_\w+)\s*\(")
_CXX_MEMBER_RE = re.compile(
    r"[\w\]\)]+(?:\s*(?:\.|->)\s*)(?:load|store|exchange|compare_exchange_(?:weak|strong)"
    r"|fetch_\w+|test_and_set|clear|wait)\s*\(")
_CXX_OPERATOR_RE = re.compile(r"[\w\]\)]+\s*(?:\+\+|--|[-+&|^]?=)")
# `memory_order_relaxed`, `std::memory_order_relaxed`, `std::memory_order::relaxed`
_ORDER_TOKEN_RE = re.compile(
    r"\b(?:std::)?memory_order(?:_|::)(relaxed|consume|acquire|release|acq_rel|seq_cst)\b")
_CONTROL_RE = re.compile(r"^(?:if|while|for|switch|do|else|case|default|return|break|continue"
                         r"|goto)\b")
# `STORE_REL(y, 1)`: what the debug position of an access inside a macro expansion shows
_MACRO_CALL_RE = re.compile(r"([A-Za-z_]\w*)\s*\(")
# a line that continues a statement begun above it: nothing can be inserted before it
_WHILE_RE = re.compile(r"^while\s*\(")
_IF_RE = re.compile(r"^if\s*\(")
_NO_STATEMENT_BEFORE_RE = re.compile(r"^(?:else|case|default|do)\b")
_INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]stdatomic\.h[>"]')


@dataclass(frozen=True)
class SourceEdit:
    repair: Repair
    file: str                   # absolute path
    line: int                   # 1-based line of the access
    action: str                 # insert_before / insert_after / replace_order / replace_line /
    #                             replace_line_and_after (the new line, and a fence after it)
    anchor: int                 # 1-based line the insertion goes before/after, or that is replaced
    text: str                   # the inserted line, or the new line


@dataclass(frozen=True)
class ManualStep:
    repair: Repair
    reason: str
    instruction: str


@dataclass(frozen=True)
class PatchPlan:
    edits: tuple[SourceEdit, ...]
    manual: tuple[ManualStep, ...]
    new_texts: dict = field(default_factory=dict)   # absolute path -> patched text
    diff: str = ""


class _Unsafe(Exception):
    """A repair with no safe source edit (the message is the reason)."""


def describe_site(site: SiteInfo | None) -> str:
    frame = site.primary if site else None
    if frame is None:
        return "an atomic access with no source position"
    return f"{os.path.basename(frame.file)}:{frame.line}:{frame.column} in {frame.function}"


# the failure order that goes with a CAS's new success order (never release / acq_rel)
_FAILURE_ORDER = {"seq_cst": "seq_cst", "acq_rel": "acquire", "acquire": "acquire"}
_ORDER_RANK = {"relaxed": 0, "consume": 1, "acquire": 1, "release": 1, "acq_rel": 2, "seq_cst": 3}


def _raised_order(current: str, wanted: str) -> str:
    """The weakest order at least as strong as both (release + acquire = acq_rel)."""
    if "seq_cst" in (current, wanted):
        return "seq_cst"
    if {current, wanted} == {"release", "acquire"} or "acq_rel" in (current, wanted):
        return "acq_rel"
    return wanted if _ORDER_RANK[wanted] >= _ORDER_RANK[current] else current


def manual_instruction(repair: Repair, site: SiteInfo | None, cxx: bool) -> str:
    where = describe_site(site)
    if repair.kind == "fence":
        fence = CXX_FENCE if cxx else C_FENCE
        return f"insert {fence} immediately {repair.position} the atomic {site.kind if site else 'access'} at {where}"
    return f"make the atomic {site.kind if site else 'access'} at {where} memory_order_{repair.order}"


def _code(line: str) -> str:
    """The line without a trailing // comment and surrounding blanks (good enough for
    statement boundaries; strings with // are rare on such lines and only make us refuse)."""
    return line.split("//", 1)[0].strip()


def _statement_start(lines: list[str], index: int) -> int:
    """0-based index of the first line of the statement that contains line ``index``."""
    i = index
    while i > 0:
        previous = _code(lines[i - 1])
        if previous == "" or previous.startswith("#") or previous.endswith((";", "{", "}", "*/")):
            break
        i -= 1
    return i


def _is_comment(code: str) -> bool:
    return code.startswith(("/*", "*")) or code.endswith("*/")


def _previous_code(lines: list[str], index: int) -> str:
    """The code of the nearest line above ``index`` that is neither blank nor a comment."""
    for i in range(index - 1, -1, -1):
        code = _code(lines[i])
        if code and not _is_comment(code):
            return code
    return ""


def _statement_end(lines: list[str], start: int) -> int:
    """0-based index of the line holding the `;` that ends the statement starting at
    ``start`` (parentheses balanced), or raise _Unsafe."""
    depth = 0
    for i in range(start, min(len(lines), start + 40)):
        code = _code(lines[i])
        for position, char in enumerate(code):
            if char in "([":
                depth += 1
            elif char in ")]":
                depth -= 1
            elif char == "{" and depth == 0:
                raise _Unsafe("the access is in a statement with a block")
            elif char == ";" and depth == 0:
                if code[position + 1:].strip():
                    raise _Unsafe("another statement follows on the same line")
                return i
    raise _Unsafe("the end of the statement was not found")


def _empty_while_end(lines: list[str], start: int, index: int) -> int:
    """For an access on line ``index`` in the condition of `while (...)` starting at line
    ``start`` whose body is empty (`;` or `{}`, a spin loop), the 0-based line that ends the
    loop: "right after the access" is then right after the loop, since an iteration does
    nothing but evaluate the condition again (for a recognised wait, passes/repairs.py puts
    the repair there too; the patched program is checked again either way). Else _Unsafe."""
    chars = [(i, c) for i in range(start, min(len(lines), start + 40)) for c in _code(lines[i]) + " "]
    depth, k = 0, 0
    for k, (i, c) in enumerate(chars):
        depth += (c == "(") - (c == ")")
        if c == ")" and depth == 0:
            break
    else:
        raise _Unsafe("the end of the loop's condition was not found")
    if index > chars[k][0]:
        raise _Unsafe("the access is in the loop's body, not in its condition")
    body = [(i, c) for i, c in chars[k + 1:] if not c.isspace()]
    if body[:1] and body[0][1] == ";":
        return body[0][0]
    if len(body) >= 2 and body[0][1] == "{" and body[1][1] == "}":
        return body[1][0]
    raise _Unsafe("the access is in the condition of a loop with a body")


def _indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _check_operation(lines: list[str], frame: Frame) -> None:
    text = lines[frame.line - 1]
    at = text[max(frame.column - 1, 0):]
    if frame.column <= 0 or not (_C_OPERATION_RE.match(at) or _CXX_MEMBER_RE.match(at)
                                 or _CXX_OPERATOR_RE.match(at) or _member_call_at(text, frame.column)):
        macro = _MACRO_CALL_RE.match(at) if frame.column > 0 else None
        if macro:
            raise _Unsafe(f"the access is in the expansion of macro {macro.group(1)}")
        raise _Unsafe("no atomic operation is written at that position (a macro expansion?)")


def _member_call_at(text: str, column: int) -> bool:
    """clang may place a C++ member call at the member name: `x.store(` with column at `store`."""
    before = text[: max(column - 1, 0)].rstrip()
    return before.endswith((".", "->")) and _CXX_MEMBER_RE.match(
        "o." + text[column - 1:]) is not None


def _order_span(lines: list[str], frame: Frame) -> tuple[int, int]:
    """The lines (0-based, inclusive) of the call at the access, parentheses balanced."""
    first = frame.line - 1
    depth = 0
    opened = False
    for i in range(first, min(len(lines), first + 20)):
        code = _code(lines[i])
        start = frame.column - 1 if i == first else 0
        for char in code[start:] if i == first else code:
            if char == "(":
                depth += 1
                opened = True
            elif char == ")":
                depth -= 1
                if opened and depth == 0:
                    return first, i
    raise _Unsafe("the end of the call was not found")


def _call_end(line: str, column: int) -> int | None:
    """The index just after the `)` that closes the call written at ``column`` (1-based) of
    ``line``, or None when it is not on this line."""
    code = line.split("//", 1)[0]
    depth = 0
    for i in range(max(column - 1, 0), len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
            if depth < 0:
                return None
    return None


def _one_line_body(line: str, column: int) -> tuple[int, int] | None:
    """For an access at ``column`` (1-based) of a line holding a whole body `... { S1; S2; }`,
    the indices where the statement holding the access starts (after `{` or the `;` of the
    statement before, blanks skipped) and just after its closing `;`; None when the line is not
    such a body (one `{` before the access, one `}` after it, no `{`, `}` or control keyword
    inside, parentheses balanced)."""
    code = line.split("//", 1)[0]
    at = column - 1
    open_at, close_at = code.find("{"), code.rfind("}")
    if not 0 <= open_at < at < close_at or code.count("{") != 1 or code.count("}") != 1:
        return None
    depth, start, end = 0, open_at + 1, None
    for i in range(open_at + 1, close_at):
        c = code[i]
        depth += (c == "(") - (c == ")")
        if c == ";" and depth == 0:
            if i < at:
                start = i + 1
            else:
                end = i + 1
                break
    if end is None or depth != 0:
        return None
    while start < at and code[start].isspace():
        start += 1
    if _CONTROL_RE.match(code[start:at + 1]) and not code[start:].startswith("return"):
        return None
    return start, end


class _FilePatch:
    def __init__(self, path: str, cxx: bool):
        self.path = path
        self.cxx = cxx
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            self.text = handle.read()
        self.lines = self.text.split("\n")
        self.before: dict[int, list[str]] = {}
        self.after: dict[int, list[str]] = {}
        self.replaced: dict[int, str] = {}
        self.inline: set[int] = set()      # lines that got a fence inside a one-line body

    def fence_line(self, statement_first: int) -> str:
        return _indentation(self.lines[statement_first]) + (CXX_FENCE if self.cxx else C_FENCE)

    def plan_fence(self, repair: Repair, frame: Frame) -> SourceEdit:
        index = frame.line - 1
        body = _one_line_body(self.lines[index], frame.column) if frame.column > 0 else None
        if body is not None:
            return self._fence_in_body(repair, frame, *body)
        start = _statement_start(self.lines, index)
        first = _code(self.lines[start])
        if start != index and repair.position == "before":
            raise _Unsafe("the access is on a continuation line of its statement")
        if repair.position == "before":
            if first.startswith("}") or _NO_STATEMENT_BEFORE_RE.match(first):
                raise _Unsafe("no statement boundary before the access's line")
            previous = _previous_code(self.lines, start)
            if previous and not previous.endswith((";", "{", "}")) and not previous.startswith("#"):
                raise _Unsafe("the line before is not the end of a statement")
            line = self.fence_line(start)
            self.before.setdefault(start, []).append(line)
            return SourceEdit(repair, self.path, frame.line, "insert_before", start + 1, line)
        if _IF_RE.match(first) and start == index:
            return self._fence_after_if_condition(repair, frame)
        if _WHILE_RE.match(first):
            end = _empty_while_end(self.lines, start, index)
        elif _CONTROL_RE.match(first):
            raise _Unsafe("the access is in a condition or a jump, not in a statement of its own")
        else:
            end = _statement_end(self.lines, start)
        line = self.fence_line(start)
        self.after.setdefault(end, []).append(line)
        return SourceEdit(repair, self.path, frame.line, "insert_after", end + 1, line)

    def _fence_after_if_condition(self, repair: Repair, frame: Frame) -> SourceEdit:
        """`if (cas(...)) return;` on one line, a fence after the access in its condition: the
        fence goes first in the body, braced (`if (cas(...)) { FENCE return; }`), and on the
        line after the statement (the path where the condition is false); each path runs
        exactly one of them, right after the condition, as the checked repair does. Only when
        the access is in the condition, its body is one statement ending the line and no
        `else` follows."""
        index = frame.line - 1
        line = self.lines[index]
        code = line.split("//", 1)[0].rstrip()
        opening = code.find("(")
        end = _call_end(code, opening + 1)  # just after the condition's `)`
        close = end - 1 if end is not None else -1
        if close < 0 or not opening < frame.column - 1 < close:
            raise _Unsafe("the access is in a condition or a jump, not in a statement of its own")
        body = code[close + 1:].strip()
        if not body.endswith(";") or any(c in body for c in "{}") or body.count(";") != 1 or \
                _CONTROL_RE.match(body) and not re.match(r"(?:return|break|continue|goto)\b", body):
            raise _Unsafe("the access is in the condition of an if whose body is not one statement on its line")
        if _previous_code(self.lines[::-1], len(self.lines) - 1 - index).startswith("else"):
            raise _Unsafe("the access is in the condition of an if with an else")
        if index in self.replaced:
            raise _Unsafe("the line already has another change")
        fence = CXX_FENCE if self.cxx else C_FENCE
        at = line.index(body, close + 1)
        new = line[:at] + "{ " + fence + " " + body + " }" + line[at + len(body):]
        self.replaced[index] = new
        self.inline.add(index)
        self.after.setdefault(index, []).append(self.fence_line(index))
        return SourceEdit(repair, self.path, frame.line, "replace_line_and_after", frame.line, new)

    def _fence_in_body(self, repair: Repair, frame: Frame, start: int, end: int) -> SourceEdit:
        """A fence inside a one-line body (`void st(atomic_int *p) { atomic_store(p, 1); }`):
        right before the statement of the access, or right after its `;`, on the same line."""
        index = frame.line - 1
        if index in self.replaced:
            raise _Unsafe("the line already has another change")
        line = self.lines[index]
        statement = line[start:end]
        if repair.position == "after" and re.match(r"return\b", statement):
            raise _Unsafe("the access is in a return statement: nothing can follow it in the body")
        fence = CXX_FENCE if self.cxx else C_FENCE
        new = (line[:start] + fence + " " + line[start:] if repair.position == "before"
               else line[:end] + " " + fence + line[end:])
        self.replaced[index] = new
        self.inline.add(index)
        return SourceEdit(repair, self.path, frame.line, "replace_line", frame.line, new)

    def plan_order(self, repair: Repair, site: SiteInfo, frame: Frame) -> SourceEdit:
        first, last = _order_span(self.lines, frame)
        if first != last:
            raise _Unsafe("the call spans several lines")
        if first in self.inline:
            raise _Unsafe("the line already has an inserted fence")
        text = self.replaced.get(first, self.lines[first])
        # only the call's own arguments: another atomic operation may follow on the line
        # (`if (a.load(o)) r = b.load(o);`); the replacements keep every token's position
        # before the call's end (a longer or shorter order only moves what follows it)
        end = _call_end(self.lines[first], frame.column)
        if end is None:
            raise _Unsafe("the end of the call was not found")
        end += len(text) - len(self.lines[first])
        tokens = list(_ORDER_TOKEN_RE.finditer(text, frame.column - 1, end))
        wanted = 2 if site.kind == "cas" else 1
        if len(tokens) != wanted:
            raise _Unsafe(f"expected {wanted} memory order argument{'s' if wanted > 1 else ''} on the line, "
                          f"found {len(tokens)}")
        new = text
        for k, token in reversed(list(enumerate(tokens))):
            spelled = token.group(0)
            wanted_order = repair.order if k == 0 else _FAILURE_ORDER.get(repair.order, "seq_cst")
            order = _raised_order(token.group(1), wanted_order)
            new = new[:token.start()] + spelled[: len(spelled) - len(token.group(1))] + order \
                + new[token.end():]
        self.replaced[first] = new
        return SourceEdit(repair, self.path, frame.line, "replace_order", first + 1, new)

    def patched(self) -> str:
        out: list[str] = []
        needs_include = not self.cxx and (self.before or self.after or self.inline) and not any(
            _INCLUDE_RE.match(line) for line in self.lines)
        for i, line in enumerate(self.lines):
            out.extend(self.before.get(i, ()))
            out.append(self.replaced.get(i, line))
            out.extend(self.after.get(i, ()))
        if needs_include:
            includes = [i for i, line in enumerate(out) if line.lstrip().startswith("#include")]
            at = includes[-1] + 1 if includes else 0
            out.insert(at, C_INCLUDE)
        return "\n".join(out)


def _relative(path: str, root: str) -> str | None:
    relative = os.path.relpath(path, root)
    return None if relative.startswith("..") or os.path.isabs(relative) else relative


def unified_diff(old: str, new: str, relative: str) -> str:
    """A unified diff (a/, b/ paths) that patch -p1 and git apply accept, with the
    `\\ No newline at end of file` marker where the text has no final newline."""
    chunks = []
    for line in difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile="a/" + relative, tofile="b/" + relative):
        chunks.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(chunks)


def plan_patch(repairs: tuple[Repair, ...], sites: tuple[SiteInfo, ...], root: str) -> PatchPlan:
    """Source edits for ``repairs`` (sites: the unrepaired program's site tables; root: the
    directory the diff's paths are relative to)."""
    by_key = {(s.module, s.index): s for s in sites}
    accesses_per_line: dict[tuple[str, int], set[int]] = {}
    for site in sites:
        frame = site.primary
        if site.is_access and frame is not None:
            accesses_per_line.setdefault((os.path.realpath(frame.file), frame.line), set()).add(frame.column)
    files: dict[str, _FilePatch] = {}
    edits: list[SourceEdit] = []
    manual: list[ManualStep] = []
    for repair in repairs:
        repaired = by_key.get((repair.module, repair.index))
        cxx = is_cxx_source(repair.module)
        try:
            if repaired is None or repaired.primary is None:
                raise _Unsafe("the access has no source position")
            frame = repaired.primary
            if is_system_file(frame.file):
                raise _Unsafe("the access is in a system header")
            path = os.path.realpath(frame.file)
            if not os.path.isfile(path):
                raise _Unsafe(f"{frame.file} is not readable")
            if _relative(path, root) is None:
                raise _Unsafe(f"{frame.file} is outside the current directory")
            if len(accesses_per_line.get((path, frame.line), ())) > 1 and repair.kind == "fence":
                raise _Unsafe("the line has several atomic operations")
            patch = files.get(path)
            if patch is None:
                patch = files[path] = _FilePatch(path, cxx)
            if frame.line > len(patch.lines):
                raise _Unsafe("the line is past the end of the file")
            _check_operation(patch.lines, frame)
            edits.append(patch.plan_fence(repair, frame) if repair.kind == "fence"
                         else patch.plan_order(repair, repaired, frame))
        except _Unsafe as why:
            manual.append(ManualStep(repair, str(why), manual_instruction(repair, repaired, cxx)))
    new_texts = {}
    diff = []
    for path, patch in sorted(files.items()):
        new = patch.patched()
        if new != patch.text:
            new_texts[path] = new
            diff.append(unified_diff(patch.text, new, _relative(path, root) or path))
    return PatchPlan(tuple(edits), tuple(manual), new_texts, "".join(diff))
