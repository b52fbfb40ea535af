"""A check answered from the window's older facts (docs/design/clocks.md §32, runtime/src/rsan_engine.h
rsan_view_same_at, facts.c rsan_loc_same_older): when x's newest fact is in neither Tc nor Tsc of
the accessing thread, the check looks at the next facts, newest first; the first one that either
clock contains decides: contained in both, Tc(x) = Tsc(x) and nothing is reported; in Tsc only,
the query (rsan_loc_query2) decides as before.

The program: t writes x = 1, t2 writes x = 2 and y = 1 (relaxed), t reads y relaxed (Tsc ⊔= Wsc(y),
which holds t2's fact of x; Tc does not), then t3 writes x = 1 `unknown` times: facts t knows of in
neither clock, newer than the one in its Tsc only. t's access of x is then stale (hb-aware of
write 1, SC forces write 2) and must be reported with those timestamps, by a load (read check),
a store (write check) and a wait (the value check of a completed wait). In the other program t2
releases y and t acquires it: the fact is in both clocks and nothing is reported.

Mutants each catches (checked by hand): the first contained fact answering 1 when either clock
holds it (`in_c | in_sc`); a fact in neither clock ending the scan with 1; the scan stopping after
one older fact (unknown = 2 then finds none and answers 1 if the fallback is 1); the inline test
answering 1 for a newest fact in Tsc only (covered by the engine's litmus tests too)."""
import pytest

from harness import ORDERS


def threads(rt, n):
    lib, ffi = rt.lib, rt.ffi
    main = lib.__rsan_test_new_thread(ffi.NULL)
    return main, [lib.__rsan_test_new_thread(main) for _ in range(n)]


def _program(rt, unknown, acquire):
    """x's window: t's write (1), t2's (2), then `unknown` writes by t3; t knows t2's write through
    y, in Tsc only (relaxed y) or in Tc and Tsc (acquire of a release store). t is current."""
    lib = rt.lib
    x, y = rt.var("x"), rt.var("y")
    _, (t, t2, t3) = threads(rt, 3)
    lib.__rsan_test_set_current(t)
    rt.store(x, 1, "rlx", size=8)
    lib.__rsan_test_set_current(t2)
    rt.store(x, 2, "rlx", size=8)
    rt.store(y, 1, "rel" if acquire else "rlx", size=8)
    lib.__rsan_test_set_current(t)
    assert rt.load(y, "acq" if acquire else "rlx", size=8) == 1
    lib.__rsan_test_set_current(t3)
    for _ in range(unknown):
        rt.store(x, 1, "rlx", size=8)  # t's own value again: a wait for 1 may read write 1
    lib.__rsan_test_set_current(t)
    assert rt.reports() == []
    return x


def _access(rt, x, how, last):
    if how == "load":
        assert rt.load(x, "rlx", size=8) == last
    elif how == "store":
        rt.store(x, 9, "rlx", size=8)
    else:  # a completed wait for 1: its value check looks for a stale write of 1 in [Tc(x), Tsc(x))
        assert rt.lib.__rsan_test_wait_once(x, last, 8, ORDERS["rlx"], 0) == 1


@pytest.mark.parametrize("how", ["load", "store", "wait"])
@pytest.mark.parametrize("unknown", [1, 2])
def test_a_fact_in_tsc_only_behind_unknown_ones_is_reported(rt, how, unknown):
    x = _program(rt, unknown, acquire=False)
    _access(rt, x, how, last=1)
    reports = rt.reports()
    if how == "wait":
        # write 1 (t's own) is in [Tc(x), Tsc(x)) = [1, 2) and holds the value the wait waits for
        assert [r["type"] for r in reports] == ["read"], reports
    else:
        assert len(reports) == 1, reports
        r = reports[0]
        assert r["type"] == ("write" if how == "store" else "read"), r
        assert (r["timestamps"]["hb"], r["timestamps"]["sc"]) == (1, 2), r


@pytest.mark.parametrize("how", ["load", "store", "wait"])
@pytest.mark.parametrize("unknown", [1, 2])
def test_a_fact_in_both_clocks_behind_unknown_ones_is_not(rt, how, unknown):
    x = _program(rt, unknown, acquire=True)
    _access(rt, x, how, last=1)
    assert rt.reports() == []
