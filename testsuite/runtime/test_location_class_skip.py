"""The classes a location skips once most locations move past them (runtime/src/location.c
`class_for`, docs/design/clocks.md §29): when at least half of the records of the class without
W (NOW) that writes made were promoted to the full class, after at least `skip_min` were made, a
write that needs NOW gets a full record (W = ⊥ in it); likewise a load stops making compact
records once half of those made were expanded again. Only which class holds a location's state
changes: every report stays the transcription's (test_model.py)."""
import random

import cffi

from harness import build_engine_lib
from test_location_class import COLD, COMPACT, FULL, NOW, fresh
from test_model import exact_against_transcription
from test_race_rules import setup
from test_snapshots import random_big_program


_ffi = cffi.FFI()
_ffi.cdef("uint64_t __rsan_test_class_skip_min(uint64_t n);")


def _skip_min(rt, n):
    """skip_min := n in the library the rt fixture loaded (one state); the old one"""
    return _ffi.dlopen(str(build_engine_lib())).__rsan_test_class_skip_min(n)


def test_a_write_skips_the_class_without_w_once_skip_min_records_were_made(rt):
    """skip_min = 16: the first 16 locations a relaxed RMW makes are NOW records; from then on
    a write that needs NOW makes or promotes a full record (a fresh location's relaxed RMW; a
    compact location's relaxed store), which holds W = ⊥: an acquire load of the RMW learns
    nothing from it (the plain write before it still races), and the values and stamps are
    the writes'."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    old = _skip_min(rt, 16)
    try:
        main = rsan.test_new_thread(ffi.NULL)
        rsan.test_set_current(main)
        a = fresh(rt, 32)
        for i in range(16):
            rt.rmw(a + 2 * i, "add", 1, "rlx")
            assert lib.__rsan_test_location_class(a + 2 * i) == NOW, i
        rt.rmw(a + 2 * 16, "add", 1, "rlx")
        assert lib.__rsan_test_location_class(a + 2 * 16) == FULL
        assert lib.__rsan_test_location_stamp(a + 2 * 16) == 1
        rt.load(a + 2 * 17, "rlx")  # compact; then a relaxed store: FULL at once
        assert lib.__rsan_test_location_class(a + 2 * 17) == COMPACT
        promoted = lib.__rsan_test_location_promotions()
        rt.store(a + 2 * 17, 3, "rlx")
        assert lib.__rsan_test_location_class(a + 2 * 17) == FULL
        assert lib.__rsan_test_location_promotions() - promoted == 1
        rt.store(a + 2 * 3, 5, "rel")  # a NOW record still promotes as before
        assert lib.__rsan_test_location_class(a + 2 * 3) == FULL
        assert rt.load(a + 2 * 17, "acq") == 3 and rt.load(a + 2 * 16, "acq") == 1
        assert rt.reports() == []
    finally:
        _skip_min(rt, old)


def test_w_of_a_skipped_record_stays_bottom(rt):
    """With NOW skipped (skip_min = 0): T1 stores y (relaxed) and then x.fetch_add(1) relaxed,
    which makes x a full record whose W stays ⊥ (Tr = ⊥); T2's acquire load of x then joins
    nothing into its Tc: its Tc at y stays 0, and T1's plain write before the RMW races with
    T2's read. With a release RMW instead, T2's Tc at y is y's store (1) and there is no race.
    Mutant: the relaxed RMW's W ⊔= Tr as W ⊔= Tc (rsan_engine.h rsan_hb_rmw_i)."""
    lib = rt.lib
    for rel, tc_y, races in (("rlx", 0, 1), ("rel", 1, 0)):
        old = _skip_min(rt, 0)
        try:
            th, (data, x, y) = setup(rt, nvars=("data", "x", "y"))
            t1, t2 = th.spawn(), th.spawn()
            th.on(t1)
            rt.write(data, site=rt.site("write", 11, "t1"))
            rt.store(y, 1, "rlx", site=rt.site("st", 12, "t1"))
            rt.rmw(x, "add", 1, rel, site=rt.site("rmw", 13, "t1"))
            assert lib.__rsan_test_location_class(x) == FULL
            th.on(t2)
            assert rt.load(x, "acq", site=rt.site("ld", 21, "t2")) == 1
            assert lib.__rsan_test_thread_clock(t2, 0, y) == tc_y, rel  # Tc at y
            rt.read(data, site=rt.site("read", 22, "t2"))
            assert len(rt.races()) == races, rel
        finally:
            _skip_min(rt, old)


def test_a_load_stops_making_compact_records_once_most_were_expanded(rt):
    """skip_min = 8: 8 locations left compact by loads, 4 of them expanded again by another
    thread's load (half: skipped). The next fresh location's load leaves a COLD record."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    old = _skip_min(rt, 8)
    try:
        main = rsan.test_new_thread(ffi.NULL)
        rsan.test_set_current(main)
        a = fresh(rt, 16)
        for i in range(8):
            rt.load(a + 2 * i, "acq")
            assert lib.__rsan_test_location_class(a + 2 * i) == COMPACT
        for i in range(3):
            rt.store(a + 2 * i, 1, "rel")  # expanded (and promoted)
        rt.load(a + 2 * 8, "acq")  # 3 of 9 expanded: still compact
        assert lib.__rsan_test_location_class(a + 2 * 8) == COMPACT
        for i in (3, 4, 5):
            rt.rmw(a + 2 * i, "add", 1, "rlx")  # 6 of 9 expanded
        rt.load(a + 2 * 9, "acq")
        assert lib.__rsan_test_location_class(a + 2 * 9) == COLD
        assert rt.load(a + 2 * 9, "acq") == 0 and lib.__rsan_test_location_stamp(a + 2 * 9) == 0
        assert rt.reports() == []
    finally:
        _skip_min(rt, old)


def test_skipping_the_small_classes_keeps_every_verdict(rt):
    """skip_min = 0 (both skips on from the start: every write makes or promotes to FULL, no
    compact record is made): the staged programs of test_location_class.py (loads and relaxed
    writes first, release writes and fences later; 7 threads, shared snapshots) give the
    transcription's reports, with no record of the class without W or compact made."""
    rnd = random.Random(29)
    lib = rt.lib

    def staged():
        early = random_big_program(rnd, 12, 7, rnd.randint(4, 8), kinds=("ld", "ld", "st", "rmw", "cas"),
                                   loads=("rlx", "acq", "sc"), stores=("rlx",))
        late = random_big_program(rnd, 12, 7, rnd.randint(4, 8), kinds=("ld", "st", "rmw", "cas", "fence"),
                                  loads=("rlx", "acq", "sc"), stores=("rlx", "rel", "sc"))
        early.threads = [a + b for a, b in zip(early.threads, late.threads)]
        return early

    old = _skip_min(rt, 0)
    try:
        exact, reported = exact_against_transcription(rt, rnd, staged, 30)
        assert exact >= 20 and reported >= 80, (exact, reported)
        assert [lib.__rsan_test_location_records(c) for c in (NOW, COMPACT)] == [0, 0]
    finally:
        _skip_min(rt, old)
