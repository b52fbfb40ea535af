"""Schedule files and traces (pyrsan/schedule.py, docs/scheduling.md formats)."""

from __future__ import annotations

import pytest

from pyrsan.errors import UsageError
from pyrsan.schedule import Op, format_schedule, parse_schedule, parse_trace, TraceFormatError

TRACE = """{"pyrsan_trace": 1, "sched": "pct", "seed": 7, "pid": 12}
{"step": 0, "tid": 0, "enabled": [[0, "spawn", "0x1", 1]]}
{"step": 1, "tid": 1, "enabled": [[0, "join", "0x1", 0], [1, "store", "0x5000", 1]]}
{"end": "exit", "steps": 2, "diverged": null}
"""


def test_a_schedule_survives_writing_and_reading():
    decisions = tuple(i % 3 for i in range(45))
    text = format_schedule(decisions, {"sched": "pct", "seed": 3})
    assert text.startswith("pyrsan-schedule 1\n# sched: pct\n# seed: 3\n")
    assert parse_schedule(text) == decisions


@pytest.mark.parametrize("text, message", [
    ("0 1 0\n", "not a pyrsan schedule file"),
    ("pyrsan-schedule 1\n0 one 1\n", "'one' is not a thread id"),
    ("pyrsan-schedule 1\n0 -1\n", "'-1' is not a thread id"),
])
def test_a_bad_schedule_is_one_line_naming_the_problem(text, message):
    with pytest.raises(UsageError) as error:
        parse_schedule(text, "bad.sched")
    assert message in error.value.message and "\n" not in error.value.message


def test_a_trace_gives_decisions_enabled_operations_and_end():
    trace = parse_trace(TRACE.splitlines())
    assert trace.decisions == (0, 1)
    assert trace.steps[1].enabled[0] == Op("join", "0x1", False)
    assert trace.steps[1].op == Op("store", "0x5000", True)
    assert (trace.end, trace.diverged, trace.sched, trace.seed) == ("exit", None, "pct", 7)


def test_a_trace_end_lists_the_threads_left_blocked():
    lines = TRACE.splitlines()[:-1] + ['{"end": "deadlock", "steps": 2, "diverged": null, '
                                       '"blocked": [[1, "lock", "0x6000", 1], [0, "join", "0x1", 0]]}']
    trace = parse_trace(lines)
    assert trace.end == "deadlock"
    assert trace.blocked == {1: Op("lock", "0x6000", True), 0: Op("join", "0x1", False)}
    assert parse_trace(TRACE.splitlines()).blocked == {}


def test_a_killed_run_keeps_its_steps_and_has_no_end():
    lines = TRACE.splitlines()[:3] + ['{"step": 2, "tid": 1, "enab']
    trace = parse_trace(lines)
    assert trace.decisions == (0, 1) and trace.end is None


def test_a_bad_line_inside_a_trace_is_an_error():
    lines = TRACE.splitlines()
    with pytest.raises(TraceFormatError):
        parse_trace([lines[0], "not json", lines[1]])
    with pytest.raises(TraceFormatError):
        parse_trace([lines[0], '{"step": 0, "tid": 3, "enabled": [[0, "load", "0x1", 0]]}'])


def test_a_step_line_seen_before_is_reused_only_at_its_own_index():
    """parse_trace keeps the Step of each line it parsed (runs of an exploration share their
    prefixes); a line whose step number does not fit its place is still an error."""
    first = parse_trace(TRACE.splitlines())
    again = parse_trace(TRACE.splitlines())
    assert again == first and again.steps[1] is first.steps[1]
    lines = TRACE.splitlines()
    with pytest.raises(TraceFormatError):
        parse_trace([lines[0], lines[2]])   # step 1's line (cached) where step 0 must be


def test_a_step_line_seen_before_at_another_index_is_reused_there():
    """The cache of parsed step lines is keyed by the line after its step number (a Step holds
    no index): a run that makes a step seen at another index in an earlier run reuses it."""
    lines = TRACE.splitlines()
    first = parse_trace(lines)
    moved = lines[2].replace('"step": 1,', '"step": 0,')
    assert moved != lines[2]
    again = parse_trace([lines[0], moved])
    assert again.steps[0] is first.steps[1]
