"""16-byte atomics and libatomic calls (issue 14): modelled by the runtime's lock-based
fallback (atomic16.c), never a build error."""
from __future__ import annotations

import subprocess
import sys

import pytest

from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"


def test_dcas_stack_builds_runs_and_is_clean(tmp_path, run_pyrsan):
    proc = run_pyrsan("run", "--sched", "random", "--seed", "3", "--runs", "2",
                      PROGRAMS / "dcas_stack.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize("flags, expected", [
    ((), 66), (("-DSEQ_CST",), 0), (("-DGENERIC",), 66), (("-DGENERIC", "-DSEQ_CST"), 0)])
def test_store_buffering_on_wide_atomics_is_checked(tmp_path, run_pyrsan, flags, expected):
    """The wide accesses are real events of the analysis: relaxed SB is reported, SC is not."""
    proc = run_pyrsan("run", "--sched", "random", "--seed", "1", "--runs", "20", *flags,
                      PROGRAMS / "sb16.c", cwd=tmp_path)
    assert proc.returncode == expected, proc.stderr[-3000:]


def test_libcalls_the_runtime_lacks_are_warned_about_not_fatal(tmp_path):
    """A __sync_* or unknown __atomic_* call is left as it is, with a warning naming the line."""
    ll = tmp_path / "m.ll"
    ll.write_text(
        'declare i64 @__sync_fetch_and_add_8(ptr, i64)\n'
        'declare void @__atomic_load(i64, ptr, ptr, i32)\n'
        '@x = global i64 0\n@b = global [3 x i64] zeroinitializer\n'
        'define i64 @f(ptr %out) {\n'
        '  %1 = call i64 @__sync_fetch_and_add_8(ptr @x, i64 1)\n'
        '  call void @__atomic_load(i64 24, ptr @b, ptr %out, i32 5)\n'
        '  ret i64 %1\n}\n')
    proc = subprocess.run([sys.executable, "-m", "pyrsan.passes", str(ll), "-o", str(tmp_path / "m.o"),
                           "--module-id", "m", "--list-notes", "--emit-ll", str(tmp_path / "out.ll")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "warning: call to __sync_fetch_and_add_8" in proc.stdout
    out = (tmp_path / "out.ll").read_text()
    assert "call void @__rsan_atomic_load(i64 24, ptr @b, ptr %out, i32 5, i64 " in out
    assert "declare void @__rsan_atomic_load(i64, ptr, ptr, i32, i64)" in out
