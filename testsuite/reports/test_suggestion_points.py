"""The points a fence suggestion names (docs/reports.md §5) when the thread's earlier access
ran in a call that has returned (an out-of-line helper: a C function kept out of line,
libstdc++'s `__fetch_add_flt` of C++20 `atomic<double>::fetch_add`): its call stack is not
kept, so the fence goes "right before" the access (always between the two in program order),
never "between" a helper's line and the access; and the write SC requires is named by its
first frame outside system headers (the user's call, not atomic_base.h)."""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpus"


def _reports(run_pyrsan, tmp_path, source: Path, *flags):
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "--seed", 1, "--json", out, *flags, source, timeout=300)
    assert proc.returncode == 66, proc.stderr
    return [r for r in json.loads(out.read_text())["reports"] if r["kind"] == "robustness"]


def test_earlier_access_in_a_returned_helper_gets_a_fence_right_before_the_access(run_pyrsan, tmp_path):
    reports = _reports(run_pyrsan, tmp_path, HERE / "sb_helper_calls.c", "-O0")
    assert reports
    for r in reports:
        line = r["access"]["line"]
        assert line in (14, 21)
        s = r["suggestion"]
        assert s.startswith("insert atomic_thread_fence(memory_order_seq_cst) in thread %d right before "
                            "sb_helper_calls.c:%d (load from " % (r["access"]["thread"], line)), s
        assert "after the store to" in s and "at sb_helper_calls.c:9 (in a call that has returned)" in s, s
        assert "in thread %d between" % r["access"]["thread"] not in s, s


def test_cpp20_double_fetch_add_suggestion_names_user_lines(run_pyrsan, tmp_path):
    reports = _reports(run_pyrsan, tmp_path, CORPUS / "sb_double_fetch_add.cpp", "-std=c++20")
    assert reports
    for r in reports:
        s = r["suggestion"]
        assert "right before sb_double_fetch_add.cpp:%d (load from " % r["access"]["line"] in s, s
        assert "between atomic_base.h" not in s and "right after atomic_base.h" not in s, s
        assert "right after sb_double_fetch_add.cpp:" in s, s


def test_switch_cases_over_a_run_time_order_are_not_fences_in_between(run_pyrsan, tmp_path):
    """With run-time orders each access is a switch with one atomic instruction per order (a
    seq_cst one among them, on another path): those copies of one source point are never "an SC
    fence already in the code" between two accesses or after the write SC requires."""
    reports = _reports(run_pyrsan, tmp_path, CORPUS / "dynamic_order.c")
    assert reports
    for r in reports:
        s = r["suggestion"]
        assert s.startswith("insert atomic_thread_fence(memory_order_seq_cst) in thread %d between "
                            "dynamic_order.c:%d (store to " % (r["access"]["thread"], r["access"]["line"] - 1)), s
        assert "already" not in s and r["repair"]["cost"]["fences"] == 2, s
