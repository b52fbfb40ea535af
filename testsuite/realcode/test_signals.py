"""Signal handlers that use atomics and sem_post (issue 14): a handler arriving while its
thread is inside the runtime is deferred to the thread's way out, so it never waits for a
lock its own thread holds."""
from __future__ import annotations

import os
import subprocess

import pytest


@pytest.mark.parametrize("flags", [(), ("-DUSE_SIGNAL",)])
def test_itimer_handler_with_atomics_and_sem_post_never_deadlocks(build_program, flags):
    exe = build_program("signal_itimer.c", *flags)
    env = {k: v for k, v in os.environ.items() if k != "PYRSAN_OPTIONS"}
    for _ in range(3):
        proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.startswith("ticks ")


def test_sigev_thread_timer_function_is_ordered_after_timer_create(tmp_path, run_pyrsan):
    """glibc runs SIGEV_THREAD notifications in threads it creates itself: they inherit the
    creator's view at timer_create (no false race on the data it prepared)."""
    from pathlib import Path
    proc = run_pyrsan("run", Path(__file__).parent / "programs" / "timer_thread.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "data race" not in proc.stderr
