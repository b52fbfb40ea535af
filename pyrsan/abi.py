"""The facts the runtime's C and the Python share, read from the runtime's headers, which hold
their one definition, when this module is imported:

- runtime/include/rsan_interface.h: the ABI enums (memory orders, RMW operations, site kinds),
  the CAS bits of a site, the system-header prefixes of the primary frame; its rsan_frame is
  `Frame` below;
- runtime/src/rsan_exit.h: the exit statuses the runtime gives an instrumented program;
- runtime/src/rsan_flags.inc: the runtime's options (runtime_options(), read on demand).

The passes (pyrsan.passes) and the driver both import it; testsuite/runtime/test_abi.py
checks the values read here against what the C compiler and cffi make of the headers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


def runtime_dir(override: str | None = None) -> Path:
    """Where the runtime sources are: `override`, else the copy shipped in the package
    (pyrsan/_runtime), else the source tree (runtime/ beside passes/: a checkout or an editable
    install). FileNotFoundError when none has include/ and src/."""
    parent = Path(__file__).resolve().parent.parent
    candidates = [Path(override)] if override else [parent / "_runtime", parent / "runtime"]
    for candidate in candidates:
        if (candidate / "include").is_dir() and (candidate / "src").is_dir():
            return candidate
    raise FileNotFoundError("the runtime sources are missing (looked in %s)"
                            % ", ".join(str(c) for c in candidates))


_COMMENT_RE = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)


def _text(path: Path) -> str:
    return _COMMENT_RE.sub(" ", path.read_text(encoding="utf-8"))


def enum_values(text: str, name: str) -> dict[str, int]:
    """The enumerators of `enum name { ... }` in C text without comments, in order, with C's
    rule for those without an initialiser (the previous value plus one, 0 first)."""
    m = re.search(r"\benum\s+%s\s*\{([^}]*)\}" % re.escape(name), text)
    if m is None:
        raise LookupError("enum %s not found" % name)
    values: dict[str, int] = {}
    nxt = 0
    for item in m.group(1).split(","):
        item = item.strip()
        if not item:
            continue
        ident, _, init = (part.strip() for part in item.partition("="))
        value = int(init, 0) if init else nxt
        values[ident] = value
        nxt = value + 1
    return values


def define_value(text: str, name: str) -> str:
    """The replacement text of `#define name ...` (one line)."""
    m = re.search(r"^\s*#\s*define\s+%s\s+(.+?)\s*$" % re.escape(name), text, re.MULTILINE)
    if m is None:
        raise LookupError("#define %s not found" % name)
    return m.group(1)


def define_int(text: str, name: str) -> int:
    return int(define_value(text, name).rstrip("uUlL"), 0)


def define_strings(text: str, name: str) -> tuple[str, ...]:
    """The string literals of `#define name { "a", "b" }`."""
    return tuple(re.findall(r'"((?:[^"\\]|\\.)*)"', define_value(text, name)))


def _lower_names(values: dict[str, int], prefix: str) -> dict[str, int]:
    return {k[len(prefix):].lower(): v for k, v in values.items() if k.startswith(prefix)}


# the headers shipped with this code (never $PYRSAN_RUNTIME_DIR, a runtime copy to build)
_RUNTIME = runtime_dir()
INTERFACE_H = _RUNTIME / "include" / "rsan_interface.h"
EXIT_H = _RUNTIME / "src" / "rsan_exit.h"
_INTERFACE = _text(INTERFACE_H)
_EXIT = _text(EXIT_H)

ABI_VERSION = define_int(_INTERFACE, "RSAN_ABI_VERSION")
# C11 order name -> number (enum rsan_order): relaxed consume acquire release acq_rel seq_cst
ORDER_NUMBER = _lower_names(enum_values(_INTERFACE, "rsan_order"), "RSAN_")
ORDER_NAME = {v: k for k, v in ORDER_NUMBER.items()}
# site kind -> number (enum rsan_site_kind): load store rmw cas fence call read write
KIND_NUMBER = _lower_names(enum_values(_INTERFACE, "rsan_site_kind"), "RSAN_SITE_")
# RMW operation (LLVM's atomicrmw name) -> number (enum rsan_rmw_op)
RMW_OP_NUMBER = {k: v for k, v in _lower_names(enum_values(_INTERFACE, "rsan_rmw_op"), "RSAN_RMW_").items()
                 if k != "op_count"}
# rsan_site.op of a CAS site: weak; its failure only feeds a retry (passes/casloops.py)
CAS_WEAK = define_int(_INTERFACE, "RSAN_SITE_CAS_WEAK")
CAS_RETRY = define_int(_INTERFACE, "RSAN_SITE_CAS_RETRY")
# rsan_site.op of a store site: its location is a global no code reads (passes/writeonly.py)
WRITE_ONLY = define_int(_INTERFACE, "RSAN_SITE_WRITE_ONLY")
# rsan_site.op bits: how many innermost frames are atomic primitives (passes/primitives.py)
PRIMITIVE_SHIFT = define_int(_INTERFACE, "RSAN_SITE_PRIMITIVE_SHIFT")
PRIMITIVE_MASK = define_int(_INTERFACE, "RSAN_SITE_PRIMITIVE_MASK")
# a frame whose file starts with one of these is in a system header (docs/interfaces.md §2)
SYSTEM_PREFIXES = define_strings(_INTERFACE, "RSAN_SYSTEM_PREFIXES")

EXIT_FATAL = define_int(_EXIT, "RSAN_EXIT_FATAL")
EXIT_BAD_OPTIONS = define_int(_EXIT, "RSAN_EXIT_BAD_OPTIONS")
EXIT_DEADLOCK = define_int(_EXIT, "RSAN_EXIT_DEADLOCK")
EXIT_BOUND = define_int(_EXIT, "RSAN_EXIT_BOUND")


@dataclass(frozen=True)
class RuntimeOption:
    """One row of the runtime's option table (runtime/src/rsan_flags.inc)."""
    group: str      # ENGINE or SCHED: the struct that holds it
    type: str       # F_BOOL, F_INT, F_U64, F_EXIT, F_STRING, F_SC_MODE, F_SCHED
    name: str
    default: str
    help: str


_C_STRING = r'"(?:[^"\\]|\\.)*"'
_FLAG_RE = re.compile(r"\bRSAN_FLAG\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(%s)\s*,\s*((?:%s\s*)+)\)"
                      % (_C_STRING, _C_STRING))


def _c_strings(text: str) -> str:
    """The value of adjacent C string literals (escapes: \\" and \\\\ only)."""
    return "".join(re.sub(r"\\(.)", r"\1", s[1:-1]) for s in re.findall(_C_STRING, text))


def runtime_options(root: Path | None = None) -> dict[str, RuntimeOption]:
    """The runtime's options in table order, read from src/rsan_flags.inc of `root` (default:
    the runtime shipped with this code)."""
    text = _text((root or _RUNTIME) / "src" / "rsan_flags.inc")
    return {m.group(3): RuntimeOption(m.group(1), m.group(2), m.group(3), _c_strings(m.group(4)),
                                      _c_strings(m.group(5)))
            for m in _FLAG_RE.finditer(text)}


def is_system_file(path: str) -> bool:
    return path.startswith(SYSTEM_PREFIXES)


@dataclass(frozen=True)
class Frame:
    """One source frame of a site (rsan_frame): frames[0] is the innermost."""
    file: str
    line: int
    column: int
    function: str


def primary_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The innermost frame not in a system header, else the innermost (docs/interfaces.md §2;
    the runtime's rsan_frames_primary)."""
    for f in frames:
        if not is_system_file(f.file):
            return f
    return frames[0] if frames else None
