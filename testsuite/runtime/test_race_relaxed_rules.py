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
