"""Make `pyrsan.passes` importable from the source tree before packaging exists, and share
helpers for the pass tests (compiling C to IR, verifying, building with a stub runtime)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SHIMMED = False

try:
    import pyrsan.passes  # noqa: F401
except ImportError:
    SHIMMED = True
    if "pyrsan" not in sys.modules:
        try:
            import pyrsan  # noqa: F401
        except ImportError:
            pkg = types.ModuleType("pyrsan")
            pkg.__path__ = []
            sys.modules["pyrsan"] = pkg
    spec = importlib.util.spec_from_file_location(
        "pyrsan.passes", ROOT / "passes" / "__init__.py",
        submodule_search_locations=[str(ROOT / "passes")])
    module = importlib.util.module_from_spec(spec)
    sys.modules["pyrsan.passes"] = module
    spec.loader.exec_module(module)
    sys.modules["pyrsan"].passes = module

import llvmlite.binding as llvm  # noqa: E402

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


@pytest.fixture(scope="session")
def cli_env(tmp_path_factory):
    """Environment in which `python -m pyrsan.passes` works in a subprocess."""
    env = dict(os.environ)
    if SHIMMED:
        shim = tmp_path_factory.mktemp("shim")
        (shim / "pyrsan").mkdir()
        (shim / "pyrsan" / "__init__.py").write_text("")
        (shim / "pyrsan" / "passes").symlink_to(ROOT / "passes")
        env["PYTHONPATH"] = str(shim) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.fixture(scope="session")
def stub_runtime(tmp_path_factory) -> Path:
    """The counting stub runtime (stub_runtime.c) compiled once as an object."""
    out = tmp_path_factory.mktemp("stub") / "stub_runtime.o"
    subprocess.run([CC, "-std=c11", "-O1", "-g", "-fPIC", "-c", str(HERE / "stub_runtime.c"),
                    "-I", str(ROOT / "runtime" / "include"), "-o", str(out)], check=True)
    return out
