"""A location's sync clock S_x coded on a shared base (runtime/src/vclock.c, docs/design/races.md
§8): with 16 slots or more (RSAN_VC_DENSE) S_x is 16-bit offsets over an immutable base clock
that the exporting thread's slot and other locations share. These scenarios need the cases the
random differential programs (test_race_differential.py, test_random_programs_coded_sync_clocks)
do not reach: a base that no longer fits (an entry more than 0xffff above it), so that the
slot takes a new one while an older S_x still holds the old one, and the exports of a thread's
R (a release fence, then relaxed stores). Each expects races only where happens-before is
missing, so a coded entry that is lost, truncated or read from the wrong base fails it."""
import pytest

PAD = 20  # idle threads first: the threads below hold slots >= PAD, their clocks > 16 entries
JUMP = 0x10000 + 16  # release stores: the writer's own entry moves past its base + 0xffff


def start(rt, names):
    rt.reset()
    vs = {n: rt.var(n) for n in names}
    lib = rt.lib
    main = rt.rsan.test_new_thread(rt.ffi.NULL)
    rt.rsan.test_set_current(main)
    for _ in range(PAD):
        lib.rsan_thread_create(main)
    t1, t2, t3 = (lib.rsan_thread_create(main) for _ in range(3))
    return vs, t1, t2, t3


def on(rt, t):
    rt.rsan.test_set_current(t)


@pytest.mark.parametrize("jump", [0, JUMP])
def test_a_sync_clock_keeps_its_base_when_the_writer_moves_to_a_new_one(rt, jump):
    """t1: d = 1; y.store(rel) [S_y coded on t1's base B]; `jump` release stores of z; e = 1;
    f = 1; x.store(rel) [with the jump S_x no longer fits B: a new base, B kept by S_y].
    t2: y.load(acq); read d (ordered), read e (not: written after the release t2 acquired);
    x.load(acq); read f (ordered). Exactly e races, with or without the new base."""
    vs, t1, t2, _ = start(rt, ("d", "e", "f", "x", "y", "z"))
    on(rt, t1)
    rt.write(vs["d"], site=rt.site("write", 11, "t1"))
    rt.store(vs["y"], 1, "rel", site=rt.site("st", 12, "t1"))
    st = rt.site("st", 13, "t1")
    for i in range(jump):
        rt.store(vs["z"], i, "rel", site=st)
    rt.write(vs["e"], site=rt.site("write", 14, "t1"))
    rt.write(vs["f"], site=rt.site("write", 15, "t1"))
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 16, "t1"))
    on(rt, t2)
    assert rt.load(vs["y"], "acq", site=rt.site("ld", 21, "t2")) == 1
    rt.read(vs["d"], site=rt.site("read", 22, "t2"))
    rt.read(vs["e"], site=rt.site("read", 23, "t2"))
    assert rt.load(vs["x"], "acq", site=rt.site("ld", 24, "t2")) == 1
    rt.read(vs["f"], site=rt.site("read", 25, "t2"))
    races = rt.races()
    assert [(r["location"]["name"], r["access"]["line"], r["previous"]["line"]) for r in races] == [("e", 23, 14)]


@pytest.mark.parametrize("jump", [0, JUMP])
def test_a_relaxed_store_after_a_release_fence_exports_the_fence_clock(rt, jump):
    """t1: g = 1; fence(rel); w.store(rlx) [S_w := R, coded on t1's R base]; `jump` release
    stores of z; h = 1; fence(rel); v.store(rlx) [R moved: past the R base with the jump];
    t2: w.load(acq); read g (ordered); read h (not); v.load(acq); read h again (now ordered:
    reported once, by the first read)."""
    vs, t1, t2, _ = start(rt, ("g", "h", "v", "w", "z"))
    on(rt, t1)
    rt.write(vs["g"], site=rt.site("write", 11, "t1"))
    rt.fence("rel", site=rt.site("fence", 12, "t1"))
    rt.store(vs["w"], 1, "rlx", site=rt.site("st", 13, "t1"))
    st = rt.site("st", 14, "t1")
    for i in range(jump):
        rt.store(vs["z"], i, "rel", site=st)
    rt.write(vs["h"], site=rt.site("write", 15, "t1"))
    rt.fence("rel", site=rt.site("fence", 16, "t1"))
    rt.store(vs["v"], 1, "rlx", site=rt.site("st", 17, "t1"))
    on(rt, t2)
    assert rt.load(vs["w"], "acq", site=rt.site("ld", 21, "t2")) == 1
    rt.read(vs["g"], site=rt.site("read", 22, "t2"))
    rt.read(vs["h"], site=rt.site("read", 23, "t2"))
    assert rt.load(vs["v"], "acq", site=rt.site("ld", 24, "t2")) == 1
    rt.read(vs["h"], site=rt.site("read", 25, "t2"))
    races = rt.races()
    assert [(r["location"]["name"], r["access"]["line"], r["previous"]["line"]) for r in races] == [("h", 23, 15)]


def test_a_release_rmw_joins_into_a_coded_sync_clock(rt):
    """S_x ⊔= C where S_x is not contained in C (a release RMW does not acquire): t1 writes d
    and releases x; t2 writes e and does a release fetch_add of x (S_x = t1's ⊔ t2's, coded or
    dense); t3 acquires x and reads d and e: both ordered. Without t1's release, d races."""
    for t1_releases in (True, False):
        vs, t1, t2, t3 = start(rt, ("d", "e", "x"))
        on(rt, t1)
        rt.write(vs["d"], site=rt.site("write", 11, "t1"))
        rt.store(vs["x"], 1, "rel" if t1_releases else "rlx", site=rt.site("st", 12, "t1"))
        on(rt, t2)
        rt.write(vs["e"], site=rt.site("write", 21, "t2"))
        rt.rmw(vs["x"], "add", 1, "rel", site=rt.site("rmw", 22, "t2"))
        on(rt, t3)
        assert rt.load(vs["x"], "acq", site=rt.site("ld", 31, "t3")) == 2
        rt.read(vs["d"], site=rt.site("read", 32, "t3"))
        rt.read(vs["e"], site=rt.site("read", 33, "t3"))
        names = [r["location"]["name"] for r in rt.races()]
        assert names == ([] if t1_releases else ["d"]), t1_releases
