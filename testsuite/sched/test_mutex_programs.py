"""The mutual exclusion programs of benchmarks/programs/sched that session 10 added (Lamport's
bakery, bakery.c; a Dekker-Tsay style tournament of Dekker locks, dekker_tree.c): without
-DROBUST (release stores, acquire loads) ``--explore`` reports them; with it (order.h's fences)
the 2-thread bakery is proved robust. The 3-thread -DROBUST versions are beyond a test's time
(benchmarks/README.md, "Session 10")."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pyrsan.runner import ExploreOptions, RunOptions, explore_program

SCHED = Path(__file__).resolve().parents[2] / "benchmarks" / "programs" / "sched"


def explored(pyrsan_cli, pyrsan_env, tmp_path: Path, name: str, *defines: str, max_schedules: int = 3000):
    exe = tmp_path / name
    proc = subprocess.run([*pyrsan_cli, "build", *defines, str(SCHED / f"{name}.c"), "-o", str(exe)],
                          env=pyrsan_env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    options = RunOptions(work_dir=str(tmp_path / "runs"), quiet=True, timeout=60)
    return explore_program(str(exe), [], options, ExploreOptions(max_schedules=max_schedules, jobs=1))


@pytest.mark.parametrize("name, defines", [("bakery", ("-DNTHREADS=2",)), ("bakery", ("-DNTHREADS=3",)),
                                           ("dekker_tree", ())])
def test_the_release_acquire_versions_are_reported(tmp_path, pyrsan_cli, pyrsan_env, name, defines):
    result = explored(pyrsan_cli, pyrsan_env, tmp_path, name, *defines)
    assert result.reports and all(r.report.kind == "robustness" for r in result.reports)


def test_the_fenced_2_thread_bakery_is_proved(tmp_path, pyrsan_cli, pyrsan_env):
    result = explored(pyrsan_cli, pyrsan_env, tmp_path, "bakery", "-DROBUST", "-DNTHREADS=2")
    assert result.exploration.complete and not result.reports, result.exploration
