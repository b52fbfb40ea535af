"""The closure search restores a branching state's records in one process
(runtime/src/sched_closure_state.c) instead of forking one process per state (the runtime
option ``closure_fork=1`` keeps the forks). A restore is exact when the search after it is the
one a fork would make: the same states (their keys are what later steps can read, so one
record restored wrong changes a key or a report), the same pruning, the same reports. So each
program is explored in both ways and everything the explorations count must agree.
programs/wide_clocks.c has clocks of 10 slots, so its restores meet written memos (clock.c
memo_put) and empty them; the narrow programs write none and skip that. programs/spawn_fence_orders.c
creates threads after the snapshot: its searches fork until the log's last spawn has been replayed
and restore from there (sched_closure_search.c start_restoring), against a fork at every state."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyrsan.runner import CLOSURE_SEARCH

from .test_closure_runtime import FENCE_ORDER_PROGRAMS, LITMUS, PROGRAMS, build, built_seq_cst_programs, explored, keys


def both_ways(exe: Path, work: Path, monkeypatch) -> tuple:
    results = []
    for fork in ("1", "0"):
        monkeypatch.setenv("PYRSAN_OPTIONS", f"closure_fork={fork}")
        results.append(explored(exe, work / f"fork{fork}", CLOSURE_SEARCH, keep_going=True, max_schedules=3000))
    monkeypatch.delenv("PYRSAN_OPTIONS")
    return tuple(results)


def agree(forked, restored, what: str) -> None:
    a, b = forked.exploration, restored.exploration
    assert (a.complete, a.schedules, a.closure_states, a.bound) == (b.complete, b.schedules, b.closure_states,
                                                                    b.bound), (what, a, b)
    assert keys(forked) == keys(restored), (what, keys(forked) ^ keys(restored))


@pytest.mark.parametrize("name", ["dekker_sc", "iriw_sc", "peterson_sc", "wide_clocks", "spawn_fence_orders",
                                  *FENCE_ORDER_PROGRAMS])
def test_a_restored_state_searches_what_a_fork_searches(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch, name):
    source = (LITMUS if name.endswith("_sc") else PROGRAMS) / f"{name}.c"
    exe = build(pyrsan_cli, pyrsan_env, source, tmp_path / name)
    forked, restored = both_ways(exe, tmp_path, monkeypatch)
    assert restored.exploration.closure_states > 0
    agree(forked, restored, name)


def random_agreement(seed: int, count: int, work: Path, pyrsan_cli, pyrsan_env, monkeypatch) -> int:
    searched = 0
    for n, source, exe in built_seq_cst_programs(seed, count, work, pyrsan_cli, pyrsan_env):
        forked, restored = both_ways(exe, work / f"runs{n}", monkeypatch)
        agree(forked, restored, source.read_text())
        searched += restored.exploration.closure_states > 0
    return searched


def test_restored_states_agree_with_forks_on_random_programs(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch):
    assert random_agreement(2100, 2, tmp_path, pyrsan_cli, pyrsan_env, monkeypatch) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_restored_states_agree_with_forks_on_more_random_programs(tmp_path, pyrsan_cli, pyrsan_env, monkeypatch,
                                                                   seed):
    assert random_agreement(2200 + seed, 15, tmp_path, pyrsan_cli, pyrsan_env, monkeypatch) >= 6
