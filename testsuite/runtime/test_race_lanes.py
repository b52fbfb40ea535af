"""The atomic accesses of a crowded granule in their lanes (docs/design/races.md §11): an atomic
access of a marked granule whose block holds no plain cell goes to its thread's lane, and the
thread's own main cell, which it covers, is freed. Each scenario runs in an explicit
interleaving on one OS thread; the plain access at the end is ordered after every thread's
atomic accesses but thread k's last one, so exactly that access is its race, whichever k
(the first accessors keep main cells, the later ones start in lanes)."""
import pytest

from test_race_rules import setup

NTHREADS = 6  # more than a granule's 4 cells: the granule is marked, the rest in the block


def crowded(rt, kind, k, sync_all=False):
    """T0..T5 each: an atomic access of x (line 100 + i); release g_i; the same access again at
    the new epoch (line 200 + i: a thread with a main cell moves to its lane); release f_i.
    W acquires f_i from every thread (but k's unless sync_all), then a plain access of x that
    conflicts with the atomic ones: a write after loads, a read after RMWs."""
    names = ("x",) + tuple(f"g{i}" for i in range(NTHREADS)) + tuple(f"f{i}" for i in range(NTHREADS))
    th, (x, *flags) = setup(rt, nvars=names)
    g, f = flags[:NTHREADS], flags[NTHREADS:]
    ts = [th.spawn() for _ in range(NTHREADS)]
    w = th.spawn()

    def access(i, line):
        site = rt.site(kind, line, f"t{i}")
        if kind == "ld":
            rt.load(x, "rlx", site=site, size=8)
        else:
            rt.rmw(x, "add", 1, "rlx", site=site, size=8)

    for i, t in enumerate(ts):
        th.on(t)
        access(i, 100 + i)
        rt.store(g[i], 1, "rel", site=rt.site("st", 150 + i, f"t{i}"))
    for i, t in enumerate(ts):
        th.on(t)
        access(i, 200 + i)
        rt.store(f[i], 1, "rel", site=rt.site("st", 250 + i, f"t{i}"))
    assert rt.races() == []  # atomic accesses never race with each other
    th.on(w)
    for i in range(NTHREADS):
        if i != k or sync_all:
            assert rt.load(f[i], "acq", site=rt.site("ld", 300 + i, "w")) == 1
    site = rt.site("write" if kind == "ld" else "read", 400, "w")
    if kind == "ld":
        rt.write(x, site=site, size=8)
    else:
        rt.read(x, site=site, size=8)
    return rt.races()


@pytest.mark.parametrize("kind", ["ld", "rmw"])
def test_a_crowded_atomic_granule_keeps_each_threads_latest_access(rt, kind):
    """For each k, one race, with thread k's access: its latest (line 200 + k), or its earlier
    one (line 100 + k) where that one sits in the block's shared cells, which the later one,
    taking its lane, does not replace (the cell moved out when the granule was marked, and the
    one the marking access stored there: at most two threads). Fails if an access that moves to
    its lane is not stored there, or another slot's cell is taken or freed (a miss, or a report
    naming another thread), or if the main cells the threads leave are kept (they are scanned
    first: the earlier access of every thread with a main cell would be named)."""
    earlier = []
    for k in range(NTHREADS):
        races = crowded(rt, kind, k)
        assert len(races) == 1, (kind, k, races)
        line = races[0]["previous"]["line"]
        assert races[0]["access"]["line"] == 400 and line in (100 + k, 200 + k), (kind, k, line)
        if line == 100 + k:
            earlier.append(k)
    assert len(earlier) <= 2, (kind, earlier)


@pytest.mark.parametrize("kind", ["ld", "rmw"])
def test_a_crowded_atomic_granule_ordered_before_the_plain_access_is_no_race(rt, kind):
    """Fails if a freed main cell or a lane keeps a stale access that reads as unordered."""
    assert crowded(rt, kind, 0, sync_all=True) == []


def test_lanes_of_slots_that_share_a_line_stay_apart(rt):
    """Slots k and k + 16 share a line of a lane chunk (rsan_race.h rsan_lane_at): 24 readers
    (slots 1..24; the first five take the main cells and the block's, the others lanes, so
    slots 6 and 22, 7 and 23, 8 and 24 share lines) read x unordered; a writer acquires from
    every reader but reader k, then writes x: a race with reader k's read alone. Fails if two
    slots of one line share a lane (one read would stand for the other: a miss)."""
    n = 24
    names = ("x",) + tuple(f"f{i}" for i in range(n))
    for k in (5, 6, 21, 22, 23):
        th, (x, *flags) = setup(rt, nvars=names)
        readers = [th.spawn() for _ in range(n)]
        writer = th.spawn()
        for i, r in enumerate(readers):
            th.on(r)
            rt.read(x, site=rt.site("read", 100 + i, f"r{i}"), size=8)
            rt.store(flags[i], 1, "rel", site=rt.site("st", 200 + i, f"r{i}"))
        th.on(writer)
        for i in range(n):
            if i != k:
                assert rt.load(flags[i], "acq", site=rt.site("ld", 300 + i, "w")) == 1
        rt.write(x, site=rt.site("write", 400, "w"), size=8)
        assert [r["previous"]["line"] for r in rt.races()] == [100 + k], k
