"""A location's coded sync clock S_x dropped below the floor (runtime/src/race_clock.c
load_rules, rsan_race.h rsan_race_sx_below_floor, race_floor.c rsan_race_floor_sx_miss,
docs/design/races.md §17): an S_x whose owner epoch (u, e) has e <= F[u] (F the floor, the least
entry of every live thread's C) is contained in every live and later thread's clock, so an atomic
access that meets it frees it. Each scenario expects races exactly where happens-before is
missing, so an S_x dropped while some live thread still lacks it (a false alarm) fails it, and
the memory test fails when the drop never happens. Threads are created after 20 idle ones
(joined at once, or left alive), so every clock has more than RSAN_VC_DENSE entries and S_x is
coded; the floor is walked at every miss (__rsan_test_sx_budget(0))."""
import os

import cffi
import pytest

from harness import build_engine_lib
from test_race_differential import check
from race_model import random_program, random_schedules, random_spawn_join_program, spawn_join_schedules

PAD = 20


@pytest.fixture
def hooks(rt):
    ffi = cffi.FFI()
    ffi.cdef("uint32_t __rsan_test_sx_budget(uint32_t n); uint64_t __rsan_test_coded_bytes(void);")
    lib = ffi.dlopen(str(build_engine_lib()))
    old = lib.__rsan_test_sx_budget(0)
    yield lib
    lib.__rsan_test_sx_budget(old)


def start(rt, names, short=False, keep_pads=False):
    """main, then (short) a thread created while main's clock has 2 entries, then PAD idle
    threads, joined at once unless keep_pads (their slots are then reused: the threads below
    get small slots but clocks of PAD + 2 entries)."""
    rt.reset()
    vs = {n: rt.var(n) for n in names}
    lib = rt.lib
    main = rt.rsan.test_new_thread(rt.ffi.NULL)
    rt.rsan.test_set_current(main)
    t_short = lib.rsan_thread_create(main) if short else None
    pads = [lib.rsan_thread_create(main) for _ in range(PAD)]
    if not keep_pads:
        for p in pads:
            lib.rsan_thread_join(main, p)
    return vs, main, t_short


def on(rt, t):
    rt.rsan.test_set_current(t)


def races(rt):
    return [(r["location"]["name"], r["access"]["line"], r["previous"]["line"]) for r in rt.races()]


@pytest.mark.parametrize("keep_pads", [False, True])
def test_a_sync_clock_a_live_thread_has_not_acquired_is_kept(rt, hooks, keep_pads):
    """t1: d = 1; x.store(rel). main joins nothing; t2 (alive all along, its C[t1] old):
    x.load(acq); read d (ordered); e read too (written by t1 after its release: a race). The
    floor of t1's slot is below the store's epoch (t2 and main lack it), so S_x must stay:
    fails (a false alarm on d) when S_x is dropped whatever the floor."""
    vs, main, _ = start(rt, ("d", "e", "x"), keep_pads=keep_pads)
    lib = rt.lib
    t1, t2 = lib.rsan_thread_create(main), lib.rsan_thread_create(main)
    on(rt, t1)
    rt.write(vs["d"], site=rt.site("write", 11, "t1"))
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 12, "t1"))
    rt.write(vs["e"], site=rt.site("write", 13, "t1"))
    on(rt, main)
    rt.load(vs["x"], "rlx", site=rt.site("ld", 5, "main"))  # a miss: the floor walked, S_x kept
    on(rt, t2)
    assert rt.load(vs["x"], "acq", site=rt.site("ld", 21, "t2")) == 1
    rt.read(vs["d"], site=rt.site("read", 22, "t2"))
    rt.read(vs["e"], site=rt.site("read", 23, "t2"))
    assert races(rt) == [("e", 23, 13)]


def test_a_thread_with_a_short_clock_holds_the_floor_of_later_slots(rt, hooks):
    """t_short is created while main's C has 2 entries and never acquires: its C has no entry
    for t1's slot, which reads as 0. t1: d = 1; x.store(rel); main joins t1 and loads x (a
    miss: the floor walked). The floor of t1's slot is 0 (t_short), so S_x stays, and t_short's
    acquire of x orders d: no race. Fails (a false alarm on d) when the walk takes a thread's
    missing entries for no bound (the minimum over the entries it has only)."""
    vs, main, t_short = start(rt, ("d", "x"), short=True)
    lib = rt.lib
    t1 = lib.rsan_thread_create(main)
    on(rt, t1)
    rt.write(vs["d"], site=rt.site("write", 11, "t1"))
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 12, "t1"))
    on(rt, main)
    lib.rsan_thread_join(main, t1)
    rt.load(vs["x"], "rlx", site=rt.site("ld", 5, "main"))
    on(rt, t_short)
    assert rt.load(vs["x"], "acq", site=rt.site("ld", 21, "t_short")) == 1
    rt.read(vs["d"], site=rt.site("read", 22, "t_short"))
    assert races(rt) == []


@pytest.mark.parametrize("order", ["acq", "rlx"])
def test_a_sync_clock_every_live_thread_holds_is_freed(rt, hooks, order):
    """t1 releases x, y and z (coded S_x on t1's base); main joins t1 (now the only live
    thread, its C holds t1's clock) and loads x, y and z: each S_x is below the floor and is
    freed, and with them the base they shared (its slot's reference goes with t1's clock ...
    kept: the slot's entry; so what remains is at most that one base). A thread created after
    that acquires x and reads d, written by t1 before its release: ordered (by the join and the
    create), no race. Fails when the drop never happens (memory) or drops what a later
    thread needs (a false alarm)."""
    vs, main, _ = start(rt, ("d", "x", "y", "z"))
    lib = rt.lib
    t1 = lib.rsan_thread_create(main)
    on(rt, t1)
    rt.write(vs["d"], site=rt.site("write", 11, "t1"))
    for k, name in enumerate(("x", "y", "z")):
        rt.store(vs[name], 1, "rel", site=rt.site("st", 12 + k, "t1"))
    on(rt, main)
    lib.rsan_thread_join(main, t1)
    held = hooks.__rsan_test_coded_bytes()
    for k, name in enumerate(("x", "y", "z")):
        rt.load(vs[name], order, site=rt.site("ld", 5 + k, "main"))
    freed = held - hooks.__rsan_test_coded_bytes()
    assert freed >= 3 * 32, (held, freed)  # the three S_x blocks at least
    t3 = lib.rsan_thread_create(main)
    on(rt, t3)
    assert rt.load(vs["x"], "acq", site=rt.site("ld", 31, "t3")) == 1
    rt.read(vs["d"], site=rt.site("read", 32, "t3"))
    rt.write(vs["d"], site=rt.site("write", 33, "t3"))
    assert races(rt) == []


@pytest.mark.parametrize("generate,draw,seed", [(random_spawn_join_program, spawn_join_schedules, 41),
                                                (random_program, random_schedules, 43)])
def test_random_programs_with_sync_clocks_dropped_below_the_floor(rt, hooks, generate, draw, seed):
    """The differential programs (spawn_join: main spawns 2-3 threads, joins some, accesses
    after; and the plain random ones) after 20 idle threads created and joined at once: clocks
    of 21 entries or more, so every S_x is coded with an owner epoch, and the floor rises at
    every join, so later atomic accesses drop S_x (the floor walked at every miss). Fails when
    a drop loses an ordering the model has (a false alarm), or on the debug build's check that
    a dropped S_x is contained in the dropping thread's C."""
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "150"))
    runs, racy = check(rt, count, seed=seed, generate=generate, draw=draw, pad=PAD, join_pads=True)
    assert racy > 0
