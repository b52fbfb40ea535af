"""The runtime's locks under contention and signals (runtime/src/lock.c): eight threads on one
atomic location, spin-loop handoffs, and a storm of signals whose handler uses the same atomic.
Every count exact, errno kept across every atomic operation (the runtime's locks, lock-free spin
attempts and the controlled scheduler's waits), and the run ends (a lost futex wake-up hangs it)."""
from __future__ import annotations

import os
import subprocess


def _run(exe, options: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYRSAN_OPTIONS"}
    env["PYRSAN_OPTIONS"] = options
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)


def test_contended_location_with_a_signal_storm_keeps_counts_and_errno(build_program):
    exe = build_program("lock_storm.c")
    for _ in range(3):
        proc = _run(exe, "sched=os:print_reports=0:verbosity=1")
        assert proc.returncode in (0, 66), proc.stdout + proc.stderr[-2000:]
        assert proc.stdout.startswith("ok "), proc.stdout
        assert "pyrsan: locks: " in proc.stderr


def test_contended_location_under_the_default_scheduler_keeps_counts_and_errno(build_program):
    exe = build_program("lock_storm.c")
    proc = _run(exe, "print_reports=0")
    assert proc.returncode in (0, 66), proc.stdout + proc.stderr[-2000:]
    assert proc.stdout.startswith("ok "), proc.stdout
