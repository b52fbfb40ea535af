"""The fixtures of the pass tests: the CLI environment, the compiled stub runtime."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from passes_helpers import CC, HERE

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli_env():
    """Environment of `python -m pyrsan.passes` in a subprocess (the installed pyrsan, this
    checkout: testsuite/conftest.py)."""
    return dict(os.environ)


@pytest.fixture(scope="session")
def stub_runtime(tmp_path_factory) -> Path:
    """The counting stub runtime (stub_runtime.c) compiled once as an object."""
    out = tmp_path_factory.mktemp("stub") / "stub_runtime.o"
    subprocess.run([CC, "-std=c11", "-O1", "-g", "-fPIC", "-c", str(HERE / "stub_runtime.c"),
                    "-I", str(ROOT / "runtime" / "include"), "-o", str(out)], check=True)
    return out


# the runtime's entry points driven through cffi (testsuite/runtime/harness.py): the spin-loop
# tests' runtime halves
@pytest.fixture(scope="module")
def srt_lib():
    import cffi
    import harness
    ffi = cffi.FFI()
    ffi.cdef(harness.CDEF)
    return harness, ffi, ffi.dlopen(str(harness.build_engine_lib()))


@pytest.fixture
def srt(srt_lib, tmp_path):
    harness, ffi, lib = srt_lib
    r = harness.Runtime(ffi, lib, tmp_path)
    r.reset()
    yield harness, r
    getattr(lib, "__rsan_test_reset")()
