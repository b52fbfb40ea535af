"""The session-23 wait shapes end to end (docs/toolchain.md §5.5): a packed ticket lock whose
compared value is kept in a stack slot across the back edge at -O0, and a wait on a byte read
as a signed char. Both are listed by `pyrsan build -v`, and the program runs to its own `ok`
without a report (it is robust and race-free), under the default runs and a bounded
exploration."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).parent / "programs" / "spin_ticket_signed.c"


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_slot_kept_and_signed_waits_are_recognised_and_run_clean(tmp_path, pyrsan_env, opt):
    out = tmp_path / "prog"
    build = subprocess.run([sys.executable, "-m", "pyrsan", "build", "-v", opt, str(PROGRAM), "-o", str(out)],
                           env=pyrsan_env, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    assert "wait for (ticket & 0xffff) == a value fixed before the loop" in build.stderr
    assert "wait for (done & 0xff) == 255" in build.stderr, build.stderr
    run = subprocess.run([sys.executable, "-m", "pyrsan", "run", "--runs", "3", "--timeout", "60", str(out)],
                         env=pyrsan_env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ok ")
    explore = subprocess.run([sys.executable, "-m", "pyrsan", "run", "--explore", "--max-schedules", "40",
                              "--timeout", "60", str(out)], env=pyrsan_env, capture_output=True, text=True)
    assert explore.returncode == 0, explore.stderr
