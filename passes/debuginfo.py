"""Source locations from the module's debug metadata: DILocation -> frames (innermost
first, following `inlinedAt:`), DISubprogram fallbacks, DIGlobalVariable names."""
from __future__ import annotations

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

    def subprogram_frames(self, sp: str | None) -> tuple[Frame, ...]:
        """A single frame at a function's DISubprogram line (the last-resort location)."""
        node = self.node(sp)
        if node is None or node[0] != "DISubprogram":
            return ()
        file, function, line = self.scope(sp)
        return (Frame(file, line, 0, function),)

    def global_name(self, ref: str | None) -> str:
        """Source name of a global from its `!dbg` DIGlobalVariableExpression ("" if none)."""
        node = self.node(ref)
        if node and node[0] == "DIGlobalVariableExpression":
            node = self.node(node[1].get("var"))
        if node and node[0] == "DIGlobalVariable":
            return self._string(node[1].get("name"))
        return ""

    def compile_unit_file(self) -> str:
        for raw in self._raw.values():
            if "!DICompileUnit(" in raw:
                node = self.node(raw[: raw.index(" ")])
                if node:
                    return self.file_of(node[1].get("file"))
        return ""


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
