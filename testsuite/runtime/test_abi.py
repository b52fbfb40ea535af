"""The facts C and Python share have one definition, the runtime's headers, and passes/abi.py
reads them right: checked against what a C compiler (the defines) and cffi's C parser (the
enums) make of the same headers, and against stray second definitions in the sources."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import cffi
import pytest

from pyrsan import abi

import harness

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict:
    """The defines as the C compiler sees them, printed as JSON by a program that includes
    the headers."""
    out = tmp_path_factory.mktemp("abi")
    src = out / "facts.c"
    src.write_text(r'''
#include <stdio.h>
#include "rsan_interface.h"
#include "rsan_exit.h"
int main(void) {
  static const char *const prefixes[] = RSAN_SYSTEM_PREFIXES;
  printf("{\"abi\": %d, \"weak\": %u, \"retry\": %u, \"exit\": [%d, %d, %d, %d], \"prefixes\": [",
         RSAN_ABI_VERSION, RSAN_SITE_CAS_WEAK, RSAN_SITE_CAS_RETRY, RSAN_EXIT_FATAL,
         RSAN_EXIT_BAD_OPTIONS, RSAN_EXIT_DEADLOCK, RSAN_EXIT_BOUND);
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
    printf("%s\"%s\"", i ? ", " : "", prefixes[i]);
  printf("]}\n");
  return 0;
}
''')
    exe = out / "facts"
    subprocess.run([harness._compiler(), "-std=c11", "-I", str(abi.INTERFACE_H.parent),
                    "-I", str(abi.EXIT_H.parent), str(src), "-o", str(exe)], check=True)
    return json.loads(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


def test_defines_are_those_the_compiler_sees(compiled):
    assert compiled["abi"] == abi.ABI_VERSION
    assert (compiled["weak"], compiled["retry"]) == (abi.CAS_WEAK, abi.CAS_RETRY)
    assert compiled["exit"] == [abi.EXIT_FATAL, abi.EXIT_BAD_OPTIONS, abi.EXIT_DEADLOCK, abi.EXIT_BOUND]
    assert tuple(compiled["prefixes"]) == abi.SYSTEM_PREFIXES and abi.SYSTEM_PREFIXES


@pytest.mark.parametrize("enum, prefix, table", [
    ("rsan_order", "RSAN_", abi.ORDER_NUMBER),
    ("rsan_site_kind", "RSAN_SITE_", abi.KIND_NUMBER),
    ("rsan_rmw_op", "RSAN_RMW_", abi.RMW_OP_NUMBER),
])
def test_enums_are_those_cffi_parses_from_the_header(enum, prefix, table):
    ffi = cffi.FFI()
    ffi.cdef(harness.interface_cdef())
    parsed = {name[len(prefix):].lower(): value for name, value in ffi.typeof("enum " + enum).relements.items()
              if name != "RSAN_RMW_OP_COUNT"}
    assert parsed == table
    assert len(set(table.values())) == len(table)


def test_enum_reader_follows_cs_rule_for_implicit_values():
    text = "enum e { A = 3, B, C = 0x10, D, };"
    assert abi.enum_values(text, "e") == {"A": 3, "B": 4, "C": 16, "D": 17}
    with pytest.raises(LookupError):
        abi.enum_values(text, "f")


def test_the_python_side_uses_the_headers_numbers():
    from pyrsan import checker, runner
    from pyrsan.passes import debuginfo, results, runtime_abi, sites, syntax
    assert sites.KIND_NUMBER is abi.KIND_NUMBER and sites.RMW_OP_NUMBER is abi.RMW_OP_NUMBER
    assert syntax.ORDER_NAME is abi.ORDER_NAME
    assert {syntax.ORDER_NUMBER[w] for w in ("monotonic", "unordered")} == {abi.ORDER_NUMBER["relaxed"]}
    assert (runner.EXIT_RUNTIME_FATAL, runner.EXIT_RUNTIME_BAD_OPTIONS, runner.EXIT_RUNTIME_BOUND) == (
        abi.EXIT_FATAL, abi.EXIT_BAD_OPTIONS, abi.EXIT_BOUND)
    assert results.Frame is abi.Frame and not hasattr(debuginfo, "primary_frame")
    assert runtime_abi.ABI_VERSION == abi.ABI_VERSION
    frames = (abi.Frame("/usr/include/stdatomic.h", 1, 1, "f"), abi.Frame("/src/a.c", 2, 3, "g"))
    assert checker.SiteInfo(1, "m", 1, "load", "relaxed", "", frames=frames).primary == frames[1]


# a second definition of a shared fact: a literal that belongs in the headers
_STRAY = [
    (re.compile(r'"/usr/(?:local/)?(?:include|lib)/"'), "a system-header prefix (RSAN_SYSTEM_PREFIXES)"),
    (re.compile(r"#\s*define\s+RSAN_EXIT_\w+\s+\d"), "an exit status (rsan_exit.h)"),
    (re.compile(r"\b(?:_exit|exit|rsan_exit_raw)\(\s*8[5-8]\s*\)"), "an exit status as a number"),
    (re.compile(r"^EXIT_RUNTIME_\w+\s*=\s*\d", re.MULTILINE), "an exit status as a number"),
    (re.compile(r"^(?:KIND_NUMBER|RMW_OP_NUMBER|ORDER_NAME|CAS_WEAK|CAS_RETRY)\s*=\s*[{\d]", re.MULTILINE),
     "an ABI enum (rsan_interface.h)"),
]


def test_every_runtime_file_ships_and_keys_the_runtime_cache(tmp_path):
    """A file the runtime build reads (rsan_flags.inc too) is package data and part of the
    cache key, so that an installed pyrsan has it and a change to it rebuilds the runtime."""
    import fnmatch

    from pyrsan import runtime_build
    tomllib = pytest.importorskip("tomllib")   # Python 3.11
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "pyrsan._runtime"]
    runtime = ROOT / "runtime"
    files = [p.relative_to(runtime).as_posix() for p in runtime.rglob("*") if p.is_file()]
    assert "src/rsan_flags.inc" in files
    assert [f for f in files if not any(fnmatch.fnmatch(f, pat) for pat in patterns)] == []
    sources, headers = runtime_build._runtime_files(runtime)
    assert sorted(p.relative_to(runtime).as_posix() for p in sources + headers) == sorted(files)


def test_no_second_definition_in_the_sources():
    homes = {abi.INTERFACE_H, abi.EXIT_H, Path(abi.__file__).resolve()}
    files = [*ROOT.glob("runtime/src/*.[ch]"), *ROOT.glob("runtime/include/*.h"), *ROOT.glob("pyrsan/*.py"),
             *ROOT.glob("passes/*.py")]
    assert len(files) > 40
    stray = [f"{path.relative_to(ROOT)}: {what}" for path in files if path.resolve() not in homes
             for pattern, what in _STRAY if pattern.search(path.read_text(encoding="utf-8"))]
    assert stray == []
