"""``--explore`` against brute force (issue 15 item 5): on random small programs (2-3 threads of
1-3 seq_cst, release/acquire and relaxed loads, stores, fetch_adds, compare-exchanges, waits
and fences, SC fences among them) every interleaving is run through the real runtime
(brute.py: the controlled scheduler's schedule tree to every leaf, no reduction), and the
exploration, F-order closure included, must give the same verdict and find every report key
and group that some interleaving makes, and no other."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from .brute import compare, programs, source


def build(pyrsan_cli, pyrsan_env, text: str, work: Path, name: str) -> Path:
    (work / f"{name}.c").write_text(text)
    exe = work / name
    proc = subprocess.run([*pyrsan_cli, "build", str(work / f"{name}.c"), "-o", str(exe)], env=pyrsan_env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return exe


def differential(seed: int, count: int, max_interleavings: int, work: Path, pyrsan_cli, pyrsan_env,
                 modes: tuple[str, ...] = ("1",), **shape) -> tuple[int, int]:
    """Compares ``count`` programs; returns (programs with reports, interleavings run)."""
    with_reports = interleavings = 0
    for n, threads in enumerate(programs(random.Random(seed), count, max_interleavings, **shape)):
        text = source(threads)
        exe = build(pyrsan_cli, pyrsan_env, text, work, f"p{n}")
        result = compare(str(exe), work / f"w{n}", modes, max_runs=8 * max_interleavings)
        assert not result.disagreements(), (text, result.disagreements())
        with_reports += bool(result.brute_keys)
        interleavings += result.interleavings
    return with_reports, interleavings


def test_explore_finds_the_reports_of_every_interleaving(tmp_path, pyrsan_cli, pyrsan_env):
    with_reports, interleavings = differential(1, 4, 400, tmp_path, pyrsan_cli, pyrsan_env)
    assert with_reports >= 1 and interleavings >= 100   # there was something to find


def test_the_comparison_catches_an_explorer_that_misses_races(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch):
    """The same comparison with the explorer's relation broken (two accesses of one location
    independent): the exploration runs too few classes and the brute force shows what it missed."""
    import pyrsan.explore

    real = pyrsan.explore.dependent
    accesses = ("load", "store", "rmw", "wait")

    def broken(tid_a, a, tid_b, b):
        return False if a.kind in accesses and b.kind in accesses else real(tid_a, a, tid_b, b)

    monkeypatch.setattr(pyrsan.explore, "dependent", broken)
    threads = programs(random.Random(2), 1, 300, non_robust=1.0)[0]
    exe = build(pyrsan_cli, pyrsan_env, source(threads), tmp_path, "p")
    result = compare(str(exe), tmp_path / "w")
    assert result.brute_keys and any("missed report keys" in d for d in result.disagreements())


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_explore_finds_the_reports_of_every_interleaving_of_more_programs(tmp_path, pyrsan_cli, pyrsan_env, seed):
    with_reports, _ = differential(100 + seed, 12, 3000, tmp_path, pyrsan_cli, pyrsan_env, modes=("1", "0"))
    assert with_reports >= 3


@pytest.mark.slow
def test_explore_finds_the_reports_of_every_interleaving_of_3_thread_programs(tmp_path, pyrsan_cli, pyrsan_env):
    with_reports, _ = differential(200, 6, 8000, tmp_path, pyrsan_cli, pyrsan_env, modes=("1", "0"),
                                   threads=3, min_threads=3, max_ops=2)
    assert with_reports >= 1
