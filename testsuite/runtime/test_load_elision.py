"""A load whose fact adds nothing makes none (docs/design/clocks.md §26, runtime/src/rsan_engine.h
rsan_load_fact_redundant): x's newest fact holds x's current timestamps and the loading thread's
Tc contains it (before the load, or through an acquire load's Tc ⊔= W(x)). Then x's window gets
no fact from the load, and every clock value and report is what it was with the fact.

Each test checks both sides: where the fact must be elided (the window does not grow), and where
it must not (the window grows, and the loading thread's clocks at x hold the write). Mutants each
catches are named in the tests' docstrings; the differential tests (test_model.py and the
benchmarks' differential.py) check the clock values and reports of random programs."""
from harness import ORDERS

TC, TR, TA, TSC = 0, 1, 2, 3  # __rsan_test_thread_clock's which


def clocks(rt, t, p):
    return [rt.lib.__rsan_test_thread_clock(t, w, p) for w in (TC, TA, TSC)]


def facts(rt, p):
    return rt.lib.__rsan_test_location_facts(p)


def threads(rt, n):
    lib, ffi = rt.lib, rt.ffi
    main = lib.__rsan_test_new_thread(ffi.NULL)
    return main, [lib.__rsan_test_new_thread(main) for _ in range(n)]


def _release_then_relaxed(rt, acquire):
    """t1 release-stores x = 1 and t2 acquires it with acquire(x, 1) (W(x) holds the store's fact:
    no fact made); t1 then stores x = 2 relaxed and t3 acquires it (W(x) holds nothing: a fact
    made, t3's clocks at x hold the store). Returns x, the threads, and x's facts before t3's
    load; t3 is current."""
    lib = rt.lib
    x = rt.var("x")
    _, (t1, t2, t3) = threads(rt, 3)
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, "rel", size=8)
    lib.__rsan_test_set_current(t2)
    n = facts(rt, x)
    assert acquire(x, 1)
    assert facts(rt, x) == n
    assert clocks(rt, t2, x) == [1, 1, 1]
    lib.__rsan_test_set_current(t1)
    rt.store(x, 2, "rlx", size=8)
    lib.__rsan_test_set_current(t3)
    n = facts(rt, x)
    assert acquire(x, 2)
    assert facts(rt, x) == n + 1
    assert clocks(rt, t3, x) == [2, 2, 2]
    return x, (t1, t2, t3), n


def test_a_relaxed_load_of_a_write_its_thread_acquired_makes_no_fact(rt):
    """Message passing: t1 stores x (relaxed) and y (release); t2 acquires y, then loads x
    (relaxed): t2's Tc already contains t1's fact of x, so the load adds none. t3, which did not
    synchronise, loads x: its Tc does not contain that fact, so its load makes one, and its Tc
    at x is x's stamp (coherence). Mutant caught: the elision without the containment test
    (t3's load makes no fact, and t3's Tc(x) stays 0)."""
    lib = rt.lib
    x, y = rt.var("x"), rt.var("y")
    main, (t1, t2, t3) = threads(rt, 3)
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, "rlx", size=8)
    rt.store(y, 1, "rel", size=8)
    lib.__rsan_test_set_current(t2)
    assert rt.load(y, "acq", size=8) == 1
    n = facts(rt, x)
    assert rt.load(x, "rlx", size=8) == 1
    assert facts(rt, x) == n, "t2's load of x adds nothing: its Tc holds t1's fact"
    assert clocks(rt, t2, x) == [1, 1, 1]
    lib.__rsan_test_set_current(t3)
    assert rt.load(x, "rlx", size=8) == 1
    assert facts(rt, x) == n + 1, "t3 knew nothing of t1's store: its load's fact is needed"
    assert clocks(rt, t3, x) == [1, 1, 1]
    assert rt.reports() == []


def test_an_acquire_load_of_a_release_store_makes_no_fact_of_a_relaxed_one_does(rt):
    """t1 release-stores x: W(x) := Tc holds the store's fact, so t2's acquire load (Tc ⊔= W(x))
    adds none. t1 then stores x relaxed: W(x) := Tr = ⊥ holds nothing, so t3's acquire load makes
    its fact (Tc(x) = 2 comes from it alone). Mutants caught: the acquire case tested on Wsc(x)
    instead of W(x) (Wsc(x) holds the relaxed store's fact too: t3's load would make no fact and
    its Tc(x) would stay 1), and any load of order acquire elided."""
    x, (_, t2, _), n = _release_then_relaxed(rt, lambda p, v: rt.load(p, "acq", size=8) == v)
    rt.lib.__rsan_test_set_current(t2)  # t2 too: a relaxed load of the relaxed store needs its fact
    assert rt.load(x, "rlx", size=8) == 2
    assert facts(rt, x) == n + 2
    assert clocks(rt, t2, x) == [2, 2, 2]
    assert rt.reports() == []


def test_a_reread_after_an_elided_load_is_known_until_the_next_write(rt):
    """t2's elided load of x is remembered (its thread's elided entry: x's id and timestamps), so
    a re-read of the same write is a re-read (no fact, no joins). After t1's next relaxed store
    (which t2 does not know) t2's load must make a fact again and see the new store. Mutant
    caught: the entry matched by the location alone (t2's re-read of the new store would be
    taken as known with no fact: its Tc(x) would stay 1)."""
    lib = rt.lib
    x, y = rt.var("x"), rt.var("y")
    main, (t1, t2) = threads(rt, 2)
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, "rlx", size=8)
    rt.store(y, 1, "rel", size=8)
    lib.__rsan_test_set_current(t2)
    assert rt.load(y, "acq", size=8) == 1
    n = facts(rt, x)
    for _ in range(3):
        assert rt.load(x, "rlx", size=8) == 1
    assert facts(rt, x) == n
    lib.__rsan_test_set_current(t1)
    rt.store(x, 2, "rlx", size=8)
    lib.__rsan_test_set_current(t2)
    assert rt.load(x, "rlx", size=8) == 2
    assert facts(rt, x) == n + 2  # t1's store and t2's load
    assert clocks(rt, t2, x) == [2, 2, 2]
    assert rt.reports() == []



def test_a_completed_wait_is_a_load_whose_fact_may_be_elided(rt):
    """A wait (and a recognised spin loop's successful read) is a Load(mo) once it completes
    (algorithm.md §4): an acquire wait for a release store's value makes no fact, one for a
    relaxed store's value does, and its thread's clocks at x hold the store. Mutant caught: the
    wait's Load made with the elision but without its containment test (t3's wait would make no
    fact and its Tc(x) would stay 1)."""
    _release_then_relaxed(rt, lambda p, v: rt.lib.__rsan_test_wait_once(p, v, 8, ORDERS["acq"], 0) == 1)
    assert rt.reports() == []
