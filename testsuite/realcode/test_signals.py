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


def test_a_handler_deferred_in_a_parked_thread_is_run_not_called_a_deadlock(tmp_path, run_pyrsan):
    """A thread parked in a recognised wait gets pthread_kill's signal while it is inside the
    runtime (deferred); main then blocks on the semaphore the handler posts. The run must go
    on (the handler runs once its thread runs again), not end as a deadlock."""
    from pathlib import Path
    src = Path(__file__).parents[1] / "corpus" / "qa" / "signal_to_waiting_thread.c"
    for seed in ("1", "2", "3"):
        proc = run_pyrsan("run", "--seed", seed, src, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "result=42 handled=1" in proc.stdout


def test_a_real_deadlock_with_a_handler_installed_is_still_reported(tmp_path, run_pyrsan):
    from pathlib import Path
    proc = run_pyrsan("run", Path(__file__).parent / "programs" / "sem_wait_handler_never_posts.c",
                      cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "deadlock" in proc.stderr


def test_a_process_signal_deferred_in_a_parked_thread_is_run_by_a_running_thread(build_program):
    """programs/sigalrm_stop_flag.c: setitimer's SIGALRM (for the process) arrives in main,
    parked by the controlled scheduler in a join of two workers that poll the flag the
    handler sets. Deferred in main, it waited for main to run again: never (a livelock until
    the time-out, every seed). The first thread to leave the runtime runs it now
    (signal_defer.c rsan_sig_defer_process)."""
    exe = build_program("sigalrm_stop_flag.c")
    for seed in (1, 2, 3, 4):
        env = dict(os.environ, PYRSAN_OPTIONS=f"sched=random:seed={seed}")
        proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, env=env)
        assert proc.returncode == 0 and proc.stdout == "1\n", proc.stderr[-2000:]


def test_pthread_cancel_ends_a_controlled_condition_wait(tmp_path, run_pyrsan):
    """corpus/qa/cancel_condwait_cleanup.c: a thread in pthread_cond_wait is cancelled; it waits
    in the scheduler, not at the real cancellation point, so the run ended as a deadlock (main
    joining it). The wait now ends, the thread re-takes the mutex and acts on the request
    (intercept_thread.c pthread_cancel, intercept_sync.c)."""
    from pathlib import Path
    src = Path(__file__).parents[1] / "corpus" / "qa" / "cancel_condwait_cleanup.c"
    for sched in (("--seed", "1"), ("--sched", "random", "--seed", "2", "--runs", "5"), ("--explore",)):
        proc = run_pyrsan("run", *sched, src, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stdout.startswith("1 1\n"), proc.stdout
