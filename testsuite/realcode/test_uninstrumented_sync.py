"""Synchronisation inside an uninstrumented library (issue 14: ck_epoch_synchronize in libck,
synchronize_rcu in liburcu): pyrsan cannot see it, as ThreadSanitizer cannot; programs say it
with TSan's dynamic annotations, which the runtime implements (runtime/src/intercept_annotate.c).
The library here is built by plain clang into a shared library and linked with `-L DIR
-l NAME`, which `pyrsan run` passes to the link."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="module")
def grace_lib(tmp_path_factory):
    out = tmp_path_factory.mktemp("lib")
    subprocess.run(["clang-22", "-O1", "-fPIC", "-shared", str(PROGRAMS / "grace_lib.c"), "-o",
                    str(out / "libgrace.so")], check=True)
    return out


@pytest.mark.parametrize("flags, expected", [((), 66), (("-DANNOTATE",), 0)])
def test_grace_period_in_an_uninstrumented_library(tmp_path, run_pyrsan, pyrsan_env, grace_lib, flags, expected):
    """Without the annotations the free after the library's grace period races with the
    reader's read (the edge is inside the library); with them, nothing is reported."""
    env = dict(pyrsan_env, LD_LIBRARY_PATH=str(grace_lib))
    proc = run_pyrsan("run", "--runs", "3", "--seed", "1", "--json", tmp_path / "r.json", *flags,
                      PROGRAMS / "uninstrumented_grace.c", f"-L{grace_lib}", "-l", "grace", cwd=tmp_path, env=env)
    assert proc.returncode == expected, proc.stderr[-3000:]
    assert "ok 42" in proc.stdout
    reports = json.loads((tmp_path / "r.json").read_text())["reports"]
    if expected:
        assert {r["kind"] for r in reports} == {"race"}
        assert all(r["previous"]["function"] == "reader" and r["access"]["function"] == "main" for r in reports)


def test_link_flags_reach_the_link_only(tmp_path, run_pyrsan, grace_lib):
    """-l before its library exists on the -L path is a link error with the linker's words,
    not a compile error: the flags are passed to the link, never to the -emit-llvm step."""
    proc = run_pyrsan("build", "-o", tmp_path / "a.out", PROGRAMS / "uninstrumented_grace.c", "-l", "grace",
                      cwd=tmp_path)
    assert proc.returncode == 2
    assert "linking" in proc.stderr and "grace" in proc.stderr, proc.stderr
    ok = run_pyrsan("build", "-o", tmp_path / "b.out", PROGRAMS / "uninstrumented_grace.c", "-L", grace_lib,
                    "-lgrace", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr


def test_exploration_does_not_hang_on_a_wait_inside_an_uninstrumented_library(tmp_path, run_pyrsan, pyrsan_env,
                                                                              grace_lib):
    """Under --explore one thread runs at a time; a schedule that runs main into the library's
    grace period before the reader left its section waits in code the scheduler never sees.
    That run is handed over to the OS scheduler after a stall and the exploration ends,
    incomplete (not a proof), instead of hanging (there is no --timeout here)."""
    env = dict(pyrsan_env, LD_LIBRARY_PATH=str(grace_lib))
    proc = run_pyrsan("run", "--explore", "--json", tmp_path / "r.json", "-DANNOTATE",
                      PROGRAMS / "uninstrumented_grace.c", f"-L{grace_lib}", "-lgrace",
                      cwd=tmp_path, env=env, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "exploration incomplete" in proc.stderr and "uninstrumented library" in proc.stderr, proc.stderr[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"] == "clean" and not doc["timeouts"], doc
