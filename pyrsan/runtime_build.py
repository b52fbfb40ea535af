"""Building the C runtime on first use, into a cache that is never stale.

The cache key hashes every runtime source and header, the compiler's identity and the
flags; the build is guarded by a file lock (parallel builds happen) and moved into place
with one atomic rename. Layout: ``<cache>/runtime-<key>/librsan_rt.a``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from . import abi
from .errors import BuildError, InternalError, PyrsanError
from .toolchain import Toolchain

#: docs/interfaces.md §3: the runtime build, driver and CMake alike.
RUNTIME_CFLAGS = (
    "-std=c11", "-O2", "-g", "-fPIC", "-fno-omit-frame-pointer", "-D_GNU_SOURCE", "-pthread",
)
LIBRARY_NAME = "librsan_rt.a"


@dataclass(frozen=True)
class RuntimeLibrary:
    archive: Path        # librsan_rt.a
    include_dir: Path    # runtime/include, added to the user's include path
    key: str


def runtime_dir() -> Path:
    """Where the runtime sources are: $PYRSAN_RUNTIME_DIR, the copy shipped in the package,
    or the source tree (editable install or a checkout)."""
    try:
        return abi.runtime_dir(os.environ.get("PYRSAN_RUNTIME_DIR"))
    except FileNotFoundError as error:
        raise InternalError(f"{error}; reinstall pyrsan") from None


def runtime_option_names(root: Path | None = None) -> frozenset[str] | None:
    """The PYRSAN_OPTIONS names the runtime accepts, read from its option table
    (src/rsan_flags.inc); None when the table cannot be read."""
    try:
        names = frozenset(abi.runtime_options(root or runtime_dir()))
    except (OSError, PyrsanError):
        return None
    return names or None


def cache_dir() -> Path:
    if os.environ.get("PYRSAN_CACHE_DIR"):
        return Path(os.environ["PYRSAN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pyrsan"


def _runtime_files(root: Path) -> tuple[list[Path], list[Path]]:
    sources = sorted((root / "src").glob("*.c"))
    headers = sorted((root / "include").glob("*.h")) + sorted((root / "src").glob("*.h")) + sorted(
        (root / "src").glob("*.inc"))
    return sources, headers


def runtime_key(root: Path, toolchain: Toolchain, flags: tuple[str, ...] = RUNTIME_CFLAGS) -> str:
    """Hash of the runtime sources, the compiler identity and the flags."""
    sources, headers = _runtime_files(root)
    digest = hashlib.sha256()
    digest.update(f"pyrsan {__version__}\0{toolchain.cc}\0{toolchain.version}\0".encode())
    digest.update("\0".join(flags).encode())
    for path in sources + headers:
        digest.update(b"\0" + str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def _archiver() -> str:
    for name in ("ar", "llvm-ar", "llvm-ar-22"):
        found = shutil.which(name)
        if found:
            return found
    raise BuildError("building the runtime failed: no 'ar' found (install binutils)")


def _compile_all(root: Path, toolchain: Toolchain, out: Path) -> None:
    sources, _ = _runtime_files(root)
    if not sources:
        raise InternalError(f"the runtime sources are missing: no .c file in {root / 'src'}")
    objects = []
    for index, source in enumerate(sources):
        obj = out / f"{index:03d}_{source.stem}.o"
        cmd = [toolchain.cc, *RUNTIME_CFLAGS, "-I", str(root / "include"), "-c", str(source), "-o", str(obj)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BuildError(f"building the runtime failed ({source.name})", proc.stderr.rstrip())
        objects.append(str(obj))
    proc = subprocess.run(
        [_archiver(), "rcs", str(out / LIBRARY_NAME), *objects], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise BuildError("building the runtime failed (ar)", proc.stderr.rstrip())
    for name in objects:
        os.unlink(name)


def ensure_runtime(toolchain: Toolchain) -> RuntimeLibrary:
    """The runtime archive for this toolchain, built first if the cache has none."""
    root = runtime_dir()
    key = runtime_key(root, toolchain)
    cache = cache_dir()
    final = cache / f"runtime-{key}"
    library = RuntimeLibrary(archive=final / LIBRARY_NAME, include_dir=root / "include", key=key)
    if library.archive.is_file():
        return library
    try:
        cache.mkdir(parents=True, exist_ok=True)
        lock_path = cache / f"runtime-{key}.lock"
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if library.archive.is_file():  # another process built it while we waited
                return library
            staging = Path(tempfile.mkdtemp(prefix=f"building-{key}-", dir=cache))
            try:
                _compile_all(root, toolchain, staging)
                if final.exists():  # a damaged entry (archive deleted by hand)
                    shutil.rmtree(final)
                os.rename(staging, final)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    except OSError as exc:
        raise BuildError(f"cannot build the runtime in the cache {cache}: {exc.strerror or exc}") from None
    return library
