"""A crowded granule's mark carries the flags of what its overflow block may hold
(docs/design/races.md §12): MARK_PLAIN (a plain access may be in the block, so an atomic access
must check it) and MARK_WRITES (a write may be, so a plain read must). Each scenario runs in an
explicit interleaving on one OS thread; the last access conflicts with exactly one earlier
access, which it does not happen after."""
import pytest

from test_race_rules import setup

NLOADERS = 6  # more atomic readers than a granule's 4 cells: the granule is marked


def last_access(rt, x, kind, line):
    site = rt.site(kind, line, "w")
    if kind == "st":
        rt.store(x, 1, "rlx", site=site, size=8)
    else:
        rt.rmw(x, "add", 1, "rlx", site=site, size=8)


@pytest.mark.parametrize("kind", ["st", "rmw"])
def test_a_plain_read_in_the_lane_of_an_atomic_granule_is_checked_by_a_later_write(rt, kind):
    """Six threads' atomic loads mark x (every cell atomic: no flag); a plain read then takes its
    lane (a read has nothing to check in a block without writes), which must set MARK_PLAIN
    first; an atomic write unordered with that read (a store or an RMW, which skips the block
    of a mark without MARK_PLAIN and takes its own lane) is its race. Fails if the plain read
    takes its lane without setting MARK_PLAIN (a miss)."""
    th, (x,) = setup(rt, nvars=("x",))
    loaders = [th.spawn() for _ in range(NLOADERS)]
    reader, writer = th.spawn(), th.spawn()
    for i, t in enumerate(loaders):
        th.on(t)
        rt.load(x, "rlx", site=rt.site("ld", 100 + i, f"t{i}"), size=8)
    th.on(reader)
    rt.read(x, site=rt.site("read", 200, "r"), size=8)
    assert rt.races() == []
    th.on(writer)
    last_access(rt, x, kind, 300)
    assert [(r["access"]["line"], r["previous"]["line"]) for r in rt.races()] == [(300, 200)], kind


@pytest.mark.parametrize("kind", ["st", "rmw"])
def test_a_granule_marked_over_a_plain_read_is_checked_by_a_later_write(rt, kind):
    """A plain read of x, then four threads' atomic loads: the fourth finds the granule full and
    moves the plain read (the first cell that is a read) to the new overflow block, so the mark
    is made with MARK_PLAIN; two more loads then go to their lanes or the block. An atomic write
    unordered with the plain read is its race. Fails if the mark is made without the flag of
    the cell it moves (the write takes its lane unchecked: a miss)."""
    th, (x,) = setup(rt, nvars=("x",))
    reader = th.spawn()
    loaders = [th.spawn() for _ in range(NLOADERS)]
    writer = th.spawn()
    th.on(reader)
    rt.read(x, site=rt.site("read", 200, "r"), size=8)
    for i, t in enumerate(loaders):
        th.on(t)
        rt.load(x, "rlx", site=rt.site("ld", 100 + i, f"t{i}"), size=8)
    assert rt.races() == []
    th.on(writer)
    last_access(rt, x, kind, 300)
    assert [(r["access"]["line"], r["previous"]["line"]) for r in rt.races()] == [(300, 200)], kind


@pytest.mark.parametrize("then", ["atomic store", "plain write"])
def test_a_granule_reset_and_marked_again_starts_from_an_empty_block(rt, then):
    """x is crowded by six plain reads and a plain write (cells in the block's lanes and shared
    cells, both flags set), then reset (its memory reused: the mark goes, the block is an
    orphan), then crowded again by six atomic loads, which take the same block again (emptied,
    the new mark's flags clear). "atomic store": a plain read then takes its lane and an atomic
    store unordered with it is its race (fails if the new mark is made with stale flags or the
    read's flag is lost). "plain write": a write ordered after every access since the reset is
    no race (fails if the reused block keeps the first crowd's cells: its shared cells or the
    lanes inside it, unordered with the writer: false alarms)."""
    names = ("x",) + tuple(f"f{i}" for i in range(NLOADERS))
    th, (x, *flags) = setup(rt, nvars=names)
    first = [th.spawn() for _ in range(NLOADERS)]
    second = [th.spawn() for _ in range(NLOADERS)]
    reader, last = th.spawn(), th.spawn()
    for i, t in enumerate(first):
        th.on(t)
        rt.read(x, site=rt.site("read", 100 + i, f"a{i}"), size=8)
    th.on(first[0])
    rt.write(x, site=rt.site("write", 150, "a0"), size=8)
    rt.races()
    rt.lib.rsan_memory_retire(x, 8)  # the memory is reused: earlier accesses are no races
    for i, t in enumerate(second):
        th.on(t)
        rt.load(x, "rlx", site=rt.site("ld", 200 + i, f"b{i}"), size=8)
        rt.store(flags[i], 1, "rel", site=rt.site("st", 250 + i, f"b{i}"))
    before = len(rt.races())
    if then == "atomic store":
        th.on(reader)
        rt.read(x, site=rt.site("read", 300, "r"), size=8)
        th.on(last)
        rt.store(x, 1, "rlx", site=rt.site("st", 400, "w"), size=8)
        assert [(r["access"]["line"], r["previous"]["line"]) for r in rt.races()[before:]] == [(400, 300)]
    else:
        th.on(last)
        for i in range(NLOADERS):
            assert rt.load(flags[i], "acq", site=rt.site("ld", 350 + i, "w")) == 1
        rt.write(x, site=rt.site("write", 400, "w"), size=8)
        assert rt.races()[before:] == []
