"""Finding the clang that compiles the user's sources.

Order: ``--cc``, then ``$PYRSAN_CC``, then ``clang-<llvmlite major>`` (clang-22 for llvmlite
0.50), then any other ``clang-N`` or ``clang`` on PATH whose LLVM major is not newer than
llvmlite's, newest first. A newer clang is never accepted: llvmlite reading bitcode from a
newer LLVM aborts the process (docs/toolchain.md §2).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

from .errors import ToolchainError

C_EXTENSIONS = (".c",)
CXX_EXTENSIONS = (".cc", ".cpp", ".cxx", ".C", ".c++")

INSTALL_HINT = "install clang-22 (apt-get install clang-22) or pass --cc / set PYRSAN_CC"

# clang --version, first line: "Debian clang version 22.1.8 (++20250101...)"
_VERSION_RE = re.compile(r"clang version (\d+)\.(\d+)(?:\.(\d+))?")
_CLANG_NAME_RE = re.compile(r"^clang(?:-(\d+))?$")


@dataclass(frozen=True)
class Toolchain:
    """A C compiler and its matching C++ driver."""

    cc: str                       # absolute path of the C compiler
    cxx: tuple[str, ...]          # argv prefix of the C++ driver
    major: int                    # LLVM major of the compiler
    version: str                  # first line of `cc --version`

    def compiler_for(self, source: str | os.PathLike) -> tuple[str, ...]:
        return self.cxx if is_cxx_source(source) else (self.cc,)


def llvmlite_major() -> int:
    """LLVM major version llvmlite was built with."""
    import llvmlite.binding as llvm

    return int(llvm.llvm_version_info[0])


def is_c_source(path: str | os.PathLike) -> bool:
    return str(path).endswith(C_EXTENSIONS)


def is_cxx_source(path: str | os.PathLike) -> bool:
    return str(path).endswith(CXX_EXTENSIONS)


def clang_version(path: str) -> tuple[int, str] | None:
    """(major, first line of --version) of a clang executable, None if it is not clang."""
    try:
        proc = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    match = _VERSION_RE.search(proc.stdout)
    if not match:
        return None
    first = proc.stdout.strip().splitlines()[0] if proc.stdout.strip() else ""
    return int(match.group(1)), first


def _which(name: str, path: str | None) -> str | None:
    """Like shutil.which, but an explicit path (with a slash) is taken as is."""
    import shutil

    if os.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    return shutil.which(name, path=path)


def _candidates_on_path(path: str, max_major: int) -> list[str]:
    """clang-N (N <= max_major) and plain clang found on PATH; the order is decided later."""
    seen: dict[str, str] = {}
    for directory in path.split(os.pathsep):
        if not directory or not os.path.isdir(directory):
            continue
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            match = _CLANG_NAME_RE.match(name)
            if not match or name in seen:
                continue
            if match.group(1) is not None and int(match.group(1)) > max_major:
                continue
            full = os.path.join(directory, name)
            if os.path.isfile(full) and os.access(full, os.X_OK):
                seen[name] = full
    return list(seen.values())


def _cxx_for(cc: str) -> tuple[str, ...]:
    """The C++ driver matching cc: clang++-N next to clang-N, else cc --driver-mode=g++."""
    directory, base = os.path.split(cc)
    idx = base.rfind("clang")
    if idx >= 0:
        sibling = os.path.join(directory, base[:idx] + "clang++" + base[idx + len("clang"):])
        if os.path.isfile(sibling) and os.access(sibling, os.X_OK):
            return (sibling,)
    return (cc, "--driver-mode=g++")


def _make(cc: str, major: int, version: str) -> Toolchain:
    cc = os.path.abspath(cc)
    return Toolchain(cc=cc, cxx=_cxx_for(cc), major=major, version=version)


def _explicit(name: str, origin: str, path: str | None, max_major: int) -> Toolchain:
    found = _which(name, path)
    if found is None:
        raise ToolchainError(f"{origin}={name}: no such executable; {INSTALL_HINT}")
    version = clang_version(found)
    if version is None:
        raise ToolchainError(f"{origin}={name}: not a clang compiler (clang --version failed); {INSTALL_HINT}")
    major, text = version
    if major > max_major:
        raise ToolchainError(
            f"{origin}={name} is clang {major}, newer than the LLVM {max_major} of llvmlite; "
            f"use clang {max_major} or older"
        )
    return _make(found, major, text)


def find_toolchain(
    cc: str | None = None,
    env: dict[str, str] | None = None,
    max_major: int | None = None,
) -> Toolchain:
    """Pick the compiler (see the module docstring); ToolchainError when none is usable."""
    env = dict(os.environ) if env is None else env
    path = env.get("PATH", "")
    max_major = llvmlite_major() if max_major is None else max_major
    if cc:
        return _explicit(cc, "--cc", path, max_major)
    if env.get("PYRSAN_CC"):
        return _explicit(env["PYRSAN_CC"], "PYRSAN_CC", path, max_major)

    preferred = _which(f"clang-{max_major}", path)
    candidates = ([preferred] if preferred else []) + [
        c for c in _candidates_on_path(path, max_major) if c != preferred
    ]
    usable: list[tuple[int, int, Toolchain]] = []
    for order, candidate in enumerate(candidates):
        version = clang_version(candidate)
        if version is None or version[0] > max_major:
            continue
        if order == 0 and preferred and version[0] == max_major:
            return _make(candidate, *version)
        usable.append((version[0], -order, _make(candidate, *version)))
    if usable:
        usable.sort(key=lambda item: (item[0], item[1]), reverse=True)
        return usable[0][2]
    raise ToolchainError(f"no usable clang found on PATH; {INSTALL_HINT}")
