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
    lib = rt.lib
    x, y = rt.var("x"), rt.var("y")
    main = lib.__rsan_test_new_thread(rt.ffi.NULL)
    t1 = lib.rsan_thread_create(main)
    t2 = lib.rsan_thread_create(main)
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, site=rt.site("st", 1, "t1"))
    rt.load(y, site=rt.site("ld", 2, "t1"))
    lib.__rsan_test_set_current(t2)
    rt.store(y, 1, site=rt.site("st", 3, "t2"))
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
    lib = rt.lib
    x, y = rt.var("x"), rt.var("y")
    main = lib.__rsan_test_new_thread(rt.ffi.NULL)
    t1 = lib.rsan_thread_create(main)
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, site=rt.site("st", 1, "t1"))
    rt.load(y, site=rt.site("ld", 2, "t1"))
    lib.__rsan_test_set_current(main)
    rt.store(y, 1, site=rt.site("st", 3, "main"))
    t2 = lib.rsan_thread_create(main)
    lib.__rsan_test_set_current(t2)
    rt.load(x, site=rt.site("ld", 4, "t2"))
    (report,) = rt.reports()
    repair = report["repair"]
    assert repair["kind"] == "order" and repair["order"] == "seq_cst"
    assert [a["line"] for a in repair["accesses"]] == [4]
    assert "sc_accesses=ra" in repair["why"]
