"""The race detector's inline rules of a relaxed RMW and a relaxed store whose location clock S_x
is not ⊥ (rsan_race_rules.h rsan_race_rmw_i, rsan_race_store_i; docs/design/races.md §21): with
R = ⊥ (no release fence since the thread's last release), a relaxed RMW is A ⊔= S_x (the few-slot
loop) and a relaxed store S_x := ⊥, both without a call. Each scenario runs in an explicit
interleaving on one OS thread, with a variant that differs only in the synchronisation, so that
each test can fail both ways; the mutants each one catches are named in its docstring."""
import pytest

from test_race_fast_rules import setup


@pytest.mark.parametrize("fence", [True, False])
def test_a_relaxed_rmw_of_a_released_location_feeds_the_acquire_fence(rt, fence):
    """Three rounds of T1: ack.load(acq); data = r; flag.store(rel), then T2: flag.fetch_add(rlx);
    fence(acq); read data; ack.store(rel). The relaxed RMW reads a released store: the acquire
    fence after it orders the read (A ⊔= S_x, then C ⊔= A). From the second round on T2's A has
    an entry per slot, so the RMW takes the inline case. Without the last round's fence: one race.
    Mutants: the inline case skipping A ⊔= S_x (a false alarm in the second round); joining S_x
    into C as well, an acquire (the race of the last round missed)."""
    th, (data, flag, ack) = setup(rt, ("data", "flag", "ack"))
    t1, t2 = th.spawn(), th.spawn()
    for r in range(3):
        th.on(t1)
        rt.load(ack, "acq", site=rt.site("ld", 10 * r + 1, "t1"))
        rt.write(data, site=rt.site("write", 10 * r + 2, "t1"))
        rt.store(flag, r, "rel", site=rt.site("st", 10 * r + 3, "t1"))
        th.on(t2)
        rt.rmw(flag, "add", 1, "rlx", site=rt.site("rmw", 10 * r + 5, "t2"))
        if fence or r < 2:
            rt.fence("acq", site=rt.site("fence", 10 * r + 6, "t2"))
        rt.read(data, site=rt.site("read", 10 * r + 7, "t2"))
        rt.store(ack, r, "rel", site=rt.site("st", 10 * r + 8, "t2"))
    races = rt.races()
    if fence:
        assert races == []
    else:
        assert len(races) == 1 and (races[0]["previous"]["line"], races[0]["access"]["line"]) == (22, 27)


@pytest.mark.parametrize("released", [True, False])
@pytest.mark.parametrize("fence", [True, False])
def test_a_relaxed_rmw_after_a_release_fence_releases_the_fence(rt, fence, released):
    """[main: flag.store(rel) first, so S_x is not ⊥]   T1: data = 1; [fence rel];
    flag.fetch_add(rlx)   T2: flag.load(acq); read data. With the fence, S_x ⊔= R holds T1's
    write: no race; without it, one. Mutant: the inline case taken while R is not ⊥ (S_x ⊔= R
    skipped): a false alarm with the fence."""
    th, (data, flag) = setup(rt)
    t1, t2 = th.spawn(), th.spawn()
    if released:
        rt.store(flag, 5, "rel", site=rt.site("st", 1, "main"))
    th.on(t1)
    rt.write(data, site=rt.site("write", 11, "t1"))
    if fence:
        rt.fence("rel", site=rt.site("fence", 12, "t1"))
    rt.rmw(flag, "add", 1, "rlx", site=rt.site("rmw", 13, "t1"))
    th.on(t2)
    rt.load(flag, "acq", site=rt.site("ld", 21, "t2"))
    rt.read(data, site=rt.site("read", 22, "t2"))
    assert len(rt.races()) == (0 if fence else 1)


@pytest.mark.parametrize("rounds", [1, 3])
def test_a_relaxed_store_of_the_releasing_thread_ends_its_release_sequence(rt, rounds):
    """`rounds` times T1: ack.load(acq); data = r; flag.store(rel); flag.store(rlx), then T2:
    flag.load(acq); read data; ack.store(rel). The relaxed store (R = ⊥) makes S_x ⊥ (C++20: a
    store that is not an RMW ends the release sequence), so T2's acquire of it orders nothing:
    a race in every round, reported once (one pair of sites per round: `rounds` reports).
    Mutant: the inline case leaving S_x as it was (the release store's clock): every race
    missed."""
    th, (data, flag, ack) = setup(rt, ("data", "flag", "ack"))
    t1, t2 = th.spawn(), th.spawn()
    for r in range(rounds):
        th.on(t1)
        rt.load(ack, "acq", site=rt.site("ld", 10 * r + 1, "t1"))
        rt.write(data, site=rt.site("write", 10 * r + 2, "t1"))
        rt.store(flag, 2 * r, "rel", site=rt.site("st", 10 * r + 3, "t1"))
        rt.store(flag, 2 * r + 1, "rlx", site=rt.site("st", 10 * r + 4, "t1"))
        th.on(t2)
        rt.load(flag, "acq", site=rt.site("ld", 10 * r + 5, "t2"))
        rt.read(data, site=rt.site("read", 10 * r + 6, "t2"))
        rt.store(ack, r, "rel", site=rt.site("st", 10 * r + 7, "t2"))
    assert len(rt.races()) >= rounds


@pytest.mark.parametrize("ordered", [True, False])
def test_an_atomic_access_passes_freed_cells_by(rt, ordered):
    """The atomic access's pass (rsan_race.h rsan_race_atomic_cells) tests a freed cell first
    and passes it by. T1, T3 and T2 read x (plain), T1 and T3 then release to T2, whose write
    takes its own read's cell and frees the other two: the cells are [freed, freed, T2's
    write]. T5: [acquire from T2]; x.store(rlx): with the acquire the store is ordered after
    the write and takes a freed cell, else it races with it (past the two freed cells); then T6
    (no synchronisation) reads x: a race with T5's atomic store. Mutant: a freed cell ending the
    pass as done (`return 1`: the store neither checked nor recorded): both races missed."""
    th, (x, f1, f3, f2) = setup(rt, ("x", "f1", "f3", "f2"))
    t1, t2, t3, t5, t6 = (th.spawn() for _ in range(5))
    for t, f, line in ((t1, f1, 10), (t3, f3, 30), (t2, None, 20)):
        th.on(t)
        rt.read(x, site=rt.site("read", line + 1, "r"))
        if f is not None:
            rt.store(f, 1, "rel", site=rt.site("st", line + 2, "r"))
    th.on(t2)
    rt.load(f1, "acq", site=rt.site("ld", 23, "t2"))
    rt.load(f3, "acq", site=rt.site("ld", 24, "t2"))
    rt.write(x, site=rt.site("write", 25, "t2"))
    rt.store(f2, 1, "rel", site=rt.site("st", 26, "t2"))
    th.on(t5)
    if ordered:
        rt.load(f2, "acq", site=rt.site("ld", 51, "t5"))
    rt.store(x, 7, "rlx", site=rt.site("st", 52, "t5"))
    th.on(t6)
    rt.read(x, site=rt.site("read", 61, "t6"))
    pairs = sorted((r["previous"]["line"], r["access"]["line"]) for r in rt.races())
    assert pairs == ([(52, 61)] if ordered else [(25, 52), (52, 61)])
