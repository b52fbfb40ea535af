"""The race detector's inline cases of the atomic clock rules and of the atomic access's cells
(docs/design/races.md §16): an acq_rel RMW with few slots in one pass (race_clock.c
acq_rel_small), the rules of a relaxed store, a load and a CAS decided without a call when
S_x and R are ⊥ (rsan_engine.h rsan_race_store_i, rsan_race_load_i, rsan_race_rmw_i), and the
granule's cells found once per atomic access (rsan_race.h rsan_race_prefetch handing them to
rsan_race_atomic_at). Each scenario runs in an explicit interleaving on one OS thread, with a
variant that differs only in the synchronisation, so that each test can fail both ways; the
mutant each one catches is named in its docstring."""
import pytest


class Threads:
    def __init__(self, rt):
        self.rt, self.lib = rt, rt.lib
        self.main = rt.rsan.test_new_thread(rt.ffi.NULL)
        self.on(self.main)

    def spawn(self):
        return self.lib.rsan_thread_create(self.main)

    def on(self, t):
        self.rt.rsan.test_set_current(t)


def setup(rt, nvars=("data", "flag")):
    rt.reset("")
    vs = [rt.var(n) for n in nvars]
    return Threads(rt), vs


@pytest.mark.parametrize("last", ["ar", "rlx"])
def test_acq_rel_rmws_hand_data_back_and_forth(rt, last):
    """Four rounds of T1: flag.fetch_add(acq_rel); data = r; flag.fetch_add(acq_rel), then T2:
    flag.fetch_add(acq_rel); read data; flag.fetch_add(acq_rel): every access of data is ordered
    (from the second round on, every clock has an entry per slot, so each RMW takes
    acq_rel_small). With T2's acquiring RMW of the last round relaxed: one race. Mutants:
    acq_rel_small without its C ⊔= S_x (the store to c[i] dropped), or leaving S_x's entries
    as they were (no s[i] := C[i]): false alarms."""
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    for r in range(4):
        th.on(t1)
        rt.rmw(flag, "add", 1, "ar", site=rt.site("rmw", 10 * r + 1, "t1"))
        rt.write(data, site=rt.site("write", 10 * r + 2, "t1"))
        rt.rmw(flag, "add", 1, "ar", site=rt.site("rmw", 10 * r + 3, "t1"))
        th.on(t2)
        rt.rmw(flag, "add", 1, last if r == 3 else "ar", site=rt.site("rmw", 10 * r + 5, "t2"))
        rt.read(data, site=rt.site("read", 10 * r + 6, "t2"))
        rt.rmw(flag, "add", 1, "ar", site=rt.site("rmw", 10 * r + 7, "t2"))
    races = rt.races()
    if last == "ar":
        assert races == []
    else:
        assert len(races) == 1 and (races[0]["previous"]["line"], races[0]["access"]["line"]) == (32, 36)


@pytest.mark.parametrize("sync", [True, False])
def test_an_acq_rel_rmw_copies_the_slots_its_location_clock_had_none_for(rt, sync):
    """main: flag.store(rel) before any child exists (S_x has main's entry only), then T1, T2
    are made. T1: data = 1; flag.fetch_add(acq_rel) (S_x gets T1's entry, beyond its size);
    T2: flag.load(acq or rlx); read data. Mutant: acq_rel_small without its second loop (C's
    entries past S_x's size not copied): T2 misses T1's entry, a false alarm."""
    th, (data, flag) = setup(rt)
    rt.store(flag, 5, "rel", site=rt.site("st", 1, "main"))
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.rmw(flag, "add", 1, "ar", site=rt.site("rmw", 12, "t1"))
    th.on(t2)
    rt.load(flag, "acq" if sync else "rlx", site=rt.site("ld", 21, "t2"))
    rt.read(data, site=rt.site("read", 22, "t2"))
    assert len(rt.races()) == (0 if sync else 1)


@pytest.mark.parametrize("third", ["rlx", "rel"])
def test_a_relaxed_store_clears_a_released_clock(rt, third):
    """T1: data = 1; flag.store(rel)   T3: flag.store(third)   T2: flag.load(acq); read data.
    A relaxed store of another thread breaks the release sequence (S_x := R = ⊥): a race; a
    release store of T3 releases T3's clock only, which does not hold T1's write: a race too,
    reported once either way. And without T3 the read is ordered. Mutant: rsan_race_store_i
    taking the relaxed store's shortcut while S_x is not ⊥ (S_x left as T1's): a miss."""
    th, (data, flag) = setup(rt)
    t1, t2, t3 = th.spawn(), th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.store(flag, 1, "rel", site=rt.site("st", 12, "t1"))
    th.on(t3)
    rt.store(flag, 2, third, site=rt.site("st", 31, "t3"))
    th.on(t2)
    rt.load(flag, "acq", site=rt.site("ld", 21, "t2"))
    rt.read(data, site=rt.site("read", 22, "t2"))
    assert len(rt.races()) == 1


@pytest.mark.parametrize("fence", [True, False])
def test_a_relaxed_store_after_a_release_fence_releases_the_fence(rt, fence):
    """T1: data = 1; [fence rel]; flag.store(rlx)   T2: flag.load(acq); read data. With the
    fence, S_x := R holds T1's write: no race. Mutant: rsan_race_store_i taking the shortcut
    while R is not ⊥ (S_x left ⊥): a false alarm."""
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    if fence:
        rt.fence("rel", site=rt.site("fence", 12, "t1"))
    rt.store(flag, 1, "rlx", site=rt.site("st", 13, "t1"))
    th.on(t2)
    rt.load(flag, "acq", site=rt.site("ld", 21, "t2"))
    rt.read(data, site=rt.site("read", 22, "t2"))
    assert len(rt.races()) == (0 if fence else 1)


@pytest.mark.parametrize("order", ["acq", "rlx"])
def test_a_failed_cas_acquires_like_a_load(rt, order):
    """T1: data = 1; flag.store(1, rel)   T2: CAS(flag, 7 -> 8) fails with failure order
    `order`; read data. Mutant: the failed CAS's rsan_race_load_i skipping the rules while
    S_x is not ⊥: a false alarm with acq."""
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.store(flag, 1, "rel", site=rt.site("st", 12, "t1"))
    th.on(t2)
    rt.cas(flag, 7, 8, "ar" if order == "acq" else "rlx", order, site=rt.site("cas", 21, "t2"))
    rt.read(data, site=rt.site("read", 22, "t2"))
    assert len(rt.races()) == (0 if order == "acq" else 1)


@pytest.mark.parametrize("kind", ["store", "load", "rmw", "cas"])
def test_the_first_atomic_access_of_an_unmapped_region_is_recorded(rt, kind):
    """The test reset unmaps the shadow, so T1's atomic access is the first access of its
    region: rsan_race_prefetch finds no cells and the general path maps and records it.
    T2's plain write after it, unordered, races with it. Mutant: race_atomic_at skipping the
    access when the prefetch found no cells: a miss."""
    th, (x,) = setup(rt, ("x",))
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    s = rt.site({"store": "st", "load": "ld"}.get(kind, kind), 11, "t1")
    if kind == "store":
        rt.store(x, 1, "rlx", site=s)
    elif kind == "load":
        rt.load(x, "rlx", site=s)
    elif kind == "rmw":
        rt.rmw(x, "add", 1, "rlx", site=s)
    else:
        rt.cas(x, 0, 1, "rlx", "rlx", site=s)
    th.on(t2)
    rt.write(x, site=rt.site("write", 21, "t2"))
    races = rt.races()
    assert len(races) == 1
    assert races[0]["previous"]["line"] == 11 and races[0]["access"]["line"] == 21
