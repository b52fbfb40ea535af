"""The structured `repair` field of a robustness report (issue 6 item 1), from the engine
driven directly (testsuite/runtime's cffi harness): a fence between the thread's two accesses
(and one in the writer's thread), or, with no earlier access, the orders to strengthen."""

from __future__ import annotations


import pytest

from harness import Runtime, load_engine


@pytest.fixture
def rt(tmp_path):
    ffi, lib = load_engine()
    runtime = Runtime(ffi, lib, tmp_path)
    runtime.reset()
    yield runtime
    lib.__rsan_test_reset()


def test_sb_repair_names_both_threads_fences(rt):
    x, y = rt.sb_prefix()
    rt.load(x, site=rt.site("ld", 4, "t2"))
    (report,) = rt.reports()
    repair = report["repair"]
    assert repair["kind"] == "fence" and repair["thread"] == report["access"]["thread"]
    assert (repair["after"]["line"], repair["after"]["operation"]) == (3, "store")
    assert (repair["before"]["line"], repair["before"]["site"]) == (4, report["access"]["site"])
    assert repair["writer"]["after"]["line"] == 1
    assert repair["writer"]["thread"] == report["forced"]["thread"] != repair["thread"]
    assert repair["why"] and report["suggestion"].endswith(repair["why"])


def test_first_access_repair_strengthens_orders(rt):
    # T2's very first access is the violating load; its SC knowledge comes from creation
    x, y = rt.sb_prefix(writer_is_main=True)
    rt.load(x, site=rt.site("ld", 4, "t2"))
    (report,) = rt.reports()
    repair = report["repair"]
    assert repair["kind"] == "order" and repair["order"] == "seq_cst"
    assert [a["line"] for a in repair["accesses"]] == [4]
    assert "sc_accesses=ra" in repair["why"]
