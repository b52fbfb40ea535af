"""Thin exports of a location's sync clock S_x (runtime/src/race_clock.c, vclock.c;
docs/design/races.md §10): with 16 slots or more, a release whose thread acquired nothing new
since its slot's base was made exports S_x as that base with the thread's own entry replaced
(O(1)); a thread whose C did not move between two exports takes a new base first. These
scenarios run the three ways an export codes S_x (offsets, a new base, thin) and a C that moves
in between, and expect races exactly where happens-before is missing: a thin export on a base
that misses what the thread acquired since (a false alarm), or whose own entry is not the
export's (a false alarm when too small, a miss when too large), fails them. The debug build
also asserts, at every thin export, that the base equals C but for C's own entry."""

from test_race_coded import on, start  # 20 idle slots first: clocks of more than 16 entries


def lines(rt):
    return [(r["location"]["name"], r["access"]["line"], r["previous"]["line"]) for r in rt.races()]


def test_a_thin_export_carries_the_releasing_threads_own_entry(rt):
    """t1: release stores of x, y (a new base: C did not move), then a = 1; z.store(rel) (thin);
    b = 1. t3: z.load(acq); read a (ordered by z), read b (written after the release: races)."""
    vs, t1, _, t3 = start(rt, ("a", "b", "x", "y", "z"))
    on(rt, t1)
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 11, "t1"))
    rt.store(vs["y"], 1, "rel", site=rt.site("st", 12, "t1"))
    rt.write(vs["a"], site=rt.site("write", 13, "t1"))
    rt.store(vs["z"], 1, "rel", site=rt.site("st", 14, "t1"))
    rt.write(vs["b"], site=rt.site("write", 15, "t1"))
    on(rt, t3)
    assert rt.load(vs["z"], "acq", site=rt.site("ld", 31, "t3")) == 1
    rt.read(vs["a"], site=rt.site("read", 32, "t3"))
    rt.read(vs["b"], site=rt.site("read", 33, "t3"))
    assert lines(rt) == [("b", 33, 15)]


def test_an_export_after_an_acquire_is_not_thin_on_the_old_base(rt):
    """t1 exports thin (x, y, z); t2: d = 1; w.store(rel); t1: w.load(acq) (C moves: t2's entry),
    u.store(rel) [or an acq_rel fetch_add of u, whose S_u ⊑ C]; t3: u.load(acq), read d:
    ordered through t1. A thin export of u on t1's old base would lose t2's entry: a false
    alarm. With t1's load relaxed, d races."""
    for acquire in (True, False):
        for rmw in (False, True):
            vs, t1, t2, t3 = start(rt, ("d", "u", "w", "x", "y", "z"))
            on(rt, t1)
            for i, name in enumerate(("x", "y", "z")):
                rt.store(vs[name], 1, "rel", site=rt.site("st", 11 + i, "t1"))
            on(rt, t2)
            rt.write(vs["d"], site=rt.site("write", 21, "t2"))
            rt.store(vs["w"], 1, "rel", site=rt.site("st", 22, "t2"))
            on(rt, t1)
            assert rt.load(vs["w"], "acq" if acquire else "rlx", site=rt.site("ld", 15, "t1")) == 1
            if rmw:
                rt.rmw(vs["u"], "add", 1, "ar", site=rt.site("rmw", 16, "t1"))
            else:
                rt.store(vs["u"], 1, "rel", site=rt.site("st", 16, "t1"))
            on(rt, t3)
            assert rt.load(vs["u"], "acq", site=rt.site("ld", 31, "t3")) == 1
            rt.read(vs["d"], site=rt.site("read", 32, "t3"))
            assert lines(rt) == ([] if acquire else [("d", 32, 21)]), (acquire, rmw)


def test_thin_exports_of_two_threads_join(rt):
    """t1 and t2 each release three locations (thin from the third on), writing a and b before
    their last release; t3 acquires both last ones and reads a and b (ordered), then t1's
    first location's data c, written after t1's first release but before its last: ordered
    too, through the last one. A thin S_x decoded to the wrong entries fails one of them."""
    vs, t1, t2, t3 = start(rt, ("a", "b", "c", "p1", "q1", "r1", "p2", "q2", "r2"))
    on(rt, t1)
    rt.store(vs["p1"], 1, "rel", site=rt.site("st", 11, "t1"))
    rt.write(vs["c"], site=rt.site("write", 12, "t1"))
    rt.store(vs["q1"], 1, "rel", site=rt.site("st", 13, "t1"))
    rt.write(vs["a"], site=rt.site("write", 14, "t1"))
    rt.store(vs["r1"], 1, "rel", site=rt.site("st", 15, "t1"))
    on(rt, t2)
    rt.store(vs["p2"], 1, "rel", site=rt.site("st", 21, "t2"))
    rt.store(vs["q2"], 1, "rel", site=rt.site("st", 22, "t2"))
    rt.write(vs["b"], site=rt.site("write", 23, "t2"))
    rt.store(vs["r2"], 1, "rel", site=rt.site("st", 24, "t2"))
    on(rt, t3)
    assert rt.load(vs["r1"], "acq", site=rt.site("ld", 31, "t3")) == 1
    assert rt.load(vs["r2"], "acq", site=rt.site("ld", 32, "t3")) == 1
    for i, name in enumerate(("a", "b", "c")):
        rt.read(vs[name], site=rt.site("read", 33 + i, "t3"))
    assert lines(rt) == []
