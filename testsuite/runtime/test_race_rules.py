"""Race detection in the runtime: the vector-clock rules of docs/algorithm.md §5, one test per
row (atomics, fences, release sequences, SC fences, create/join, sync primitives), the
shadow (granules, unaligned accesses, ranges, read sharing, reuse), mixed atomic/plain
races and the options. Each scenario runs in an explicit interleaving on one OS thread,
switching the runtime's current thread, with a variant that differs only in the
synchronisation so that every test can fail both ways."""
import pytest


class Threads:
    """main (T0) and children created from it; `on(t)` makes t the current thread."""

    def __init__(self, rt):
        self.rt, self.lib = rt, rt.lib
        self.main = rt.rsan.test_new_thread(rt.ffi.NULL)
        self.on(self.main)

    def spawn(self):
        return self.lib.rsan_thread_create(self.main)

    def on(self, t):
        self.rt.rsan.test_set_current(t)


def setup(rt, options="", nvars=("data", "flag")):
    rt.reset(options)
    vs = [rt.var(n) for n in nvars]
    return Threads(rt), vs


def mp(rt, flag_store, flag_load, fence_rel=False, fence_acq=False, options=""):
    """T1: data = 1 (plain); [fence rel]; flag.store(1, flag_store)
       T2: flag.load(flag_load); [fence acq]; read data (plain)"""
    th, (data, flag) = setup(rt, options)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    if fence_rel:
        rt.fence("rel", site=rt.site("fence", 12, "t1"))
    rt.store(flag, 1, flag_store, site=rt.site("st", 13, "t1"))
    th.on(t2)
    assert rt.load(flag, flag_load, site=rt.site("ld", 21, "t2")) == 1
    if fence_acq:
        rt.fence("acq", site=rt.site("fence", 22, "t2"))
    rt.read(data, site=rt.site("read", 23, "t2"))
    return rt.races()


def test_mp_with_release_acquire_flag_is_not_a_race(rt):
    assert mp(rt, "rel", "acq") == []


@pytest.mark.parametrize("store,load", [("rlx", "rlx"), ("rel", "rlx"), ("rlx", "acq")])
def test_mp_with_a_relaxed_side_is_a_race_between_the_write_and_the_read(rt, store, load):
    races = mp(rt, store, load)
    assert len(races) == 1
    r = races[0]
    assert (r["access"]["type"], r["access"]["thread"], r["access"]["line"]) == ("read", 2, 23)
    assert (r["previous"]["type"], r["previous"]["thread"], r["previous"]["line"]) == ("write", 1, 11)
    assert r["location"]["name"] == "data" and r["location"]["object"] == "global"


def test_mp_with_relaxed_flag_and_release_and_acquire_fences_is_not_a_race(rt):
    assert mp(rt, "rlx", "rlx", fence_rel=True, fence_acq=True) == []


@pytest.mark.parametrize("fence_rel,fence_acq", [(True, False), (False, True)])
def test_mp_with_only_one_of_the_two_fences_is_a_race(rt, fence_rel, fence_acq):
    assert len(mp(rt, "rlx", "rlx", fence_rel=fence_rel, fence_acq=fence_acq)) == 1


def test_acquire_fence_only_acquires_what_was_read_before_it(rt):
    # T2: fence acq; flag.load(rlx); read data -- the load comes after the fence: race
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.store(flag, 1, "rel", site=rt.site("st", 12, "t1"))
    th.on(t2)
    rt.fence("acq", site=rt.site("fence", 21, "t2"))
    rt.load(flag, "rlx", site=rt.site("ld", 22, "t2"))
    rt.read(data, site=rt.site("read", 23, "t2"))
    assert len(rt.races()) == 1


def test_release_fence_releases_only_what_came_before_it(rt):
    # T1: fence rel; data = 1; flag.store(rlx) -- the write after the fence is not released
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.fence("rel", site=rt.site("fence", 11, "t1"))
    rt.write(data, site=rt.site("write", 12, "t1"))
    rt.store(flag, 1, "rlx", site=rt.site("st", 13, "t1"))
    th.on(t2)
    rt.load(flag, "acq", site=rt.site("ld", 21, "t2"))
    rt.read(data, site=rt.site("read", 22, "t2"))
    assert len(rt.races()) == 1


def release_sequence(rt, third):
    """T1: data = 1; flag.store(1, rel)   T3: `third` on flag   T2: flag.load(acq); read data"""
    th, (data, flag) = setup(rt)
    t1, t2, t3 = th.spawn(), th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.store(flag, 1, "rel", site=rt.site("st", 12, "t1"))
    th.on(t3)
    third(flag, rt.site("rmw", 31, "t3"))
    th.on(t2)
    rt.load(flag, "acq", site=rt.site("ld", 21, "t2"))
    rt.read(data, site=rt.site("read", 22, "t2"))
    return rt.races()


def test_release_sequence_through_a_relaxed_fetch_add_of_a_third_thread_is_not_a_race(rt):
    assert release_sequence(rt, lambda flag, s: rt.rmw(flag, "add", 1, "rlx", site=s)) == []


def test_release_sequence_through_a_relaxed_cas_of_a_third_thread_is_not_a_race(rt):
    assert release_sequence(rt, lambda flag, s: rt.cas(flag, 1, 2, "rlx", "rlx", site=s)) == []


def test_release_sequence_broken_by_another_threads_relaxed_store_is_a_race(rt):
    assert len(release_sequence(rt, lambda flag, s: rt.store(flag, 2, "rlx", site=s))) == 1


def test_relaxed_rmw_after_a_release_fence_continues_what_the_fence_released(rt):
    # T3: read data2; fence rel; flag.fetch_add(rlx)  T2: flag.load(acq); write data2
    th, (data, flag) = setup(rt)
    t3, t2 = th.spawn(), th.spawn()
    th.on(t3)
    rt.read(data, site=rt.site("read", 31, "t3"))
    rt.fence("rel", site=rt.site("fence", 32, "t3"))
    rt.rmw(flag, "add", 1, "rlx", site=rt.site("rmw", 33, "t3"))
    th.on(t2)
    rt.load(flag, "acq", site=rt.site("ld", 21, "t2"))
    rt.write(data, site=rt.site("write", 22, "t2"))
    assert rt.races() == []


@pytest.mark.parametrize("order", ["rlx", "acq"])
def test_failed_cas_acquires_by_its_failure_order(rt, order):
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.store(flag, 1, "rel", site=rt.site("st", 12, "t1"))
    th.on(t2)
    assert rt.cas(flag, 5, 6, "acq", order, site=rt.site("cas", 21, "t2")) == (1, 0)
    rt.read(data, site=rt.site("read", 22, "t2"))
    assert len(rt.races()) == (0 if order == "acq" else 1)


def sc_fences(rt, fence_t1, fence_t2):
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    if fence_t1:
        rt.fence("sc", site=rt.site("fence", 12, "t1"))
    th.on(t2)
    if fence_t2:
        rt.fence("sc", site=rt.site("fence", 21, "t2"))
    rt.read(data, site=rt.site("read", 22, "t2"))
    return rt.races()


def test_sc_fences_without_reads_from_do_not_order_plain_accesses(rt):
    # algorithm.md §5 row "fence sc": an SC fence is an acq_rel fence for races (C11 29.3,
    # RC11: psc is not part of hb), so two SC fences with no atomic between them order nothing
    assert len(sc_fences(rt, True, True)) == 1
    assert len(sc_fences(rt, True, False)) == 1
    assert len(sc_fences(rt, False, True)) == 1


@pytest.mark.parametrize("opts", ["sc_accesses=fenced", "sc_accesses=ra"])
@pytest.mark.parametrize("store,load", [("rlx", "rlx"), ("sc", "sc"), ("rel", "rlx"), ("rlx", "acq")])
def test_sc_fences_synchronise_through_reads_from(rt, opts, store, load):
    """T1: data = 1; fence sc; flag.store(1, store)  T2: flag.load(load) == 1; fence sc; read data
    (fence-fence, fence-acquire and release-fence synchronisation: no race); without the reading
    thread's fence and with a relaxed load, the same program races."""
    for t2_fence in (True, False):
        th, (data, flag) = setup(rt, opts)
        t1, t2 = th.spawn(), th.spawn()
        th.on(t1)
        rt.write(data, site=rt.site("write", 11, "t1"))
        rt.fence("sc", site=rt.site("fence", 12, "t1"))
        rt.store(flag, 1, store, site=rt.site("st", 13, "t1"))
        th.on(t2)
        assert rt.load(flag, load, site=rt.site("ld", 21, "t2")) == 1
        if t2_fence:
            rt.fence("sc", site=rt.site("fence", 22, "t2"))
        rt.read(data, site=rt.site("read", 23, "t2"))
        synchronised = t2_fence or load in ("acq", "sc")
        assert len(rt.races()) == (0 if synchronised else 1), (t2_fence, opts)


@pytest.mark.parametrize("opts", ["", "sc_accesses=fenced", "sc_accesses=ra"])
def test_seq_cst_accesses_to_different_locations_do_not_synchronise(rt, opts):
    """Issue 13: t1: data = 1; a.store(1, sc)  main: b.load(sc); read data -- a C11 data race in
    every sc_accesses mode (the fences of sc_accesses=fenced are the robustness model's, not
    happens-before)."""
    th, (data, a, b) = setup(rt, opts, nvars=("data", "a", "b"))
    t1 = th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.store(a, 1, "sc", site=rt.site("st", 12, "t1"))
    th.on(th.main)
    rt.load(b, "sc", site=rt.site("ld", 21, "main"))
    rt.read(data, site=rt.site("read", 22, "main"))
    races = rt.races()
    assert len(races) == 1 and races[0]["previous"]["line"] == 11 and races[0]["access"]["line"] == 22


@pytest.mark.parametrize("opts", ["sc_accesses=fenced", "sc_accesses=ra"])
def test_seq_cst_access_is_no_acquire_fence_for_an_earlier_relaxed_load(rt, opts):
    """T2: flag.load(rlx) == 1; b.load(sc); read data -- the leading SC fence of a fenced
    seq_cst load must not turn the earlier relaxed load into an acquire: a race. With an
    acquire fence in place of the seq_cst load, no race."""
    for with_fence in (False, True):
        th, (data, flag, b) = setup(rt, opts, nvars=("data", "flag", "b"))
        t1, t2 = th.spawn(), th.spawn()
        th.on(t1)
        rt.write(data, site=rt.site("write", 11, "t1"))
        rt.store(flag, 1, "rel", site=rt.site("st", 12, "t1"))
        th.on(t2)
        assert rt.load(flag, "rlx", site=rt.site("ld", 21, "t2")) == 1
        if with_fence:
            rt.fence("acq", site=rt.site("fence", 22, "t2"))
        else:
            rt.load(b, "sc", site=rt.site("ld", 22, "t2"))
        rt.read(data, site=rt.site("read", 23, "t2"))
        assert len(rt.races()) == (0 if with_fence else 1), (opts, with_fence)


@pytest.mark.parametrize("opts", ["sc_accesses=fenced", "sc_accesses=ra"])
def test_seq_cst_store_is_no_release_fence_for_a_later_relaxed_store(rt, opts):
    """T1: data = 1; b.store(1, sc); flag.store(1, rlx)  T2: flag.load(acq); read data -- the
    trailing SC fence of a fenced seq_cst store must not make the relaxed store a release."""
    th, (data, flag, b) = setup(rt, opts, nvars=("data", "flag", "b"))
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.store(b, 1, "sc", site=rt.site("st", 12, "t1"))
    rt.store(flag, 1, "rlx", site=rt.site("st", 13, "t1"))
    th.on(t2)
    assert rt.load(flag, "acq", site=rt.site("ld", 21, "t2")) == 1
    rt.read(data, site=rt.site("read", 22, "t2"))
    assert len(rt.races()) == 1


def test_seq_cst_store_and_load_synchronise_in_both_sc_modes(rt):
    for opts in ("sc_accesses=fenced", "sc_accesses=ra"):
        th, (data, flag) = setup(rt, opts)
        t1, t2 = th.spawn(), th.spawn()
        th.on(t1)
        rt.write(data, site=rt.site("write", 11, "t1"))
        rt.store(flag, 1, "sc", site=rt.site("st", 12, "t1"))
        th.on(t2)
        rt.load(flag, "sc", site=rt.site("ld", 21, "t2"))
        rt.read(data, site=rt.site("read", 22, "t2"))
        assert rt.races() == [], opts


def test_thread_create_orders_the_parents_earlier_accesses_only(rt):
    th, (data, other) = setup(rt)
    rt.write(data, site=rt.site("write", 1, "main"))
    child = th.spawn()
    rt.write(other, site=rt.site("write", 2, "main"))  # after the creation
    th.on(child)
    rt.read(data, site=rt.site("read", 11, "child"))
    assert rt.races() == []
    rt.read(other, site=rt.site("read", 12, "child"))
    races = rt.races()
    assert len(races) == 1 and races[0]["previous"]["line"] == 2


def test_join_orders_the_childs_accesses_before_the_joiner(rt):
    for joined in (True, False):
        th, (data,) = setup(rt, nvars=("data",))
        child = th.spawn()
        th.on(child)
        rt.write(data, site=rt.site("write", 11, "child"))
        rt.lib.rsan_thread_finish(child, rt.ffi.NULL, rt.ffi.NULL)
        th.on(th.main)
        if joined:
            rt.lib.rsan_thread_join(th.main, child)
        rt.write(data, site=rt.site("write", 1, "main"))
        assert len(rt.races()) == (0 if joined else 1)


def counter(rt, locked):
    """T1 and T2: [lock m]; counter++ (plain read + write); [unlock m]"""
    th, (cnt, m) = setup(rt, nvars=("counter", "m"))
    ts = [th.spawn(), th.spawn()]
    for k, t in enumerate(ts, 1):
        th.on(t)
        if locked:
            rt.lib.rsan_sync_acquire(t, m)
        rt.read(cnt, site=rt.site("read", 10 * k + 1, f"t{k}"))
        rt.write(cnt, site=rt.site("write", 10 * k + 2, f"t{k}"))
        if locked:
            rt.lib.rsan_sync_release(t, m)
    return rt.races()


def test_mutex_protected_counter_is_not_a_race(rt):
    assert counter(rt, True) == []


def test_unprotected_counter_is_a_race(rt):
    races = counter(rt, False)
    assert len(races) == 2  # T2's read vs T1's write, T2's write vs T1's write (distinct site pairs)
    assert {(r["access"]["line"], r["previous"]["line"]) for r in races} == {(21, 12), (22, 12)}


def test_acquire_load_of_a_primitive_synchronises_with_its_release(rt):
    # pthread_once callers, cond-wait return, barrier exit: rsan_sync_acquire_load
    th, (data, o) = setup(rt, nvars=("data", "o"))
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    rt.lib.rsan_sync_release(t1, o)
    th.on(t2)
    rt.lib.rsan_sync_acquire_load(t2, o)
    rt.read(data, site=rt.site("read", 21, "t2"))
    assert rt.races() == []


def test_readers_in_parallel_are_not_a_race_but_an_unordered_writer_races_with_them(rt):
    th, (data,) = setup(rt, nvars=("data",))
    t1, t2, t3 = th.spawn(), th.spawn(), th.spawn()
    for k, t in ((1, t1), (2, t2)):
        th.on(t)
        rt.read(data, site=rt.site("read", 10 * k + 1, f"t{k}"))
    assert rt.races() == []
    th.on(t3)
    rt.write(data, site=rt.site("write", 31, "t3"))
    races = rt.races()
    assert len(races) == 1 and races[0]["previous"]["type"] == "read"


def test_writer_after_joining_every_reader_is_not_a_race(rt):
    th, (data,) = setup(rt, nvars=("data",))
    readers = [th.spawn() for _ in range(6)]  # more readers than shadow cells
    for k, t in enumerate(readers, 1):
        th.on(t)
        rt.read(data, site=rt.site("read", 10 * k, f"t{k}"))
        rt.lib.rsan_thread_finish(t, rt.ffi.NULL, rt.ffi.NULL)
    th.on(th.main)
    for t in readers:
        rt.lib.rsan_thread_join(th.main, t)
    rt.write(data, site=rt.site("write", 1, "main"))
    assert rt.races() == []


def test_different_bytes_of_one_granule_do_not_race_and_overlapping_unaligned_ones_do(rt):
    th, (buf,) = setup(rt, nvars=("buf",))
    base = rt.ffi.cast("char *", buf)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.write(base + 0, site=rt.site("write", 11, "t1"), size=1)
    rt.write(base + 6, site=rt.site("write", 12, "t1"), size=4)  # bytes 6..9: two granules
    th.on(t2)
    rt.write(base + 1, site=rt.site("write", 21, "t2"), size=1)
    rt.write(base + 10, site=rt.site("write", 22, "t2"), size=2)
    assert rt.races() == []
    rt.read(base + 9, site=rt.site("read", 23, "t2"), size=1)
    races = rt.races()
    assert len(races) == 1 and races[0]["previous"]["line"] == 12
    assert int(races[0]["location"]["address"], 16) == int(rt.ffi.cast("uintptr_t", base + 9))


def test_ranges_race_with_the_accesses_they_overlap(rt):
    th, (buf,) = setup(rt, nvars=("buf",))  # 16 bytes
    base = rt.ffi.cast("char *", buf)
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.lib.__rsan_write_range(buf, 12, rt.site("write", 11, "t1"))  # bytes 0..11
    th.on(t2)
    rt.read(base + 12, site=rt.site("read", 21, "t2"))
    rt.lib.__rsan_read_range(base + 4, 0, rt.site("read", 22, "t2"))  # empty range: nothing
    assert rt.races() == []
    rt.read(base + 8, site=rt.site("read", 23, "t2"))
    assert len(rt.races()) == 1


def test_retired_memory_starts_with_empty_shadow(rt):
    for retire in (True, False):
        th, (buf,) = setup(rt, nvars=("buf",))
        t1, t2 = th.spawn(), th.spawn()
        th.on(t1)
        rt.write(buf, site=rt.site("write", 11, "t1"), size=8)
        if retire:  # free() then the same address from malloc again
            rt.lib.rsan_memory_retire(buf, 16)
        th.on(t2)
        rt.write(buf, site=rt.site("write", 21, "t2"), size=8)
        assert len(rt.races()) == (0 if retire else 1)


@pytest.mark.parametrize("atomic_first", [True, False])
def test_mixed_atomic_and_plain_accesses_race(rt, atomic_first):
    th, (x,) = setup(rt, nvars=("x",))
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    if atomic_first:
        rt.store(x, 1, "rlx", site=rt.site("st", 11, "t1"))
    else:
        rt.write(x, site=rt.site("write", 11, "t1"))
    th.on(t2)
    if atomic_first:
        rt.read(x, site=rt.site("read", 21, "t2"))
    else:
        rt.load(x, "rlx", site=rt.site("ld", 21, "t2"))
    races = rt.races()
    assert len(races) == 1
    assert races[0]["previous"]["atomic"] is atomic_first
    assert races[0]["access"]["atomic"] is (not atomic_first)


def test_atomic_accesses_never_race_with_each_other(rt):
    th, (x,) = setup(rt, nvars=("x",))
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.store(x, 1, "rlx", site=rt.site("st", 11, "t1"))
    th.on(t2)
    rt.store(x, 2, "rlx", site=rt.site("st", 21, "t2"))
    rt.rmw(x, "add", 1, "rlx", site=rt.site("rmw", 22, "t2"))
    assert rt.races() == []


def test_an_atomic_store_released_by_itself_does_not_race_with_the_acquirers_plain_read(rt):
    # T1: x.store(1, rel)  T2: x.load(acq); read x (plain) -- ordered by the store's own release
    th, (x,) = setup(rt, nvars=("x",))
    t1, t2 = th.spawn(), th.spawn()
    th.on(t1)
    rt.store(x, 1, "rel", site=rt.site("st", 11, "t1"))
    th.on(t2)
    rt.load(x, "acq", site=rt.site("ld", 21, "t2"))
    rt.read(x, site=rt.site("read", 22, "t2"))
    assert rt.races() == []


def test_report_races_0_turns_race_reports_off_and_robustness_reports_stay(rt):
    for opts, want_race in (("", 1), ("report_races=0", 0)):
        mp(rt, "rlx", "rlx", options=opts)
        assert len(rt.races()) == want_race, opts


def test_report_robustness_0_keeps_race_reports(rt):
    # SB with relaxed atomics (a robustness violation) and an unordered plain write pair
    for opts, want in (("", (1, 1)), ("report_robustness=0", (0, 1)), ("report_races=0", (1, 0))):
        th, (x, y, d) = setup(rt, opts, nvars=("x", "y", "d"))
        t1, t2 = th.spawn(), th.spawn()
        th.on(t1)  # the SB schedule x=1; r1=y (0); y=1; r2=x: r2 must see x=1 under SC
        rt.store(x, 1, "rlx", site=rt.site("st", 11, "t1"))
        rt.load(y, "rlx", site=rt.site("ld", 12, "t1"))
        rt.write(d, site=rt.site("write", 13, "t1"))
        th.on(t2)
        rt.store(y, 1, "rlx", site=rt.site("st", 21, "t2"))
        rt.load(x, "rlx", site=rt.site("ld", 22, "t2"))
        rt.write(d, site=rt.site("write", 23, "t2"))
        kinds = [r["kind"] for r in rt.reports()]
        assert (kinds.count("robustness") > 0, kinds.count("race")) == (bool(want[0]), want[1]), opts


def test_races_are_deduplicated_by_site_pair_in_either_order(rt):
    th, (x,) = setup(rt, nvars=("x",))
    t1, t2 = th.spawn(), th.spawn()
    w1, w2 = rt.site("write", 11, "t1"), rt.site("write", 21, "t2")
    for _ in range(3):
        th.on(t1)
        rt.write(x, site=w1)
        th.on(t2)
        rt.write(x, site=w2)
    assert len(rt.races()) == 1


def test_the_writers_own_relaxed_store_also_ends_its_release_sequence(rt):
    # C++20: T1: data = 1; flag.store(1, rel); flag.store(2, rlx)  T2: flag.load(acq) == 2
    # reads a store outside the release sequence: no synchronisation, a race
    for second_store in ("rlx", "rel"):
        th, (data, flag) = setup(rt)
        t1, t2 = th.spawn(), th.spawn()
        th.on(t1)
        rt.write(data, site=rt.site("write", 11, "t1"))
        rt.store(flag, 1, "rel", site=rt.site("st", 12, "t1"))
        rt.store(flag, 2, second_store, site=rt.site("st", 13, "t1"))
        th.on(t2)
        assert rt.load(flag, "acq", site=rt.site("ld", 21, "t2")) == 2
        rt.read(data, site=rt.site("read", 22, "t2"))
        assert len(rt.races()) == (1 if second_store == "rlx" else 0), second_store


@pytest.mark.parametrize("nreaders", [5, 8])
def test_no_read_is_lost_when_more_threads_read_a_granule_than_it_has_cells(rt, nreaders):
    """Issue 13: readers R0..Rn-1 read x unordered; a writer acquires from every reader but Rk,
    then writes x: a race with Rk's read, whichever k (more readers than the 4 cells of a
    granule: the others go to the granule's overflow cells, none is evicted)."""
    for k in range(nreaders):
        names = ("x",) + tuple(f"f{i}" for i in range(nreaders))
        th, (x, *flags) = setup(rt, nvars=names)
        readers = [th.spawn() for _ in range(nreaders)]
        writer = th.spawn()
        for i, r in enumerate(readers):
            th.on(r)
            rt.read(x, site=rt.site("read", 100 + i, f"r{i}"))
            rt.store(flags[i], 1, "rel", site=rt.site("st", 200 + i, f"r{i}"))
        th.on(writer)
        for i in range(nreaders):
            if i != k:
                assert rt.load(flags[i], "acq", site=rt.site("ld", 300 + i, "w")) == 1
        rt.write(x, site=rt.site("write", 400, "w"))
        races = rt.races()
        assert [r["previous"]["line"] for r in races] == [100 + k], (nreaders, k)
        # and once every reader is acquired, no race
        th2, (y, *flags2) = setup(rt, nvars=("y",) + names[1:])
        readers = [th2.spawn() for _ in range(nreaders)]
        w2 = th2.spawn()
        for i, r in enumerate(readers):
            th2.on(r)
            rt.read(y, site=rt.site("read", 100 + i, f"r{i}"))
            rt.store(flags2[i], 1, "rel", site=rt.site("st", 200 + i, f"r{i}"))
        th2.on(w2)
        for i in range(nreaders):
            rt.load(flags2[i], "acq", site=rt.site("ld", 300 + i, "w"))
        rt.write(y, site=rt.site("write", 400, "w"))
        assert rt.races() == []


@pytest.mark.parametrize("ignorant", ["main", "t6", None])
def test_a_full_granule_drops_a_cell_only_below_every_live_threads_clock(rt, ignorant):
    """T1 writes x and releases f; T2..T5 acquire f and read x: T5's read finds the four cells
    full (T1's write, three reads; none covers another). T1's write may be dropped only when
    every live thread is ordered after it (race_floor.c): main and T6 acquire f too, except
    the `ignorant` one, which then reads x, a race with T1's write alone (reads do not race
    with reads), found only if the write's cell stayed. With none ignorant, the write is below
    the floor, and T6's later read is no race."""
    th, (x, f) = setup(rt, nvars=("x", "f"))
    ts = [th.spawn() for _ in range(6)]
    th.on(ts[0])
    rt.write(x, site=rt.site("write", 11, "t1"))
    rt.store(f, 1, "rel", site=rt.site("st", 12, "t1"))
    knowing = {"main": th.main, "t6": ts[5]}
    for name, t in knowing.items():
        if name != ignorant:
            th.on(t)
            assert rt.load(f, "acq", site=rt.site("ld", 90, name)) == 1
    for i in range(1, 5):
        th.on(ts[i])
        assert rt.load(f, "acq", site=rt.site("ld", 10 * i + 11, f"t{i + 1}")) == 1
        rt.read(x, site=rt.site("read", 10 * i + 12, f"t{i + 1}"))
    assert rt.races() == []
    th.on(knowing[ignorant or "t6"])
    rt.read(x, site=rt.site("read", 99, ignorant or "t6"))
    races = rt.races()
    if ignorant is None:
        assert races == []
    else:
        assert [(r["access"]["line"], r["previous"]["line"]) for r in races] == [(99, 11)]


def test_a_write_in_the_overflow_cells_is_found_by_a_later_reader(rt):
    """Five unordered readers overflow x's granule; then an unordered write lands in the overflow
    cells; every reader that reads x again at a new epoch (after a release; at the same epoch its
    first read stands for it) must report the write."""
    names = ("x",) + tuple(f"f{i}" for i in range(5))
    th, (x, *flags) = setup(rt, nvars=names)
    readers = [th.spawn() for _ in range(5)]
    writer = th.spawn()
    for i, r in enumerate(readers):
        th.on(r)
        rt.read(x, site=rt.site("read", 100 + i, f"r{i}"))
    th.on(writer)
    rt.write(x, site=rt.site("write", 400, "w"))
    first = len(rt.races())
    assert first >= 1  # the write races with the reads
    for i, r in enumerate(readers):
        th.on(r)
        rt.store(flags[i], 1, "rel", site=rt.site("st", 200 + i, f"r{i}"))  # a new epoch
        rt.read(x, site=rt.site("read", 500 + i, f"r{i}"))
    later = [r for r in rt.races() if r["access"]["line"] >= 500]
    assert sorted(r["access"]["line"] for r in later) == [500 + i for i in range(5)]
    assert all(r["previous"]["line"] == 400 for r in later)


@pytest.mark.parametrize("unsynced", [None, 0, 2])
def test_free_of_a_granule_with_overflow_cells_checks_the_cells_not_the_mark(rt, unsynced):
    """Five unordered readers overflow x's granule (a cell moves to an overflow block and a
    mark takes its place); main then acquires from every reader (but one) and frees x: no race
    when it learnt them all (the mark is no access), a race with the reader it did not learn."""
    names = ("x",) + tuple(f"f{i}" for i in range(5))
    th, (x, *flags) = setup(rt, nvars=names)
    readers = [th.spawn() for _ in range(5)]
    for i, r in enumerate(readers):
        th.on(r)
        rt.read(x, site=rt.site("read", 100 + i, f"r{i}"), size=8)
        rt.store(flags[i], 1, "rel", site=rt.site("st", 200 + i, f"r{i}"))
    th.on(th.main)
    for i in range(5):
        if i != unsynced:
            assert rt.load(flags[i], "acq", site=rt.site("ld", 300 + i, "main")) == 1
    rt.lib.rsan_race_free(x, 8)
    races = rt.races()
    if unsynced is None:
        assert races == []
    else:
        assert [r["previous"]["line"] for r in races] == [100 + unsynced]
        assert races[0]["access"].get("free") is True


@pytest.mark.parametrize("synced", [False, True])
def test_a_reused_thread_slot_keeps_races_with_its_previous_owner_exact(rt, synced):
    """T1 writes data and is joined by main; T3, created by main after the join, takes T1's
    slot (docs/design/clocks.md). T2, created before the join, reads data: a race with T1's
    write unless T2 learnt it (synced through main's release after the join), and the report
    names T1, not T3. T3's own write after T2's synchronisation is a race either way."""
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    slots = rt.lib.__rsan_test_slot_count()
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    th.on(th.main)
    rt.lib.rsan_thread_join(th.main, t1)
    rt.store(flag, 1, "rel", site=rt.site("st", 1, "main"))
    t3 = th.spawn()
    assert rt.lib.__rsan_test_slot_count() == slots  # T1's slot, reused
    th.on(t2)
    if synced:
        assert rt.load(flag, "acq", site=rt.site("ld", 21, "t2")) == 1
    rt.read(data, site=rt.site("read", 22, "t2"))
    th.on(t3)
    rt.write(data, site=rt.site("write", 31, "t3"))
    races = rt.races()
    first = [(r["access"]["thread"], r["previous"]["thread"]) for r in races]
    if synced:
        assert first == [(3, 2)]
    else:
        assert first == [(2, 1), (3, 2)]
