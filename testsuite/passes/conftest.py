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


@pytest.fixture
def stale_wait(srt):
    """(harness, rt, run): run(first, second, wait) plays t1: f = first; [f = second;] z = 1 ||
    t2: r = z; wait(f, site), all relaxed, t1 first (t2's read of z makes f's last write
    SC-visible but not hb-visible) and returns what the wait read and the reports."""
    harness, rt = srt

    def run(first, second, wait):
        f, z = rt.var("f"), rt.var("z")
        new = getattr(rt.lib, "__rsan_test_new_thread")
        cur = getattr(rt.lib, "__rsan_test_set_current")
        main = new(rt.ffi.NULL)
        cur(main)
        t1, t2 = new(main), new(main)
        cur(t1)
        rt.store(f, first, "rlx", rt.site("st", harness.line_of(1, 0), "t1"))
        if second is not None:
            rt.store(f, second, "rlx", rt.site("st", harness.line_of(1, 1), "t1"))
        rt.store(z, 1, "rlx", rt.site("st", harness.line_of(1, 2), "t1"))
        cur(t2)
        assert rt.load(z, "rlx", rt.site("ld", harness.line_of(2, 0), "t2")) == 1
        return wait(f, rt.site("ld", harness.line_of(2, 1), "t2")), rt.reports()

    return harness, rt, run
