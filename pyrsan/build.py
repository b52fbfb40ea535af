"""Building an instrumented program: compile to bitcode, instrument, link with the runtime.

Per source: ``clang -g -O1 -c -emit-llvm``, then ``python -m pyrsan.passes`` in a
subprocess (docs/interfaces.md §1: llvmlite aborts the process on an LLVM assertion), then
one link of all objects with the runtime (docs/interfaces.md §3).

Optimisation and races (README "Optimisation and races"): at -O1 and above, clang emits
unoptimised IR (``-Xclang -disable-llvm-passes``, the -O level's attributes kept), the passes
instrument the plain accesses, run LLVM's pipeline of that -O level, then instrument the
atomics: a racy access the optimiser deletes (a dead read) keeps its hook.
``PYRSAN_PLAIN_AFTER_OPT=1`` instruments everything after clang's own optimisation instead
(faster programs, dead accesses unseen).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .errors import BuildError, InstrumentationError, InternalError, UsageError
from .runtime_build import RuntimeLibrary, ensure_runtime
from .toolchain import (C_EXTENSIONS, CXX_EXTENSIONS, Toolchain, find_toolchain, is_c_source,
                        is_cxx_source, llvmlite_major)
from .words import signal_name

DEFAULT_OPT = "-O1"
PLAIN_AFTER_OPT_ENV = "PYRSAN_PLAIN_AFTER_OPT"


def optimisation_level(flags: Sequence[str]) -> int:
    """LLVM's speed level (0-3) of the last -O flag (default -O1): -O/-Og 1, -Os/-Oz 2,
    -Ofast and -O4+ 3."""
    level = 1
    for f in flags:
        if f.startswith("-O"):
            v = f[2:]
            level = (int(v) if v.isdigit() else {"": 1, "g": 1, "s": 2, "z": 2}.get(v, 3))
    return min(level, 3)


def plain_first_level(flags: Sequence[str], plain_accesses: bool = True) -> int:
    """The -O level at which the passes optimise after instrumenting the plain accesses; 0
    when clang optimises (at -O0 nothing is optimised; without plain instrumentation there is
    nothing to keep; or PYRSAN_PLAIN_AFTER_OPT=1)."""
    if not plain_accesses or os.environ.get(PLAIN_AFTER_OPT_ENV, "") not in ("", "0"):
        return 0
    return optimisation_level(flags)


@dataclass(frozen=True)
class BuildRequest:
    sources: tuple[str, ...]
    output: str                          # the executable to write
    temp_dir: str                        # per-command temporary directory
    compiler_flags: tuple[str, ...] = ()  # -I -D -U -std -O (and -L -l, link_flags) from the command line
    cc: str | None = None                # --cc
    keep_temps: bool = False
    repairs: str | None = None           # pyrsan fix: repairs file for the passes (--repairs)
    site_tables: bool = False            # pyrsan fix: write each module's site table (--sites-json)
    module_ids: tuple[str, ...] = ()     # per source (default: its absolute path)
    plain_accesses: bool = True          # instrument non-atomic accesses (off: --no-races)


@dataclass(frozen=True)
class BuildResult:
    executable: Path
    toolchain: Toolchain
    runtime: RuntimeLibrary
    objects: tuple[Path, ...]
    site_tables: tuple[Path, ...] = ()   # when requested, per source
    loops: tuple[str, ...] = ()          # the recognised spin / CAS retry loops, one line each
    asm: tuple[str, ...] = ()            # passes notes (`note: ...`) and warnings (`warning: ...`)

    @property
    def asm_warnings(self) -> tuple[str, ...]:
        return tuple(line for line in self.asm if line.startswith("warning: "))


def split_link_flags(flags: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(compile flags, link flags) of a command line's flags: -L DIR, -LDIR, -l LIB, -lLIB
    go to the link only (after the objects, where the linker resolves libraries)."""
    compile_flags: list[str] = []
    link_flags: list[str] = []
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag in ("-L", "-l") and i + 1 < len(flags):
            link_flags += [flag, flags[i + 1]]
            i += 2
            continue
        (link_flags if flag.startswith(("-L", "-l")) else compile_flags).append(flag)
        i += 1
    return tuple(compile_flags), tuple(link_flags)


def check_sources(sources: tuple[str, ...]) -> None:
    """Missing files and unknown extensions, before anything is compiled."""
    if not sources:
        raise UsageError("no source file given")
    for source in sources:
        if not (is_c_source(source) or is_cxx_source(source)):
            known = ", ".join(C_EXTENSIONS + CXX_EXTENSIONS)
            raise UsageError(f"{source}: unknown source file type (expected one of {known})")
        if not os.path.isfile(source):
            raise UsageError(f"{source}: no such file")


def _unsupported_message(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    line = errors[-1] if errors else (lines[-1] if lines else "unsupported IR")
    return line[len("error:"):].strip() if line.startswith("error:") else line


def pipeline_clang(toolchain: Toolchain) -> str | None:
    """The clang that runs the optimisation pipeline after the plain accesses are instrumented:
    the toolchain's, when its LLVM major is llvmlite's (it must read llvmlite's IR text); else
    None (llvmlite's own pass builder: the same pipeline, slower)."""
    return toolchain.cc if toolchain.major == llvmlite_major() else None


def bitcode_command(toolchain: Toolchain, source: str, bitcode: Path | str, flags: Sequence[str],
                    include_dir: Path, driver: Sequence[str] | None = None,
                    plain_first: int = 0, text: bool = False) -> list[str]:
    """The clang command that compiles ``source`` to bitcode (``-g``; ``-O1`` unless flags
    have an ``-O``). ``driver`` overrides the compiler chosen from the extension.
    ``plain_first`` (plain_first_level): leave the optimisation to the passes. ``text``: IR
    text (-S) instead of bitcode (the passes read it without llvmlite when their optimiser is
    a clang of llvmlite's LLVM major, which prints the same text)."""
    opt = () if any(f.startswith("-O") for f in flags) else (DEFAULT_OPT,)
    compiler = tuple(driver) if driver else toolchain.compiler_for(source)
    unoptimised = ("-Xclang", "-disable-llvm-passes") if plain_first else ()
    return [*compiler, "-g", *opt, *flags, *unoptimised, "-I", str(include_dir),
            "-S" if text else "-c", "-emit-llvm", source, "-o", str(bitcode)]


def compile_to_bitcode(toolchain: Toolchain, source: str, bitcode: Path, flags: tuple[str, ...],
                       include_dir: Path, plain_first: int = 0, text: bool = False) -> None:
    cmd = bitcode_command(toolchain, source, bitcode, flags, include_dir, plain_first=plain_first,
                          text=text)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"compilation of {source} failed", proc.stderr.rstrip())


def instrument(bitcode: Path, obj: Path, source: str, emit_ll: Path | None,
               module_id: str | None = None, repairs: str | None = None,
               sites_json: Path | None = None, plain_accesses: bool = True,
               plain_first: int = 0, optimiser: str | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Instrument ``bitcode`` into the object ``obj`` (module id: the absolute source path
    unless given; it must be unique per translation unit). ``plain_accesses`` False leaves
    non-atomic accesses alone (no race detection, a faster program). Returns the lines that
    describe the spin and CAS retry loops the passes recognised (``--list-loops``) and those
    about inline asm and atomic library calls (``--list-notes``: ``note: ...`` modelled,
    ``warning: ...`` left as it is). ``plain_first``: the bitcode is unoptimised; optimise at
    this -O level after the plain accesses are instrumented (plain_first_level), with
    ``optimiser`` (pipeline_clang)."""
    cmd = [sys.executable, "-m", "pyrsan.passes", str(bitcode), "-o", str(obj),
           "--module-id", module_id or os.path.abspath(source)]
    if not plain_accesses:
        cmd.append("--no-plain-accesses")
    elif plain_first:
        cmd += ["--optimise", str(plain_first)]
        if optimiser:
            cmd += ["--optimiser", optimiser]
    if emit_ll is not None:
        cmd += ["--emit-ll", str(emit_ll)]
    if repairs is not None:
        cmd += ["--repairs", repairs]
    if sites_json is not None:
        cmd += ["--sites-json", str(sites_json)]
    cmd += ["--list-loops", "--list-notes"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode == 0 and obj.is_file():
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        asm = tuple(line for line in lines if line.startswith(("note: ", "warning: ")))
        return tuple(line for line in lines if line not in asm), asm
    if proc.returncode == 2:
        raise InstrumentationError(f"{source}: {_unsupported_message(proc.stderr)}")
    # LLVM's assembler rejected the program's own inline asm (exit 1), in llvmlite's codegen
    # ("error: <inline asm>:...") or in clang's back end ("...: <inline asm>:1:2: error: ...")
    asm_error = next((line for line in proc.stderr.splitlines() if "<inline asm>" in line and "error" in line), None)
    if asm_error is not None:
        where = asm_error[asm_error.index("<inline asm>"):].strip()
        raise BuildError(f"compilation of {source} failed: invalid inline assembly ({where})",
                         proc.stderr.rstrip()[-4000:])
    how = f"crashed with {signal_name(proc.returncode)}" if proc.returncode < 0 else (
        f"failed with exit status {proc.returncode}")
    raise InternalError(
        f"internal error: the instrumentation of {source} {how} (a pyrsan bug; please report it)",
        proc.stderr.rstrip()[-4000:],
    )


def runtime_link_args(runtime: RuntimeLibrary) -> list[str]:
    """What linking an executable adds (docs/interfaces.md §3; never for -shared outputs)."""
    return ["-Wl,--whole-archive", str(runtime.archive), "-Wl,--no-whole-archive",
            "-rdynamic", "-pthread", "-ldl"]


def link(toolchain: Toolchain, objects: list[Path], runtime: RuntimeLibrary, output: str,
         cxx: bool, link_flags: Sequence[str] = ()) -> None:
    driver = toolchain.cxx if cxx else (toolchain.cc,)
    cmd = [*driver, *map(str, objects), *link_flags, *runtime_link_args(runtime), "-o", output]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BuildError(f"linking {output} failed", proc.stderr.rstrip())


def build_program(request: BuildRequest) -> BuildResult:
    """Compile, instrument and link ``request.sources`` into ``request.output``."""
    check_sources(request.sources)
    toolchain = find_toolchain(request.cc)
    runtime = ensure_runtime(toolchain)
    temp = Path(request.temp_dir)
    objects: list[Path] = []
    tables: list[Path] = []
    loops: list[str] = []
    asm: list[str] = []
    compile_flags, link_flags = split_link_flags(request.compiler_flags)
    for index, source in enumerate(request.sources):
        stem = f"{index}_{Path(source).name.replace('.', '_')}"
        plain_first = plain_first_level(compile_flags, request.plain_accesses)
        optimiser = pipeline_clang(toolchain) if plain_first else None
        bitcode = temp / (f"{stem}.ll" if optimiser else f"{stem}.bc")
        obj = temp / f"{stem}.rsan.o"
        sites_json = temp / f"{stem}.sites.json" if request.site_tables else None
        compile_to_bitcode(toolchain, source, bitcode, compile_flags, runtime.include_dir,
                           plain_first, text=optimiser is not None)
        found_loops, found_asm = instrument(bitcode, obj, source,
                                            temp / f"{stem}.rsan.ll" if request.keep_temps else None,
                                            module_id=request.module_ids[index] if request.module_ids else None,
                                            repairs=request.repairs, sites_json=sites_json,
                                            plain_accesses=request.plain_accesses, plain_first=plain_first,
                                            optimiser=optimiser)
        loops += found_loops
        asm += found_asm
        objects.append(obj)
        if sites_json is not None:
            tables.append(sites_json)
    cxx = any(is_cxx_source(s) for s in request.sources)
    link(toolchain, objects, runtime, request.output, cxx, link_flags)
    return BuildResult(Path(request.output), toolchain, runtime, tuple(objects), tuple(tables),
                       tuple(loops), tuple(asm))
