"""Source names of the location a recognised loop reads through a pointer variable (the `-v`
list of loops): `*f` for `atomic_int *f`, `c->ready` for `&c->ready`, found from the debug
records of the function (`#dbg_value(ptr %0, !V, ...)` of a parameter or a value at -O1 and
above, `#dbg_declare(ptr %2, !V, ...)` of the slot clang -O0 loads the pointer from) and the
variable's DILocalVariable type; a member by its offset (`getelementptr i8, ptr %0, i64 4`)
or its field index in a struct type whose fields are the members in order. None when the
pointer is not such a variable (the caller keeps its IR name)."""
from __future__ import annotations

import re

from .debuginfo import DebugInfo
from .model import IRFunction
from .syntax import NAMED_TYPE_RE, split_top_level

_DBG_VAR_RE = re.compile(r"#dbg_(value|declare)\(ptr (%[-\w.$]+), (![0-9]+), !DIExpression\(\),")
_DEF_RE = re.compile(r"^\s*(%[-\w.$]+) = (.*)$")
_LOAD_PTR_RE = re.compile(r"^load ptr, ptr (%[-\w.$]+)(?:,|$)")
_GEP_INT_RE = re.compile(r"^getelementptr (?:inbounds |nuw |nusw )*i(8|16|32|64), ptr (%[-\w.$]+), "
                         r"i(?:32|64) (\d+)(?:,|$)")
_GEP_FIELD_RE = re.compile(r"^getelementptr (?:inbounds |nuw |nusw )*(%[-\w.$\"]+), ptr (%[-\w.$]+), "
                           r"i(?:32|64) 0, i32 (\d+)(?:,|$)")


def struct_field_counts(top_level: list[str]) -> dict[str, int]:
    """IR struct type -> its number of fields (top level of its `{ ... }` or `<{ ... }>`)."""
    counts = {}
    for text in top_level:
        m = NAMED_TYPE_RE.match(text)
        body = m.group(2).strip() if m else ""
        if m and body.startswith(("{", "<{")):
            inner = body.strip("<>")[1:-1].strip()
            counts[m.group(1)] = len(split_top_level(inner)) if inner else 0
    return counts


class LocalNames:
    def __init__(self, fn: IRFunction, debug: DebugInfo, fields: dict[str, int]):
        self.debug = debug
        self.fields = fields
        self.defs: dict[str, str] = {}
        self.vars: dict[tuple[str, str], str] = {}
        for text in fn.lines:
            m = _DBG_VAR_RE.search(text)
            if m:
                self.vars.setdefault((m.group(2), m.group(1)), m.group(3))
            d = _DEF_RE.match(text)
            if d:
                self.defs[d.group(1)] = d.group(2)

    def _variable(self, value: str) -> tuple[str, str | None, bool] | None:
        """(name, pointee type, is a C++ reference) of the pointer variable whose value
        ``value`` is."""
        var = self.vars.get((value, "value"))
        if var is None:
            m = _LOAD_PTR_RE.match(self.defs.get(value, ""))
            var = self.vars.get((m.group(1), "declare")) if m else None
        node = self.debug.node(var)
        if not node or node[0] != "DILocalVariable":
            return None
        name = self.debug._string(node[1].get("name"))
        pointer = self.debug._strip_qualifiers(node[1].get("type"))
        if not name or not pointer or pointer[1].get("tag") not in ("DW_TAG_pointer_type", "DW_TAG_reference_type"):
            return None
        return name, pointer[1].get("baseType"), pointer[1].get("tag") == "DW_TAG_reference_type"

    def name(self, operand: str, bits: int) -> str | None:
        """`*f`, `c->ready`, `*c+4` for the pointer operand of an access of ``bits`` bits."""
        offset, field, value = 0, None, operand
        definition = self.defs.get(operand, "")
        m = _GEP_INT_RE.match(definition)
        f = _GEP_FIELD_RE.match(definition)
        if m:
            value, offset = m.group(2), int(m.group(3)) * int(m.group(1))
        elif f:
            value, field = f.group(2), (f.group(1), int(f.group(3)))
        found = self._variable(value)
        if found is None:
            return None
        name, pointee, reference = found
        if field is not None:
            offset_of = self._field_offset(pointee, *field)
            if offset_of is None:
                return None
            offset = offset_of
        path = member_path(self.debug, pointee, offset, bits) if bits else None
        if reference:   # `Span &s`: `s`, `s.bits`
            return name + path if path is not None else (f"{name}+{offset // 8}" if offset else name)
        if path == "":
            return "*" + name
        if path and path.startswith("."):
            return name + "->" + path[1:]
        if path:
            return f"(*{name}){path}"
        return f"*{name}+{offset // 8}" if offset else "*" + name

    def _field_offset(self, pointee: str | None, ir_type: str, index: int) -> int | None:
        return field_offset(self.debug, self.fields, pointee, ir_type, index)


def field_offset(debug: DebugInfo, fields: dict[str, int], type_ref: str | None, ir_type: str,
                 index: int) -> int | None:
    """Bit offset of field ``index`` of IR struct ``ir_type`` in source type ``type_ref``, when
    the source type's members are its fields in order (as many members as fields, no
    bit-field: clang adds no padding field then)."""
    node = debug._strip_qualifiers(type_ref)
    if not node or node[0] != "DICompositeType" or node[1].get("tag") not in (
            "DW_TAG_structure_type", "DW_TAG_class_type"):
        return None
    members = [debug.node(ref) for ref in debug._tuple(node[1].get("elements"))]
    members = [mb for mb in members if mb and mb[0] == "DIDerivedType" and mb[1].get("tag") == "DW_TAG_member"]
    if (len(members) != fields.get(ir_type, -1) or index >= len(members)
            or any("DIFlagBitField" in mb[1].get("flags", "") for mb in members)):
        return None
    return int(members[index][1].get("offset", "0") or 0)


_GLOBAL_DBG_RE = re.compile(r'^(@[-\w.$]+|@"[^"]*") = .*, !dbg (![0-9]+)')


def global_types(top_level: list[str], debug: DebugInfo) -> dict[str, str | None]:
    """IR name of a global -> the type of its whole source variable (None when the global is a
    fragment of one, or has no debug record)."""
    types: dict[str, str | None] = {}
    for text in top_level:
        m = _GLOBAL_DBG_RE.match(text)
        if not m:
            continue
        node = debug.node(m.group(2))
        if node and node[0] == "DIGlobalVariableExpression" and "DW_OP_LLVM_fragment" not in debug._raw.get(
                m.group(2), ""):
            var = debug.node(node[1].get("var"))
            types[m.group(1)] = var[1].get("type") if var and var[0] == "DIGlobalVariable" else None
    return types


def global_member(debug: DebugInfo, type_ref: str | None, base: str, offset_bits: int, bits: int) -> str | None:
    """`ch.ready` for the ``bits``-bit object at ``offset_bits`` of global ``base`` of type
    ``type_ref`` (None when the type does not say, "" steps when it is the whole global)."""
    if not type_ref or not bits:
        return None
    path = member_path(debug, type_ref, offset_bits, bits)
    return None if path is None else base + path


def member_path(debug: DebugInfo, type_ref: str | None, offset_bits: int, bits: int) -> str | None:
    """debuginfo's member path, and when that is the whole object, the one member of a struct
    that is all of it (`struct Span { std::atomic<uintptr_t> bits; }`: `.bits`), repeatedly."""
    path = debug._member_path(type_ref, offset_bits, bits)
    if path != "" or offset_bits:
        return path
    node = debug._strip_qualifiers(type_ref)
    for _ in range(8):
        if not node or node[0] != "DICompositeType" or node[1].get("tag") not in (
                "DW_TAG_structure_type", "DW_TAG_class_type"):
            break
        members = [debug.node(ref) for ref in debug._tuple(node[1].get("elements"))]
        members = [mb for mb in members if mb and mb[0] == "DIDerivedType" and mb[1].get("tag") == "DW_TAG_member"]
        if len(members) != 1 or _bits(members[0][1].get("size")) != bits:
            break
        name = debug._string(members[0][1].get("name"))
        if not name or re.match(r"_[A-Z_]", name):   # a reserved name: std::atomic's `_M_i`
            break
        path += "." + name
        node = debug._strip_qualifiers(members[0][1].get("baseType"))
    return path


def _bits(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0
