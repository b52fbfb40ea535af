"""Helpers shared by the pass tests (a unique module name: other test directories have a
conftest.py of their own)."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import llvmlite.binding as llvm

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CC = os.environ.get("PYRSAN_TEST_CC", "clang-22")
CXX = os.environ.get("PYRSAN_TEST_CXX", "clang++-22")


def canonical(ir_text: str) -> str:
    """IR text as llvmlite prints it (what the driver hands to instrument_ir)."""
    return str(llvm.parse_assembly(ir_text))


def verify(ir_text: str):
    module = llvm.parse_assembly(ir_text)
    module.verify()
    return module


def compile_to_ir(tmp_path: Path, source: str, name: str = "t.c", flags=("-O1",)) -> str:
    """Compile a C/C++ snippet with clang-22 -g -S -emit-llvm and return llvmlite's text."""
    src = tmp_path / name
    src.write_text(source)
    compiler = CXX if name.endswith(".cpp") else CC
    std = ["-std=c++17"] if name.endswith(".cpp") else ["-std=c11"]
    out = tmp_path / (name + ".ll")
    subprocess.run([compiler, *std, "-g", *flags, "-S", "-emit-llvm", "-Wno-atomic-alignment",
                    str(src), "-o", str(out)], check=True)
    return canonical(out.read_text())


# (ne_, size, expected, mask, order) of each masked spin load in instrumented IR
MASK_RE = re.compile(r"call i64 @__rsan_spin_load_mask_(ne_)?(\d)\(ptr @\w+, i64 (%?[-\w.]+), "
                     r"i64 (-?\d+), i32 (\d+), i64 -?\d+\)")


def instrument_spin(tmp_path: Path, source: str, flags=("-O1",), name: str = "t.c"):
    """A snippet compiled with `flags` and instrumented with the spin-loop recognition, its IR
    verified."""
    from pyrsan.passes import instrument_ir
    result = instrument_ir(compile_to_ir(tmp_path, source, name=name, flags=flags), "spin")
    verify(result.ir_text)
    return result


def recognised_loops(tmp_path: Path, source: str, name: str = "t.c", flags=("-O1",)) -> list[str]:
    """The loops the passes recognise in a snippet (describe() lines), after checking that the
    instrumented IR verifies."""
    return [loop.describe() for loop in instrument_spin(tmp_path, source, flags, name).loops]

