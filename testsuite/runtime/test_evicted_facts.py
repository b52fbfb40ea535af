"""What a location remembers of a slot's older facts (runtime/src/facts.c, docs/design/clocks.md
§5, §27): the window keeps x's newest facts in lock order whoever made them, and each slot's
evicted-facts entry its two newest evicted facts (their order read from their epochs) and its
first one. A clock whose entry of a slot lies between two of that slot's facts on x gets the
older one's timestamp, exactly, as long as that fact is in the window or remembered.

Mutants each test catches (applied to runtime/src by hand, benchmarks/README.md "Session 19:
facts"): the window's eviction taking the adding slot's own oldest fact instead of x's oldest
(the per-slot window of §26's last paragraph: a slot's older facts leave while they are among
x's newest) fails test_a_slots_older_facts_stay_while_among_xs_newest; an eviction that always
overwrites h[0] (rsan_ev_next), or the older of the two read as the newest (rsan_ev_newest),
fails test_the_two_newest_evicted_facts_of_a_slot_are_exact; the first evicted fact's timestamp
or U timestamp not kept (0) fails test_the_first_evicted_facts_timestamps_bound_a_query. The
narrow table (docs/design/clocks.md §31): the inline
eviction's width test left out, rsan_loc_add_fact storing a wide epoch in a narrow table, or
ev_widen losing a remembered fact, each fails
test_a_value_past_32_bits_widens_the_table_and_changes_no_value."""

import cffi

from harness import build_engine_lib

TC = 0  # __rsan_test_thread_clock's which
BIG = 1 << 32  # an epoch past 32 bits (__rsan_test_skip_epochs)


def _setup(rt, n):
    lib, ffi = rt.lib, rt.ffi
    main = lib.__rsan_test_new_thread(ffi.NULL)
    lib.__rsan_test_set_current(main)
    return main, [lib.__rsan_test_new_thread(main) for _ in range(n)]


def _on(rt, t):
    rt.lib.__rsan_test_set_current(t)


def test_a_slots_older_facts_stay_while_among_xs_newest(rt):
    """Three readers leave a fact each on x, then A writes x (w1, stamp 1) and releases y, which
    B acquires; A writes x k more times. B's Tc at x is w1's stamp exactly while w1 is among x's
    4 newest facts or A's two newest evicted ones (k <= 5): no query is inexact."""
    lib = rt.lib
    for k in range(1, 6):
        rt.reset()
        x, y = rt.var("x"), rt.var("y")
        main, (a, b, c, d, e) = _setup(rt, 5)
        for r in (c, d, e):  # a fact each (none of them knows another's)
            _on(rt, r)
            rt.load(x, "rlx")
        _on(rt, a)
        rt.store(x, 1, "rlx")
        rt.store(y, 1, "rel")
        _on(rt, b)
        assert rt.load(y, "acq") == 1
        _on(rt, a)
        for i in range(k):
            rt.store(x, 2 + i, "rlx")
        assert lib.__rsan_test_thread_clock(b, TC, x) == 1, k
        assert lib.__rsan_test_inexact_count() == 0, k


def test_the_two_newest_evicted_facts_of_a_slot_are_exact(rt):
    """A writes x 8 times (w_j has stamp j), releasing y after each; reader B_j acquires y
    right after w_j. At the end x's window holds w5..w8 and A's entry w3 and w4 (the two newest
    evicted): B_j's Tc at x is exactly j for j >= 3; for j = 1, 2 it is bounded by A's first
    evicted fact (w1) and the oldest remembered (w3), an inexact query."""
    lib = rt.lib
    rt.reset()
    x, y = rt.var("x"), rt.var("y")
    main, threads = _setup(rt, 9)
    a, readers = threads[0], threads[1:]
    for j in range(1, 9):
        _on(rt, a)
        rt.store(x, j, "rlx")
        rt.store(y, j, "rel")
        _on(rt, readers[j - 1])
        assert rt.load(y, "acq") == j
    for j in range(8, 2, -1):  # the exact ones first: no inexact query yet
        assert lib.__rsan_test_thread_clock(readers[j - 1], TC, x) == j, j
    assert lib.__rsan_test_inexact_count() == 0
    for j in (1, 2):  # older than A's two newest evicted facts: [w1, w3], its upper bound
        assert lib.__rsan_test_thread_clock(readers[j - 1], TC, x) == 3, j
    assert lib.__rsan_test_inexact_count() == 2


def _stale_by_sc_only(rt, write, skip=False):
    """A writes x 8 times (stamps 1..8) with a store to z after w1, which R loads (relaxed):
    R's Tsc learns of A's epoch between w1 and w2 through Wsc(z), its Tc nothing of x. Then R
    reads x (write=False) or writes it: Tc(x) = 0 exactly, Tsc(x) is w1's stamp, which only A's
    first evicted fact gives (the window holds w5..w8, A's entry w3 and w4): the query is the
    bound [first evicted, oldest remembered] = [1, 3], and 1 > 0 decides the check."""
    rt.reset()
    x, z = rt.var("x"), rt.var("z")
    main, (a, r) = _setup(rt, 2)
    _on(rt, a)
    if skip:  # A's epochs past 2^32 (test_a_first_fact_past_32_bits_bounds_a_query_as_before)
        rt.lib.__rsan_test_skip_epochs(a, BIG)
    rt.store(x, 1, "rlx")
    rt.store(z, 1, "rlx")
    _on(rt, r)
    assert rt.load(z, "rlx") == 1
    _on(rt, a)
    for j in range(2, 9):
        rt.store(x, j, "rlx")
    _on(rt, r)
    if write:
        rt.store(x, 100, "rlx", site=rt.site("st", 10, "r", "rlx"))
    else:
        rt.load(x, "rlx", site=rt.site("ld", 10, "r", "rlx"))
    return rt.reports(), rt.lib.__rsan_test_inexact_count()


def test_the_first_evicted_facts_timestamps_bound_a_query(rt):
    """The lower bound of a query beyond the remembered facts is the slot's first evicted fact's
    timestamp (rsan_evicted.first_ts) and U timestamp (rsan_evfirst.tsU): with them the read
    check (timestamps) and the write check (U timestamps) are certain and report; mutants that
    leave either one 0 make the check undecided (no report) and fail this."""
    for write in (False, True):
        reports, inexact = _stale_by_sc_only(rt, write)
        assert inexact >= 1, write
        assert len(reports) == 1, (write, reports)
        assert reports[0]["type"] == ("write" if write else "read"), reports[0]
        assert reports[0]["timestamps"] == {"hb": 0, "sc": 1}, reports[0]  # Tc(x), lo(Tsc(x))


def _evlog(rt, p):
    """the record's evlog (rsan_location.h: 1 a narrow sparse table, 2 a wide one, more a direct
    one), 0 when it has no evicted-fact table"""
    ffi = cffi.FFI()
    ffi.cdef("uint64_t __rsan_test_location_copy(const void *addr, void *buf);")
    lib = ffi.dlopen(str(build_engine_lib()))  # the library the rt fixture loaded
    buf = ffi.new("uint8_t[384]")
    assert lib.__rsan_test_location_copy(ffi.cast("void *", int(rt.ffi.cast("uintptr_t", p))), buf)
    ev = int.from_bytes(bytes(ffi.buffer(buf + 208, 8)), "little")
    return buf[11] if ev else 0


def _two_newest_with_skip(rt, skip_before, n):
    """test_the_two_newest_evicted_facts_of_a_slot_are_exact's program with n writes, A's epoch
    jumped past 2^32 before its write w_skip_before (None: never): every reader's Tc at x, the
    inexact queries, and x's evlog at the end"""
    lib = rt.lib
    rt.reset()
    x, y = rt.var("x"), rt.var("y")
    main, threads = _setup(rt, n + 1)
    a, readers = threads[0], threads[1:]
    for j in range(1, n + 1):
        _on(rt, a)
        if j == skip_before:
            lib.__rsan_test_skip_epochs(a, BIG)
        rt.store(x, j, "rlx")
        rt.store(y, j, "rel")
        _on(rt, readers[j - 1])
        assert rt.load(y, "acq") == j
    got = [lib.__rsan_test_thread_clock(readers[j - 1], TC, x) for j in range(n, 0, -1)]
    return got, lib.__rsan_test_inexact_count(), _evlog(rt, x)


def test_a_value_past_32_bits_widens_the_table_and_changes_no_value(rt):
    """x's evicted-fact table is narrow (32-bit values, rsan_evicted32) while every value stored
    fits, and is widened before one that does not (docs/design/clocks.md §31). A's epochs jump
    past 2^32 before its first write (every evicted fact wide: the first eviction makes the
    table wide), or before its 3rd or 4th write (the entry holds narrow facts, then the inline
    eviction meets a wide one and widens the table, copying them), with 7 writes (the values
    read right after the widening, at w7's eviction of w3) or 8: every reader's value and the
    inexact queries are the run's without the jump. A narrow store that truncated an epoch
    (no width test in rsan_loc_add_fact_i or in rsan_loc_add_fact) makes B_3's query find w4,
    whose truncated epoch B_3 seems to contain; a widening that lost a remembered fact (ev_widen)
    gives B_2 w1's stamp."""
    for n, exact in ((7, [7, 6, 5, 4, 3, 2, 2]), (8, [8, 7, 6, 5, 4, 3, 3, 3])):
        want = _two_newest_with_skip(rt, None, n)
        assert want[:2] == (exact, n - 6), want
        assert want[2] == 1, "values below 2^32: a narrow table"
        for skip in (1, 3, 4):
            got = _two_newest_with_skip(rt, skip, n)
            assert got[:2] == want[:2], (n, skip, got)
            assert got[2] == (2 if skip <= n - 4 else 1), (n, skip, "a value past 2^32 stored: the table widened")


def test_a_first_fact_past_32_bits_bounds_a_query_as_before(rt):
    """_stale_by_sc_only's bound [first evicted, oldest remembered] with A's epochs past 2^32
    from the start (the table made wide by its first eviction): the same report."""
    for write in (False, True):
        reports, inexact = _stale_by_sc_only(rt, write, skip=True)
        assert inexact >= 1, write
        assert len(reports) == 1 and reports[0]["timestamps"] == {"hb": 0, "sc": 1}, (write, reports)
