"""Compiler wrappers ``pyrsan-cc`` and ``pyrsan-c++``: drop-in C/C++ compilers for Make and
CMake builds, like ``clang -fsanitize=thread``.

- ``-c``: each C/C++ source becomes an instrumented object (clang ``-emit-llvm`` with the
  user's flags, dependency flags included, then the passes; build.py's steps).
- linking (no ``-c``): sources are compiled as above into temporary objects, then clang links
  everything; an executable gets the runtime (whole-archive, ``-rdynamic -pthread -ldl``), a
  ``-shared`` or ``-r`` output never does (architecture.md, "Linking and interception").
- ``-E``, ``-S``, ``-M``/``-MM``, ``-fsyntax-only``, ``-x``, ``--version``, ``-print-*`` and
  command lines without input go straight to clang, unchanged.

Command line: ``pyrsan-cc ARGS``, ``pyrsan-c++ ARGS``, or ``python -m pyrsan.wrappers cc|c++ ARGS``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .build import bitcode_command, instrument, pipeline_clang, plain_first_level, runtime_link_args
from .errors import PyrsanError, UsageError
from .runtime_build import ensure_runtime
from .toolchain import Toolchain, find_toolchain, is_c_source, is_cxx_source

#: Options whose value is the next argument.
_WITH_VALUE = frozenset({
    "-o", "-MF", "-MT", "-MQ", "-MJ", "-I", "-D", "-U", "-include", "-imacros", "-isystem",
    "-iquote", "-idirafter", "-isysroot", "-iprefix", "-iwithprefix", "-x", "-Xlinker",
    "-Xclang", "-Xpreprocessor", "-Xassembler", "-L", "-l", "-target", "-arch", "-T", "-z",
    "-u", "-e", "-F", "--sysroot", "-gcc-toolchain", "--param",
})
#: Options only the compile step needs (dropped from the link command).
_COMPILE_ONLY_WITH_VALUE = frozenset({
    "-MF", "-MT", "-MQ", "-MJ", "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
    "-idirafter", "-iprefix", "-iwithprefix", "-Xclang", "-Xpreprocessor",
})
_COMPILE_ONLY_PREFIXES = ("-I", "-D", "-U", "-std=")
_DEP_FLAGS = frozenset({"-MD", "-MMD", "-MP", "-MG", "-MV"})
#: Options only the link step needs (dropped from the compile command).
_LINK_ONLY_WITH_VALUE = frozenset({"-Xlinker", "-L", "-l", "-T", "-z", "-u", "-e"})
_LINK_ONLY = frozenset({
    "-shared", "-static", "-rdynamic", "-r", "-pie", "-no-pie", "-nostdlib", "-nodefaultlibs",
    "-nostartfiles", "-static-libgcc", "-static-libstdc++", "-shared-libgcc",
})
_LINK_ONLY_PREFIXES = ("-l", "-L", "-Wl,", "-fuse-ld=")
#: Any of these: clang does the whole job, uninstrumented (no object code comes out of it,
#: or the language is forced with -x, which pyrsan does not follow).
_PASSTHROUGH = frozenset({
    "-E", "-S", "-M", "-MM", "-fsyntax-only", "--version", "-dumpversion", "-dumpmachine",
    "-dumpfullversion", "-###", "--help", "-x", "-emit-llvm", "-",
})
_PASSTHROUGH_PREFIXES = ("-print-", "--print-", "-x")


class WrapperError(PyrsanError):
    """A command line the wrapper cannot handle."""


@dataclass
class CommandLine:
    """A compiler command line, split into what each step needs."""

    sources: list[str] = field(default_factory=list)        # C/C++ sources to instrument
    compile_flags: list[str] = field(default_factory=list)  # for the -emit-llvm step
    link_args: list[str] = field(default_factory=list)      # inputs and flags, in order; sources as None
    output: str | None = None
    compile_only: bool = False                              # -c
    passthrough: bool = False
    shared: bool = False                                    # -shared or -r: no runtime
    dep_file_given: bool = False                            # -MF
    dep_target_given: bool = False                          # -MT / -MQ
    deps: bool = False                                      # -MD / -MMD


def expand_response_files(args: Sequence[str], depth: int = 0) -> list[str]:
    """``@file`` arguments replaced by the file's arguments (shell-style quoting, as GCC and
    clang read them); an ``@file`` that does not exist is kept as is, as GCC does."""
    out: list[str] = []
    for arg in args:
        if arg.startswith("@") and len(arg) > 1 and os.path.isfile(arg[1:]):
            if depth > 20:
                raise UsageError(f"{arg}: response files nested too deeply")
            try:
                text = Path(arg[1:]).read_text(encoding="utf-8", errors="replace")
                inner = shlex.split(text, comments=False, posix=True)
            except (OSError, ValueError) as exc:
                raise UsageError(f"cannot read response file {arg[1:]}: {exc}") from None
            out.extend(expand_response_files(inner, depth + 1))
        else:
            out.append(arg)
    return out


def parse_command_line(args: Sequence[str]) -> CommandLine:
    """Split an (already expanded) compiler command line."""
    cl = CommandLine()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _PASSTHROUGH or arg.startswith(_PASSTHROUGH_PREFIXES):
            cl.passthrough = True
        if arg in _WITH_VALUE:
            if i + 1 >= len(args):
                raise UsageError(f"option {arg} needs a value")
            value = args[i + 1]
            i += 2
            if arg == "-o":
                cl.output = value
                continue
            if arg == "-MF":
                cl.dep_file_given = True
            if arg in ("-MT", "-MQ"):
                cl.dep_target_given = True
            if arg not in _LINK_ONLY_WITH_VALUE:
                cl.compile_flags += [arg, value]
            if arg not in _COMPILE_ONLY_WITH_VALUE:
                cl.link_args += [arg, value]
            continue
        i += 1
        if arg == "-c":
            cl.compile_only = True
        elif arg.startswith("-o") and len(arg) > 2:
            cl.output = arg[2:]
        elif arg in _DEP_FLAGS:
            cl.deps = cl.deps or arg in ("-MD", "-MMD")
            cl.compile_flags.append(arg)
        elif arg.startswith(("-MF", "-MT", "-MQ")):  # joined value
            cl.dep_file_given = cl.dep_file_given or arg.startswith("-MF")
            cl.dep_target_given = cl.dep_target_given or not arg.startswith("-MF")
            cl.compile_flags.append(arg)
        elif arg in _LINK_ONLY or arg.startswith(_LINK_ONLY_PREFIXES):
            cl.shared = cl.shared or arg in ("-shared", "-r")
            cl.link_args.append(arg)
        elif arg.startswith(_COMPILE_ONLY_PREFIXES):
            cl.compile_flags.append(arg)
        elif arg.startswith("-"):
            cl.compile_flags.append(arg)
            cl.link_args.append(arg)
        elif is_c_source(arg) or is_cxx_source(arg):
            cl.sources.append(arg)
            cl.link_args.append(arg)
        else:  # objects, archives, shared libraries, assembly: clang's business
            cl.link_args.append(arg)
    return cl


def has_input(cl: CommandLine) -> bool:
    return bool(cl.sources) or any(not a.startswith("-") for a in cl.link_args)


def _object_name(source: str) -> str:
    return Path(source).stem + ".o"


def _dep_flags(cl: CommandLine, output: str) -> list[str]:
    """-MD/-MMD would name the dependency file and target after the temporary bitcode file:
    name them after the real object, as clang does."""
    if not cl.deps:
        return []
    extra = []
    if not cl.dep_file_given:
        extra += ["-MF", os.path.splitext(output)[0] + ".d"]
    if not cl.dep_target_given:
        extra += ["-MT", output]
    return extra


def _run(cmd: list[str]) -> int:
    """A clang command with the wrapper's stdio (warnings and -v output stay visible)."""
    try:
        return subprocess.run(cmd, check=False).returncode
    except OSError as exc:
        raise WrapperError(f"cannot run {cmd[0]}: {exc.strerror or exc}") from None


def compile_source(toolchain: Toolchain, driver: Sequence[str], include_dir: Path, source: str,
                   output: str, flags: Sequence[str], temp_dir: Path) -> int:
    """One translation unit to one instrumented object; clang's exit status (0 on success)."""
    plain_first = plain_first_level(flags)
    optimiser = pipeline_clang(toolchain) if plain_first else None
    bitcode = temp_dir / (Path(output).name + (".ll" if optimiser else ".bc"))
    status = _run(bitcode_command(toolchain, source, bitcode, flags, include_dir, driver, plain_first,
                                  text=optimiser is not None))
    if status != 0:
        return status
    module_id = f"{os.path.abspath(source)}:{os.path.abspath(output)}"
    _, asm = instrument(bitcode, Path(output), source, None, module_id=module_id, plain_first=plain_first,
                        optimiser=optimiser)
    for line in dict.fromkeys(asm):  # what the passes left unmodelled: never silently
        if line.startswith("warning: "):
            sys.stderr.write(f"pyrsan: {line}\n")
    return 0


def run_wrapper(language: str, argv: Sequence[str]) -> int:
    """The whole wrapper; returns the exit status."""
    toolchain = find_toolchain(None)
    driver = toolchain.cxx if language == "c++" else (toolchain.cc,)
    args = expand_response_files(argv)
    cl = parse_command_line(args)
    if cl.passthrough or not has_input(cl):
        return _run([*driver, *argv])
    if cl.compile_only and cl.output is not None and len(cl.sources) > 1:
        raise UsageError("cannot specify -o with -c and several source files")
    runtime = ensure_runtime(toolchain)
    temp_dir = Path(tempfile.mkdtemp(prefix="pyrsan-cc-"))
    try:
        if cl.compile_only:
            # Inputs that are not C/C++ (assembly) are compiled by clang alone, uninstrumented.
            others = [a for a in cl.link_args if not a.startswith("-") and a not in cl.sources]
            for source in cl.sources:
                output = cl.output or _object_name(source)
                status = compile_source(toolchain, driver, runtime.include_dir, source, output,
                                        [*cl.compile_flags, *_dep_flags(cl, output)], temp_dir)
                if status != 0:
                    return status
            for other in others:
                output = cl.output or _object_name(other)
                status = _run([*driver, *cl.compile_flags, "-c", other, "-o", output])
                if status != 0:
                    return status
            return 0
        objects: dict[str, str] = {}
        for index, source in enumerate(cl.sources):
            obj = str(temp_dir / f"{index}_{Path(source).stem}.o")
            flags = list(cl.compile_flags)
            if cl.deps and not cl.dep_file_given:  # as gcc: <source stem>.d, target the output
                flags += ["-MF", Path(source).stem + ".d", "-MT", cl.output or "a.out"]
            status = compile_source(toolchain, driver, runtime.include_dir, source, obj, flags, temp_dir)
            if status != 0:
                return status
            objects[source] = obj
        link_cmd = [*driver, *(objects.get(a, a) for a in cl.link_args)]
        if cl.output is not None:
            link_cmd += ["-o", cl.output]
        if not cl.shared:
            link_cmd += runtime_link_args(runtime)
        return _run(link_cmd)
    finally:
        shutil.rmtree(temp_dir, ignore_errors=True)


def _main(language: str, argv: Sequence[str]) -> None:
    name = "pyrsan-c++" if language == "c++" else "pyrsan-cc"
    try:
        code = run_wrapper(language, argv)
    except PyrsanError as error:
        print(f"{name}: {error.message}", file=sys.stderr)
        if error.details:
            print(error.details, file=sys.stderr)
        code = error.exit_code
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        code = 130
    sys.exit(code)


def main_cc() -> None:
    """Entry point of the ``pyrsan-cc`` console script."""
    _main("c", sys.argv[1:])


def main_cxx() -> None:
    """Entry point of the ``pyrsan-c++`` console script."""
    _main("c++", sys.argv[1:])


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m pyrsan.wrappers cc|c++ ARGS...``"""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("cc", "c++"):
        print("usage: python -m pyrsan.wrappers cc|c++ COMPILER_ARGS...", file=sys.stderr)
        sys.exit(2)
    _main("c++" if argv[0] == "c++" else "c", argv[1:])


if __name__ == "__main__":
    main()
