"""Source locations from the module's debug metadata: DILocation -> frames (innermost
first, following `inlinedAt:`), DISubprogram fallbacks, DIGlobalVariable names."""
from __future__ import annotations

import re

from .results import Frame
from .syntax import DILOCATION_RE, MD_FIELD_RE, METADATA_RE, unescape_string


class DebugInfo:
    def __init__(self, top_level_lines):
        self._raw: dict[str, str] = {}
        for line in top_level_lines:
            if line.startswith("!") and line[1:2].isdigit():
                key = line[: line.index(" ")]
                self._raw[key] = line
        self._nodes: dict[str, tuple[str, dict[str, str]] | None] = {}
        self._frames: dict[str, tuple[Frame, ...]] = {}
        self._scopes: dict[str | None, tuple[str, str, int]] = {}

    def node(self, ref: str | None):
        """(kind, fields) of metadata `!N`, or None."""
        if not ref or not ref.startswith("!"):
            return None
        if ref in self._nodes:
            return self._nodes[ref]
        result = None
        raw = self._raw.get(ref)
        fast = DILOCATION_RE.match(raw) if raw is not None and "!DILocation(" in raw else None
        if fast:
            fields = {"line": fast.group(2), "scope": fast.group(4)}
            if fast.group(3):
                fields["column"] = fast.group(3)
            if fast.group(5):
                fields["inlinedAt"] = fast.group(5)
            result = ("DILocation", fields)
        elif raw is not None:
            m = METADATA_RE.match(raw)
            if m:
                result = (m.group(2), dict(MD_FIELD_RE.findall(m.group(3))))
        self._nodes[ref] = result
        return result

    @staticmethod
    def _string(value: str | None) -> str:
        if value and value.startswith('"') and value.endswith('"'):
            return unescape_string(value[1:-1])
        return ""

    def file_of(self, ref: str | None) -> str:
        """Path of a DIFile: directory + "/" + filename unless filename is absolute, without
        "." components (`#include "./x.h"` or `clang ./a.c` would otherwise name
        "/dir/./x.h" in reports); ".." stays (it is not textual through a symbolic link)."""
        node = self.node(ref)
        if not node or node[0] != "DIFile":
            return ""
        name = self._string(node[1].get("filename"))
        directory = self._string(node[1].get("directory"))
        if not name.startswith("/") and directory:
            name = directory.rstrip("/") + "/" + name
        return _without_dot_components(name)

    def scope(self, ref: str | None) -> tuple[str, str, int]:
        """(file, function, line) of a scope: the innermost scope with a file, the enclosing
        DISubprogram's name (or linkage name) and line."""
        if ref in self._scopes:
            return self._scopes[ref]
        file = function = ""
        line = 0
        cur = ref
        for _ in range(64):
            node = self.node(cur)
            if node is None:
                break
            kind, fields = node
            if not file and "file" in fields:
                file = self.file_of(fields["file"])
            if kind == "DISubprogram":
                function = (self._string(fields.get("name"))
                            or self._string(fields.get("linkageName")))
                line = _int(fields.get("line"))
                break
            cur = fields.get("scope")
        self._scopes[ref] = (file, function, line)
        return file, function, line

    def frames(self, loc: str | None) -> tuple[Frame, ...]:
        """Frames of DILocation `loc`, innermost first; () without debug info."""
        if loc is None:
            return ()
        cached = self._frames.get(loc)
        if cached is not None:
            return cached
        frames = []
        cur = loc
        for _ in range(256):
            node = self.node(cur)
            if node is None or node[0] != "DILocation":
                break
            fields = node[1]
            file, function, sp_line = self.scope(fields.get("scope"))
            line = _int(fields.get("line"))
            column = _int(fields.get("column"))
            if line == 0:  # compiler-generated code: say "in this function"
                line, column = sp_line, 0
            frames.append(Frame(file, line, column, function))
            cur = fields.get("inlinedAt")
        result = tuple(frames)
        self._frames[loc] = result
        return result

    def instances(self, loc: str | None) -> tuple[tuple[str | None, str | None], ...]:
        """The function instances of DILocation `loc`, innermost first, one per frame of
        frames(loc): (its DISubprogram, the inlinedAt location that placed it, None for the
        function itself). Two instructions share an instance when they share a pair."""
        out = []
        cur = loc
        for _ in range(256):
            node = self.node(cur)
            if node is None or node[0] != "DILocation":
                break
            out.append((self._subprogram(node[1].get("scope")), node[1].get("inlinedAt")))
            cur = node[1].get("inlinedAt")
        return tuple(out)

    def _subprogram(self, ref: str | None) -> str | None:
        cur = ref
        for _ in range(64):
            node = self.node(cur)
            if node is None:
                return None
            if node[0] == "DISubprogram":
                return cur
            cur = node[1].get("scope")
        return None

    def subprogram_frames(self, sp: str | None) -> tuple[Frame, ...]:
        """A single frame at a function's DISubprogram line (the last-resort location)."""
        node = self.node(sp)
        if node is None or node[0] != "DISubprogram":
            return ()
        file, function, line = self.scope(sp)
        return (Frame(file, line, 0, function),)

    def global_name(self, ref: str | None) -> str:
        """Source name of a global from its `!dbg` DIGlobalVariableExpression ("" if none).

        A global the optimiser split (GlobalOpt's SRA turns `static atomic_int v[4]` whose
        elements 1 and 3 are used into `@v.0`, `@v.1`) carries a fragment of the variable
        (`DW_OP_LLVM_fragment, offset, size` in bits): its name is the element's, `v[1]`,
        `s.a`, `s.in[2].b`, else `v+4` (bytes), so that two fragments never share a name."""
        node = self.node(ref)
        fragment = None
        if node and node[0] == "DIGlobalVariableExpression":
            m = _FRAGMENT_RE.search(self._raw.get(ref or "", ""))
            fragment = (int(m.group(1)), int(m.group(2))) if m else None
            node = self.node(node[1].get("var"))
        if node and node[0] == "DIGlobalVariable":
            name = self._string(node[1].get("name"))
            if name and fragment and fragment[0] % 8 == 0:
                path = self._member_path(node[1].get("type"), *fragment)
                if path is None:
                    return f"{name}+{fragment[0] // 8}" if fragment[0] else name
                return name + path
            return name
        return ""

    def _strip_qualifiers(self, ref: str | None):
        """The node of a type without typedefs, _Atomic, const, volatile, restrict."""
        for _ in range(32):
            node = self.node(ref)
            if not node or node[0] != "DIDerivedType" or node[1].get("tag") not in _QUALIFIER_TAGS:
                return node
            ref = node[1].get("baseType")
        return None

    def _type_bits(self, ref: str | None) -> int:
        for _ in range(32):
            node = self.node(ref)
            if not node:
                return 0
            if "size" in node[1]:
                return _int(node[1].get("size"))
            ref = node[1].get("baseType")
        return 0

    def _tuple(self, ref: str | None) -> list[str]:
        raw = self._raw.get(ref or "", "")
        m = _TUPLE_RE.match(raw)
        return [e.strip() for e in m.group(1).split(",") if e.strip()] if m else []

    def _member_path(self, ref: str | None, offset: int, size: int, depth: int = 0) -> str | None:
        """`[i]` / `.m` steps from a variable of type ref to the object at offset (bits) of
        size bits: "" when it is the whole object, None when the type does not say."""
        node = self._strip_qualifiers(ref)
        if node is None or depth > 16:
            return None
        kind, fields = node
        whole = _int(fields.get("size"))
        if offset == 0 and (whole == size or kind != "DICompositeType"):
            return ""
        if kind != "DICompositeType":
            return None
        tag = fields.get("tag")
        if tag == "DW_TAG_array_type":
            counts = self._array_counts(fields)
            element = self._type_bits(fields.get("baseType"))
            if not counts or element <= 0:
                return None
            stride, strides = element, []
            for count in reversed(counts):
                strides.append(stride)
                stride *= count
            steps = ""
            for stride in reversed(strides):
                steps += f"[{offset // stride}]"
                offset %= stride
            rest = self._member_path(fields.get("baseType"), offset, size, depth + 1)
            return None if rest is None else steps + rest
        if tag in ("DW_TAG_structure_type", "DW_TAG_class_type", "DW_TAG_union_type"):
            for member_ref in self._tuple(fields.get("elements")):
                member = self.node(member_ref)
                if not member or member[0] != "DIDerivedType" or member[1].get("tag") != "DW_TAG_member":
                    continue
                start, bits = _int(member[1].get("offset")), _int(member[1].get("size"))
                if start <= offset and offset + size <= start + bits:
                    name = self._string(member[1].get("name"))
                    rest = self._member_path(member[1].get("baseType"), offset - start, size, depth + 1)
                    if not name or rest is None:
                        return None
                    return "." + name + rest
        return None

    def _array_counts(self, fields: dict) -> list[int]:
        """The element counts of an array type's dimensions, outermost first ([] when one is
        not a constant: a VLA or a flexible array member)."""
        counts = []
        for sub in self._tuple(fields.get("elements")):
            sub_node = self.node(sub)
            if not sub_node or sub_node[0] != "DISubrange" or not sub_node[1].get("count", "").isdigit():
                return []
            counts.append(int(sub_node[1]["count"]))
        return counts

    def global_members(self, ref: str | None, budget: int = 256) -> list[tuple[int, int, str]]:
        """The parts of a global with a name of their own, from its `!dbg`
        DIGlobalVariableExpression: (byte offset, byte size, path) for `.m`, `[i]`, `[i].m`, ...,
        each part after the parts inside it (so that the first that holds an address names it
        most precisely; registration.py), the whole variable not included. At most `budget`
        parts: an array whose elements would pass it is one part (`arr+8` in a report). No parts
        for a fragment of a split global (global_name names it), bit-fields, members whose
        names are reserved identifiers (`_M_i` of std::atomic, `__data`: the library's own) or
        a type the debug info does not lay out."""
        node = self.node(ref)
        if not node or node[0] != "DIGlobalVariableExpression" or _FRAGMENT_RE.search(self._raw.get(ref or "", "")):
            return []
        var = self.node(node[1].get("var"))
        if not var or var[0] != "DIGlobalVariable":
            return []
        out: list[tuple[int, int, str]] = []
        self._parts(var[1].get("type"), 0, "", out, [budget], 0)
        return out

    def _parts(self, ref: str | None, offset: int, path: str, out: list, budget: list, depth: int) -> None:
        """Append the parts inside the object of type ref at offset (bits) named path."""
        node = self._strip_qualifiers(ref)
        if node is None or node[0] != "DICompositeType" or depth > 16:
            return
        fields = node[1]
        tag = fields.get("tag")
        if tag == "DW_TAG_array_type":
            counts = self._array_counts(fields)
            element = self._type_bits(fields.get("baseType"))
            total = 1
            for count in counts:
                total *= count
            if not counts or element <= 8 or element % 8 or total > budget[0]:
                return  # (a char array is a string: `buf+5`, not one name per byte)
            inner: list = []
            self._parts(fields.get("baseType"), 0, "", inner, [budget[0] // total - 1], depth + 1)
            if total * (1 + len(inner)) > budget[0]:
                inner = []
            budget[0] -= total * (1 + len(inner))
            for k in range(total):
                index, steps = k, ""
                for count in reversed(counts):
                    steps = f"[{index % count}]" + steps
                    index //= count
                start = offset + k * element
                for off, size, rest in inner:
                    out.append((start // 8 + off, size, path + steps + rest))
                out.append((start // 8, element // 8, path + steps))
            return
        if tag not in ("DW_TAG_structure_type", "DW_TAG_class_type", "DW_TAG_union_type"):
            return
        for member_ref in self._tuple(fields.get("elements")):
            member = self.node(member_ref)
            if not member or member[0] != "DIDerivedType":
                continue
            mf = member[1]
            start, bits = _int(mf.get("offset")), _int(mf.get("size"))
            name = self._string(mf.get("name"))
            if mf.get("tag") == "DW_TAG_inheritance" or (mf.get("tag") == "DW_TAG_member" and not name):
                # a base class, or an anonymous struct/union: its members are named as ours
                self._parts(mf.get("baseType"), offset + start, path, out, budget, depth + 1)
                continue
            if (mf.get("tag") != "DW_TAG_member" or not name or _RESERVED_RE.match(name)
                    or "DIFlagBitField" in mf.get("flags", "") or "DIFlagStaticMember" in mf.get("flags", "")
                    or start % 8 or bits % 8 or bits == 0 or budget[0] <= 0):
                continue
            budget[0] -= 1
            self._parts(mf.get("baseType"), offset + start, path + "." + name, out, budget, depth + 1)
            out.append(((offset + start) // 8, bits // 8, path + "." + name))

    def compile_unit_file(self) -> str:
        for raw in self._raw.values():
            if "!DICompileUnit(" in raw:
                node = self.node(raw[: raw.index(" ")])
                if node:
                    return self.file_of(node[1].get("file"))
        return ""


_RESERVED_RE = re.compile(r"_[A-Z_]|_M_")
_FRAGMENT_RE = re.compile(r"DW_OP_LLVM_fragment,\s*(\d+),\s*(\d+)")
_TUPLE_RE = re.compile(r"^![0-9]+ = (?:distinct )?!\{(.*)\}\s*$")
_QUALIFIER_TAGS = {"DW_TAG_typedef", "DW_TAG_atomic_type", "DW_TAG_const_type", "DW_TAG_volatile_type",
                   "DW_TAG_restrict_type"}


def _without_dot_components(path: str) -> str:
    """"/a/./b//c" -> "/a/b/c", "./x.h" -> "x.h" ("" and "." stay as they are)."""
    if "/." not in path and "//" not in path and not path.startswith("./"):
        return path
    parts = [p for p in path.split("/") if p not in ("", ".")]
    joined = "/".join(parts)
    return ("/" + joined if path.startswith("/") else joined) or path


def _int(value: str | None) -> int:
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0
