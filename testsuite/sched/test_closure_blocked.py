"""Blocked iterations under the F-order closure (docs/design/exploration.md §11): with
``sched_closure=1`` a thread blocks for ever after a failed iteration of an await loop only when
each load of that iteration re-read the write its previous iteration read there (the form of §9's
condition (i) that holds in every order of the SC fences the closure replays). Checked against
every interleaving (``sched_await=0``, today's relation): the same verdict and report groups, no
other report, and a complete exploration."""

from __future__ import annotations

import pytest

from .test_await_loops import HEAD, MAIN2, PROGRAMS, blocked_disagreements, explored_groups, random_blocked
from .test_brute_force import build

#: mp_across_iterations where T1 waits only after it read x = 1, an earlier store of the thread
#: that writes the z its failed iteration then reads: knowing *a* step of the writer is not
#: knowing the write (mutant: sched_closure_hb.c takes any known position of the writer as the
#: write's), and blocking after that iteration loses the next one's violation on y.
KNOWN_WRITER = HEAD + """
static void t0(void) { atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_relaxed); atomic_store_explicit(&z, 1, memory_order_relaxed); }
static void *t1(void *p) { if (!atomic_load_explicit(&x, memory_order_relaxed)) return p;
  for (;;) { int a = atomic_load_explicit(&y, memory_order_relaxed);
  int b = atomic_load_explicit(&z, memory_order_relaxed); if (a + b == 2) break; } return p; }
""" + MAIN2

#: sched_await=-2 under the closure, for random_blocked.
CLOSURE = (("-2", "1"),)


@pytest.mark.parametrize("name", ["two_flags", "message_passing", "mp_across_iterations"])
def test_blocked_iterations_under_the_closure_keep_every_group(name, tmp_path, pyrsan_cli, pyrsan_env):
    """mp_across_iterations fails when every failed iteration blocks (mutant: reads_new returns 0,
    i.e. sched_await=-1); the others check that blocking takes place and costs no report."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS[name][0], tmp_path, name)
    assert blocked_disagreements(exe, tmp_path, closure="1") == []


def test_blocked_iterations_under_the_closure_need_the_write_itself(tmp_path, pyrsan_cli, pyrsan_env):
    exe = build(pyrsan_cli, pyrsan_env, KNOWN_WRITER, tmp_path, "p")
    assert blocked_disagreements(exe, tmp_path, closure="1") == []


def test_blocked_iterations_under_the_closure_block(tmp_path, pyrsan_cli, pyrsan_env):
    """two_flags: under the closure sched_await=-2 blocks (fewer schedules than the await after three
    repeats, mutant: reads_new returns 1, i.e. never block)."""
    exe = build(pyrsan_cli, pyrsan_env, PROGRAMS["two_flags"][0], tmp_path, "p")
    *_, blocked = explored_groups(exe, tmp_path / "b", "-2", "1")
    *_, awaited = explored_groups(exe, tmp_path / "a", "1", "1")
    assert blocked < awaited


def test_blocked_iterations_under_the_closure_on_random_waiting_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, _ = random_blocked(1, 3, tmp_path, pyrsan_cli, pyrsan_env, CLOSURE)
    assert compared >= 2


@pytest.mark.slow
def test_blocked_iterations_under_the_closure_on_more_random_waiting_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, _ = random_blocked(2, 20, tmp_path, pyrsan_cli, pyrsan_env, CLOSURE)
    assert compared >= 8
