"""Sparse sync clocks (runtime/src/vclock.c code_sparse, coded_patch; race_clock.c export_how;
docs/design/races.md §20): a release whose C differs from its slot's current base B in a few
entries exports S_x as B plus the pairs (u, C[u] - B[u]) of those entries (at most 64 and n / 4
after C moved, 8 when it did not; each difference at most 0xffff), else a new base and a thin
export. Threads are created after 20 idle ones, so every clock has more than RSAN_VC_DENSE
entries and S_x is coded. Each scenario expects races exactly where happens-before is missing,
so a sparse S_x that loses a pair, truncates a difference, or is made although an entry fell
below its base (a recycled slot's base) fails it; the counts of sparse exports fail them when
the sparse path is never taken, or taken where its limits say it must not be. The debug build
also asserts that every sparse S_x decodes to the clock it was made from."""
import os

import cffi
import pytest

from harness import build_engine_lib
from test_race_coded import PAD, on, start
from test_race_differential import check

JUMP = 0x10000 + 16  # release stores: an entry moves past B[u] + 0xffff


@pytest.fixture
def hooks(rt):
    ffi = cffi.FFI()
    ffi.cdef("uint64_t __rsan_test_sparse_made(void);")
    return ffi.dlopen(str(build_engine_lib()))


def lines(rt):
    return [(r["location"]["name"], r["access"]["line"], r["previous"]["line"]) for r in rt.races()]


@pytest.mark.parametrize("via", ["acq", "fence"])
@pytest.mark.parametrize("jump", [0, JUMP])
def test_a_sparse_export_keeps_every_entry_that_moved(rt, hooks, via, jump):
    """t1: w.store(rel) twice [its slot's base B: C as then]. t2: `jump` release stores of z;
    g = 1; m.store(rel). t1: m.load(acq) [C moves: t2's entry]; e = 1; x.store(rel) [sparse:
    t2's entry and t1's own differ from B; with the jump t2's does not fit 16 bits: a new base];
    f = 1. t3: x.load (acquire, or relaxed then an acquire fence); reads g (ordered through t2's
    pair), e (through t1's own pair) and f (not: written after the release)."""
    vs, t1, t2, t3 = start(rt, ("e", "f", "g", "m", "w", "x", "z"))
    on(rt, t1)
    rt.store(vs["w"], 1, "rel", site=rt.site("st", 11, "t1"))
    rt.store(vs["w"], 2, "rel", site=rt.site("st", 11, "t1"))
    on(rt, t2)
    st = rt.site("st", 21, "t2")
    for i in range(jump):
        rt.store(vs["z"], i, "rel", site=st)
    rt.write(vs["g"], site=rt.site("write", 22, "t2"))
    rt.store(vs["m"], 1, "rel", site=rt.site("st", 23, "t2"))
    on(rt, t1)
    assert rt.load(vs["m"], "acq", site=rt.site("ld", 12, "t1")) == 1
    rt.write(vs["e"], site=rt.site("write", 13, "t1"))
    before = hooks.__rsan_test_sparse_made()
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 14, "t1"))
    assert hooks.__rsan_test_sparse_made() - before == (0 if jump else 1)
    rt.write(vs["f"], site=rt.site("write", 15, "t1"))
    on(rt, t3)
    assert rt.load(vs["x"], "acq" if via == "acq" else "rlx", site=rt.site("ld", 31, "t3")) == 1
    if via == "fence":
        rt.fence("acq", site=rt.site("fence", 32, "t3"))
    for k, name in enumerate(("g", "e", "f")):
        rt.read(vs[name], site=rt.site("read", 33 + k, "t3"))
    assert lines(rt) == [("f", 35, 15)]


@pytest.mark.parametrize("movers", [2, 9])
def test_an_export_whose_clock_moved_in_many_entries_is_not_sparse(rt, hooks, movers):
    """`movers` threads each write their d_i and release m_i; t1, whose base was made before,
    acquires every m_i, writes e and releases x: sparse with 2 movers (3 entries differ), a new
    base with 9 (10 entries differ: more than n / 4 of the 28 slots). t3 acquires x and reads
    every d_i and e (all ordered) and f (written by t1 after: races)."""
    names = ["e", "f", "w", "x"] + [f"d{i}" for i in range(movers)] + [f"m{i}" for i in range(movers)]
    vs, t1, _, t3 = start(rt, tuple(names))
    lib = rt.lib
    on(rt, t1)
    rt.store(vs["w"], 1, "rel", site=rt.site("st", 11, "t1"))
    rt.store(vs["w"], 2, "rel", site=rt.site("st", 11, "t1"))
    ts = [lib.rsan_thread_create(t1) for _ in range(movers)]  # (t1's C moves: it is not checked)
    rt.store(vs["w"], 3, "rel", site=rt.site("st", 11, "t1"))
    rt.store(vs["w"], 4, "rel", site=rt.site("st", 11, "t1"))
    for i, t in enumerate(ts):
        on(rt, t)
        rt.write(vs[f"d{i}"], site=rt.site("write", 40 + i, f"m{i}"))
        rt.store(vs[f"m{i}"], 1, "rel", site=rt.site("st", 60 + i, f"m{i}"))
    on(rt, t1)
    for i in range(movers):
        assert rt.load(vs[f"m{i}"], "acq", site=rt.site("ld", 12, "t1")) == 1
    rt.write(vs["e"], site=rt.site("write", 13, "t1"))
    before = hooks.__rsan_test_sparse_made()
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 14, "t1"))
    assert hooks.__rsan_test_sparse_made() - before == (1 if movers == 2 else 0)
    rt.write(vs["f"], site=rt.site("write", 15, "t1"))
    on(rt, t3)
    assert rt.load(vs["x"], "acq", site=rt.site("ld", 31, "t3")) == 1
    for i in range(movers):
        rt.read(vs[f"d{i}"], site=rt.site("read", 32, "t3"))
    rt.read(vs["e"], site=rt.site("read", 33, "t3"))
    rt.read(vs["f"], site=rt.site("read", 34, "t3"))
    assert lines(rt) == [("f", 34, 15)]


def test_releases_with_nothing_new_acquired_are_sparse_four_times_then_thin(rt, hooks):
    """t1 acquires t2's m (C moves), releases x (sparse), then releases y_0 .. y_6 with nothing
    acquired between: y_0 .. y_3 sparse, y_4 a new base (then thin), y_5, y_6 thin; t1 writes
    a_k before y_k and b after y_6. t3 acquires each y_k and reads a_k and g (ordered); b races."""
    names = ["b", "g", "m", "x"] + [f"y{k}" for k in range(7)] + [f"a{k}" for k in range(7)]
    vs, t1, t2, t3 = start(rt, tuple(names))
    on(rt, t2)
    rt.write(vs["g"], site=rt.site("write", 21, "t2"))
    rt.store(vs["m"], 1, "rel", site=rt.site("st", 22, "t2"))
    on(rt, t1)
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 10, "t1"))  # a base for the slot
    assert rt.load(vs["m"], "acq", site=rt.site("ld", 11, "t1")) == 1
    rt.store(vs["x"], 2, "rel", site=rt.site("st", 12, "t1"))  # C moved: sparse
    made = []
    for k in range(7):
        rt.write(vs[f"a{k}"], site=rt.site("write", 13, "t1"))
        before = hooks.__rsan_test_sparse_made()
        rt.store(vs[f"y{k}"], 1, "rel", site=rt.site("st", 14, "t1"))
        made.append(hooks.__rsan_test_sparse_made() - before)
    assert made == [1, 1, 1, 1, 0, 0, 0]
    rt.write(vs["b"], site=rt.site("write", 15, "t1"))
    on(rt, t3)
    for k in range(7):
        assert rt.load(vs[f"y{k}"], "acq", site=rt.site("ld", 31, "t3")) == 1
        rt.read(vs[f"a{k}"], site=rt.site("read", 32, "t3"))
    rt.read(vs["g"], site=rt.site("read", 33, "t3"))
    rt.read(vs["b"], site=rt.site("read", 34, "t3"))
    assert lines(rt) == [("b", 34, 15)]


def test_a_recycled_slot_exports_sparse_over_its_previous_owners_base_exactly(rt, hooks):
    """t2: m.store(rel). t1 (slot u): x.store(rel); m.load(acq); x.store(rel) [slot u's base
    holds t2's entry as t1 acquired it]. t2: q = 1; creates c; r = 1. c joins t1 (slot u is
    c's to give) and creates t4, which takes slot u with c's C (t2's entry past q). t4: h = 1;
    y.store(rel) [sparse over t1's base: t2's entry must be t4's, not the base's]; k = 1. t3:
    y.load(acq); reads h and q (ordered: through t4's own and t2's pairs), r and k (not: written
    after t2 created c, after t4's release). A pair taken from the old owner's base loses q
    (a false alarm); one that claims more than t4's C hides r (a miss)."""
    vs, t1, t2, t3 = start(rt, ("h", "k", "m", "q", "r", "x", "y"))
    lib = rt.lib
    on(rt, t2)
    rt.store(vs["m"], 1, "rel", site=rt.site("st", 21, "t2"))
    on(rt, t1)
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 10, "t1"))
    assert rt.load(vs["m"], "acq", site=rt.site("ld", 11, "t1")) == 1
    rt.store(vs["x"], 2, "rel", site=rt.site("st", 12, "t1"))
    on(rt, t2)
    rt.write(vs["q"], site=rt.site("write", 22, "t2"))
    c = lib.rsan_thread_create(t2)
    rt.write(vs["r"], site=rt.site("write", 23, "t2"))
    lib.rsan_thread_join(c, t1)
    t4 = lib.rsan_thread_create(c)
    on(rt, t4)
    rt.write(vs["h"], site=rt.site("write", 41, "t4"))
    before = hooks.__rsan_test_sparse_made()
    rt.store(vs["y"], 1, "rel", site=rt.site("st", 42, "t4"))
    assert hooks.__rsan_test_sparse_made() - before == 1
    rt.write(vs["k"], site=rt.site("write", 43, "t4"))
    on(rt, t3)
    assert rt.load(vs["y"], "acq", site=rt.site("ld", 31, "t3")) == 1
    for k, name in enumerate(("h", "q", "r", "k")):
        rt.read(vs[name], site=rt.site("read", 32 + k, "t3"))
    assert lines(rt) == [("r", 34, 23), ("k", 35, 43)]


def test_a_base_above_the_clock_is_not_used_for_a_sparse_export(rt, hooks):
    """A slot's bases outlive a reset (as a slot's outlive its thread): first t1 makes JUMP
    release stores, acquires, releases again, and its slot's new base holds its own entry past
    0x10000. After the reset, t1
    (the same slot) acquires t2's m, writes e, releases x: its own entry is below the base's, so
    S_x is not sparse over it (a pair cannot go below B). f = 1 after. t3 acquires x: e ordered,
    f races (a sparse S_x that kept the base's own entry would hide it)."""
    vs, t1, t2, _ = start(rt, ("m", "z"))
    on(rt, t2)
    rt.store(vs["m"], 1, "rel", site=rt.site("st", 21, "t2"))
    on(rt, t1)
    assert rt.load(vs["m"], "acq", site=rt.site("ld", 11, "t1")) == 1
    st = rt.site("st", 12, "t1")
    for i in range(JUMP):
        rt.store(vs["z"], i, "rel", site=st)
    on(rt, t2)
    rt.store(vs["m"], 2, "rel", site=rt.site("st", 22, "t2"))
    on(rt, t1)
    assert rt.load(vs["m"], "acq", site=rt.site("ld", 11, "t1")) == 2
    rt.store(vs["z"], 0, "rel", site=st)  # C moved, its own entry past the base's + 0xffff: a new base
    vs, t1, t2, t3 = start(rt, ("e", "f", "m", "x"))
    on(rt, t2)
    for i in range(6):  # t2's entry past the base's: one entry above it, the own one below
        rt.store(vs["m"], 1, "rel", site=rt.site("st", 21, "t2"))
    on(rt, t1)
    assert rt.load(vs["m"], "acq", site=rt.site("ld", 11, "t1")) == 1
    rt.write(vs["e"], site=rt.site("write", 13, "t1"))
    before = hooks.__rsan_test_sparse_made()
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 14, "t1"))
    assert hooks.__rsan_test_sparse_made() == before
    rt.write(vs["f"], site=rt.site("write", 15, "t1"))
    on(rt, t3)
    assert rt.load(vs["x"], "acq", site=rt.site("ld", 31, "t3")) == 1
    rt.read(vs["e"], site=rt.site("read", 32, "t3"))
    rt.read(vs["f"], site=rt.site("read", 33, "t3"))
    assert lines(rt) == [("f", 33, 15)]


def test_random_programs_with_sparse_sync_clocks(rt, hooks):
    """The differential programs after 20 idle threads (clocks of 21+ entries, every S_x coded;
    the idle threads joined as well, so that slots are reused), where most exports are sparse.
    Fails when a sparse S_x decodes to another clock than the C it was made from (a miss or a
    false alarm against the model, or the debug build's check), and when none is made."""
    before = hooks.__rsan_test_sparse_made()
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "150"))
    runs, racy = check(rt, count, seed=73, pad=PAD)
    assert racy > 0
    runs, racy = check(rt, count // 2, seed=74, pad=PAD, join_pads=True)
    assert racy > 0
    assert hooks.__rsan_test_sparse_made() > before
