"""Differential test of the race detector against race_model.py (happens-before computed from
the execution graph of each run, no clocks): random small programs with plain and atomic
accesses and fences, a few random interleavings each, in every sc_accesses mode. The set of
locations with a race report must equal the model's set of racy locations in every run.

The default run checks 300 programs, 100 with 5-8 threads on one location (more accessors
than a granule has cells) and 200 with plain accesses of various bytes and atomic accesses
of one location; `-m slow` runs test_many (2,000 programs, issue 13; every interleaving of
those with at most 30, 3 random ones of the others); PYRSAN_RACE_DIFF_COUNT overrides the
counts."""
import os
import random

import pytest

from race_model import (all_schedules, byte_range, ordered_schedules, random_crowded_atomic_program,
                        random_crowded_program, random_mixed_granule_program, random_program, random_schedules,
                        random_spawn_join_program, racy_locations, location, spawn_join_schedules)

MODES = ("", "sc_accesses=fenced", "sc_accesses=ra")


def run_detector(rt, threads, schedule, options, pad=0, join_pads=False):
    """The locations named by race reports in this interleaving. pad: idle threads created
    first, so that the program's threads hold slots >= pad (their clocks have more entries);
    join_pads: joined at once (their slots are reused, the clocks keep pad + 1 entries)."""
    rt.reset(options)
    mem = {}
    for t in threads:
        for op in t:
            if location(op) is not None and op[1] not in mem:
                mem[op[1]] = rt.var(op[1])
    lib = rt.lib
    main = lib.__rsan_test_new_thread(rt.ffi.NULL)
    lib.__rsan_test_set_current(main)
    pads = [lib.__rsan_test_new_thread(main) for _ in range(pad)]
    for p in pads if join_pads else []:
        lib.rsan_thread_join(main, p)
    # a spawn_join program's thread 0 is main, which creates the others at its spawn
    spawns = any(op[0] == "spawn" for op in threads[0])
    tids = [main] if spawns else [lib.__rsan_test_new_thread(main) for _ in threads]
    pos = [0] * len(threads)
    for k in schedule:
        op, i = threads[k][pos[k]], pos[k]
        pos[k] += 1
        lib.__rsan_test_set_current(tids[k])
        line, fn = 10 * (k + 1) + i, f"t{k + 1}"
        kind = op[0]
        if kind == "spawn":
            tids += [lib.__rsan_test_new_thread(main) for _ in threads[1:]]
        elif kind == "join":
            lib.rsan_thread_join(main, tids[op[1]])
        elif kind in ("read", "write"):
            off, size = byte_range(op)
            site = rt.site(kind, line, fn, size=size)
            p = rt.ffi.cast("char *", mem[op[1]]) + off
            (rt.read if kind == "read" else rt.write)(p, site=site, size=size)
        elif kind == "ld":
            rt.load(mem[op[1]], op[2], rt.site("ld", line, fn, op[2]))
        elif kind == "st":
            rt.store(mem[op[1]], op[2], op[3], rt.site("st", line, fn, op[3]))
        elif kind == "rmw":
            rt.rmw(mem[op[1]], op[2], op[3], op[4], rt.site("rmw", line, fn, op[4]))
        elif kind == "cas":
            rt.cas(mem[op[1]], op[2], op[3], op[4], op[5], False, rt.site("cas", line, fn, op[4]))
        elif kind == "fence":
            rt.fence(op[1], rt.site("fence", line, fn, op[1]))
        else:
            raise ValueError(op)
    lib.__rsan_test_set_current(main)
    # a report names the first racing byte: "x+2" is byte 2 of x
    return {r["location"]["name"].split("+")[0] for r in rt.races()}


def check(rt, count, seed, generate=random_program, exhaustive=0, draw=random_schedules, pad=0, join_pads=False):
    """exhaustive: programs with at most this many interleavings run in all of them (every SC
    execution), the others in 3 drawn by draw. pad, join_pads: as run_detector's."""
    rng = random.Random(seed)
    runs, racy, disagreements = 0, 0, []
    for _ in range(count):
        threads = generate(rng)
        schedules = all_schedules(threads) if exhaustive else []
        if not schedules or len(schedules) > exhaustive:
            schedules = draw(rng, threads, 3)
        for schedule in schedules:
            expected = racy_locations(threads, schedule)
            racy += bool(expected)
            for mode in MODES:
                got = run_detector(rt, threads, schedule, mode, pad, join_pads)
                runs += 1
                if got != expected:
                    disagreements.append((threads, schedule, mode or "default", expected, got))
    assert not disagreements, "\n".join(
        f"program {p} schedule {s} mode {m}: model {e}, detector {g}" for p, s, m, e, g in disagreements[:10])
    return runs, racy


def test_model_examples():
    """The model itself, on the programs of issue 13 and classic message passing."""
    sc_mp_other_loc = [[("write", "d0"), ("st", "x", 1, "sc")], [("ld", "y", "sc"), ("read", "d0")]]
    assert racy_locations(sc_mp_other_loc, (0, 0, 1, 1)) == {"d0"}
    fences_only = [[("write", "d0"), ("fence", "sc")], [("fence", "sc"), ("read", "d0")]]
    assert racy_locations(fences_only, (0, 0, 1, 1)) == {"d0"}
    fence_mp = [[("write", "d0"), ("fence", "sc"), ("st", "x", 1, "rlx")],
                [("ld", "x", "rlx"), ("fence", "sc"), ("read", "d0")]]
    assert racy_locations(fence_mp, (0, 0, 0, 1, 1, 1)) == set()
    assert racy_locations(fence_mp, (1, 1, 1, 0, 0, 0)) == {"d0"}  # reads the initial value
    # release sequence through another thread's RMW, broken by a plain store (C++20)
    relseq = [[("write", "d0"), ("st", "x", 1, "rel")], [("rmw", "x", "add", 1, "rlx")],
              [("ld", "x", "acq"), ("read", "d0")]]
    assert racy_locations(relseq, (0, 0, 1, 2, 2)) == set()
    broken = [[("write", "d0"), ("st", "x", 1, "rel")], [("st", "x", 2, "rlx")],
              [("ld", "x", "acq"), ("read", "d0")]]
    assert racy_locations(broken, (0, 0, 1, 2, 2)) == {"d0"}


def test_random_programs(rt):
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "300"))
    runs, racy = check(rt, count, seed=13)
    assert racy > runs // 12  # the generator makes both kinds of runs


def test_random_programs_coded_sync_clocks(rt):
    """The same programs with 20 idle threads created first: every clock the program's threads
    export to a location's S_x has more than RSAN_VC_DENSE entries, so S_x is coded on a base
    shared with other locations and the exporting slot (vclock.c, docs/design/races.md §8), rewritten
    after it was shared, joined into and read by acquires. Fails if a coded S_x loses or
    changes an entry (a miss or a false alarm against the model)."""
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "150"))
    runs, racy = check(rt, count, seed=17, pad=20)
    assert racy > runs // 12


def test_crowded_granules(rt):
    """5-8 threads on one location: more accessors than the 4 cells of a granule."""
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "100"))
    runs, racy = check(rt, count, seed=31, generate=random_crowded_program)
    assert 0 < racy < runs


def test_crowded_granules_many_slots(rt):
    """The crowded programs with 40 idle threads created first: the program's threads hold
    slots 41-49, so their accesses of the overflowing granule take lanes of the block's second
    chunk (race_overflow.c, docs/design/races.md §9) and every S_x is coded with an owner
    epoch (the joins it lets the acquires skip). Fails if a write does not check the reads held
    in lanes, or if an owner epoch lets a join be skipped that was not contained."""
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "60"))
    runs, racy = check(rt, count, seed=37, generate=random_crowded_program, pad=40)
    assert 0 < racy < runs
    runs, racy = check(rt, count, seed=53, generate=random_crowded_atomic_program, pad=40)
    assert 0 < racy < runs


@pytest.mark.parametrize("read", [("read", "x"), ("ld", "x", "rlx"), ("ld", "x", "acq")])
@pytest.mark.parametrize("published", [False, True])
def test_a_write_checks_the_read_in_a_lane(rt, read, published):
    """Threads 0-4 read x and publish a flag each, thread 5 reads x: its read finds the four
    cells and the block's first cells taken and goes to its lane. Thread 6 acquires the flags
    of 0-4 (and of 5 when published) and writes x: it races with thread 5's read only, which
    is in no cell but the lane (fails if the write's check skips the lanes, or, published, if
    a lane cell ordered before the write is reported)."""
    threads = [[read, ("st", f"f{i}", 1, "rel")] for i in range(6)]
    threads.append([("ld", f"f{i}", "acq") for i in range(6 if published else 5)] + [("write", "x")])
    schedule = tuple(k for k in range(6) for _ in range(2)) + (6,) * len(threads[6])
    expected = set() if published else {"x"}
    assert racy_locations(threads, schedule) == expected
    for mode in MODES:
        assert run_detector(rt, threads, schedule, mode) == expected
        assert run_detector(rt, threads, schedule, mode, pad=40) == expected


def test_an_atomic_access_does_not_replace_a_plain_cell(rt):
    """Thread 1's atomic store of x is ordered after thread 0's plain write of x, but an atomic
    access does not cover a plain one: thread 2's unsynchronised atomic load races with the
    plain write (not with the atomic store), so the plain write's cell must stay."""
    for second in (("st", "x", 1, "rlx"), ("rmw", "x", "add", 1, "rlx")):
        threads = [[("write", "x"), ("st", "f", 1, "rel")], [("ld", "f", "acq"), second], [("ld", "x", "rlx")]]
        schedule = (0, 0, 1, 1, 2)
        assert racy_locations(threads, schedule) == {"x"}
        assert run_detector(rt, threads, schedule, "") == {"x"}


@pytest.mark.parametrize("second", [("st", "x", 2, "rlx"), ("rmw", "x", "add", 1, "rlx"),
                                    ("ld", "x", "rlx"), ("cas", "x", 1, 3, "rlx", "rlx")])
@pytest.mark.parametrize("plain", ["write", "read"])
def test_an_atomic_access_checks_a_plain_cell_beside_its_own(rt, plain, second):
    """Thread 0's first atomic access of x happens before thread 1's plain access (through f),
    its second one does not: only the second races with the plain access, and only the second
    can find it (the plain access found thread 0's first cell ordered; the CAS succeeds). The
    atomic access must check a conflicting plain cell even when its own atomic cell is there to
    be renewed (rsan_race.h rsan_race_atomic_cells). A plain read conflicts with the atomic writes only."""
    threads = [[("st", "x", 1, "rel"), ("st", "f", 1, "rel"), second], [("ld", "f", "acq"), (plain, "x")]]
    schedule = (0, 0, 1, 1, 0)
    expected = {"x"} if plain == "write" or second[0] != "ld" else set()
    assert racy_locations(threads, schedule) == expected
    for mode in MODES:
        assert run_detector(rt, threads, schedule, mode) == expected


@pytest.mark.parametrize("atomic", [("st", "x", 2, "rlx"), ("rmw", "x", "add", 1, "rlx"), ("ld", "x", "rlx"),
                                    ("cas", "x", 1, 3, "rlx", "rlx")])
@pytest.mark.parametrize("plain", ["write", "read"])
def test_an_atomic_access_without_a_cell_of_its_own_checks_a_plain_cell(rt, plain, atomic):
    """Thread 2's atomic store of x and thread 1's plain access of x are ordered (through f);
    thread 0 acquires f too, so thread 2's cell happens before its atomic access of x (which
    may take that cell, having none of its own: race_atomic.c rsan_race_atomic_take), but thread 1's
    plain access does not: thread 0's access races with it when one of the two writes. The
    atomic access must check the plain cell after the cell it takes."""
    threads = [[("ld", "f", "acq"), atomic], [("ld", "f", "acq"), (plain, "x")],
               [("st", "x", 1, "rlx"), ("st", "f", 1, "rel")]]
    schedule = (2, 2, 1, 1, 0, 0)
    expected = racy_locations(threads, schedule)
    assert expected == ({"x"} if plain == "write" or atomic[0] != "ld" else set())
    for mode in MODES:
        assert run_detector(rt, threads, schedule, mode) == expected


@pytest.mark.parametrize("other", [("write", "x"), ("read", "x"), ("ld", "g", "rlx")])
def test_a_plain_access_after_a_release_checks_another_threads_cell(rt, other):
    """Thread 0 writes x, releases f and then writes and reads x again (a stack variable around
    an atomic store: its own write at an older epoch and the freed cell of its last read);
    thread 1 acquires f, then accesses x: ordered after thread 0's first accesses, not before
    its last two, which race with it when one of the two writes. A shortcut for cells that all
    happen before the access must still check the one that does not."""
    threads = [[("write", "x"), ("read", "x"), ("st", "f", 1, "rel"), ("write", "x"), ("read", "x")],
               [("ld", "f", "acq"), other]]
    schedule = (0, 0, 0, 1, 1, 0, 0)
    expected = racy_locations(threads, schedule)
    assert expected == ({"x"} if other[0] == "write" or other == ("read", "x") else set())
    for mode in MODES:
        assert run_detector(rt, threads, schedule, mode) == expected


def test_crowded_atomic_granules(rt):
    """5-8 threads' atomic accesses of one location (its cells overflow; atomic accesses never
    race with each other) with plain accesses of it among and after them: the race detector's
    handling of atomic accesses (rsan_race.h rsan_race_atomic_cells, race_overflow.c) against the model."""
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "100"))
    runs, racy = check(rt, count, seed=47, generate=random_crowded_atomic_program)
    assert 0 < racy < runs


def test_mixed_granules(rt):
    """Atomic accesses and plain accesses of various bytes of one granule by 3-6 threads,
    mostly ordered: a cell may give way only to a later access that covers it (race.c,
    "Replacement"), in granules with free cells and full ones. (The detector that let any
    ordered access replace a cell in a full granule, and an atomic access replace a plain
    cell, disagreed on 8% of these programs.)"""
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "200"))
    runs, racy = check(rt, count, seed=113, generate=random_mixed_granule_program,
                       draw=ordered_schedules)
    assert runs // 10 < racy < runs - runs // 10


def test_spawn_join_granules(rt):
    """Main accesses x, spawns 4-6 threads that access x in a mostly ordered chain, joins some
    of them: full granules where cells below the floor (ordered before every live thread's
    accesses: main's before the spawn, joined threads' that the others acquired) may be
    dropped (race_floor.c) and the others must stay."""
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "200"))
    runs, racy = check(rt, count, seed=131, generate=random_spawn_join_program, draw=spawn_join_schedules)
    assert runs // 10 < racy < runs - runs // 10


def test_a_full_granule_keeps_a_write_the_next_access_does_not_cover(rt):
    """Threads by index: thread 1's release store of x is read by thread 4's seq_cst load (so
    it happens before it); thread 4's read finds the four cells full, and does not cover the
    write (a read), so it goes to the overflow cells and the write stays; thread 5's plain read
    of x, ordered after thread 2's write only, races with thread 1's write. (Found by
    test_crowded_atomic_granules with more programs: a full granule used to evict any cell
    ordered before the access.)"""
    threads = [[("cas", "x", 0, 2, "rel", "rlx")], [("st", "x", 1, "rel")],
               [("st", "x", 1, "sc"), ("st", "f2", 1, "rel")], [("cas", "x", 0, 2, "rlx", "rlx")],
               [("ld", "x", "sc")], [("ld", "f2", "acq"), ("read", "x")]]
    schedule = (2, 2, 1, 5, 0, 3, 4, 5)
    assert racy_locations(threads, schedule) == {"x"}
    assert run_detector(rt, threads, schedule, "") == {"x"}


@pytest.mark.slow
def test_many(rt):
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "2000"))
    runs, racy = check(rt, count, seed=2013, exhaustive=30)
    assert racy > runs // 12
