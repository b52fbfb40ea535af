"""Location clocks with 32-bit entries (runtime/src/clock.c, docs/design/clocks.md §13): a
location clock's array is narrow while every entry fits and becomes 64-bit before an entry
that does not fit is stored. Epochs past 2^32 are made without 2^32 operations by
__rsan_test_skip_epochs (thread.c: no clock learns of a fact it did not contain, so every
clock's value at every location, and every report, must stay what it was). Programs use
more than RSAN_CLK_INLINE (6) thread slots, so that location clocks have arrays."""
import random

from harness import line_of
from test_snapshots import random_big_program

BIG = 1 << 32
TC, TSC = 0, 3  # __rsan_test_thread_clock: which


def _run(rt, prog, sched, options, skips):
    """prog in the interleaving sched; before op i of thread k (k = 0: main, before the
    threads are created) with (k, i) in skips, that thread's epoch jumps past 2^32. Returns the
    reports and every thread clock at every location (all 8 clocks) at the end."""
    rt.reset(options)
    lib = rt.lib
    names = sorted({op[1] for t in prog.threads for op in t if op[0] != "fence"})
    mem = {n: rt.var(n) for n in names}
    main = lib.__rsan_test_new_thread(rt.ffi.NULL)
    lib.__rsan_test_set_current(main)
    for n in names:  # main writes every location first: one more slot in every clock
        rt.store(mem[n], 0, "rel", rt.site("st", 1, "main", "rel"))
    if (0, 0) in skips:
        lib.__rsan_test_skip_epochs(main, BIG)
    threads = [lib.__rsan_test_new_thread(main) for _ in prog.threads]
    pos = [0] * len(threads)
    for k in sched:
        i = pos[k]
        op = prog.threads[k][i]
        t = threads[k]
        lib.__rsan_test_set_current(t)
        if (k + 1, i) in skips:
            lib.__rsan_test_skip_epochs(t, BIG + i)
        fn, line = f"t{k + 1}", line_of(k + 1, i)
        rt.atomic_op(mem, op, line, fn)
        pos[k] += 1
    lib.__rsan_test_set_current(main)
    clocks = [lib.__rsan_test_thread_clock(t, which, mem[n])
              for t in [main, *threads] for n in names for which in range(8)]
    reports = sorted((r["type"], r["access"]["line"], r["timestamps"]["hb"], r["timestamps"]["sc"])
                     for r in rt.reports())
    return reports, clocks, lib.__rsan_test_undecided_count(), lib.__rsan_test_inexact_count()


def test_epochs_past_32_bits_change_no_clock_value_and_no_report(rt):
    """The same programs (7-12 threads, 1-3 locations, every kind of operation and fence) run
    with small epochs and with some threads' epochs jumped past 2^32 at random points (main's
    before the threads are created, so children start with wide entries too). A location
    clock that kept an entry in 32 bits would contain fewer facts: other clock values, other
    reports."""
    rnd = random.Random(77)
    reported = 0
    for _ in range(24):
        prog = random_big_program(rnd, rnd.choice([1, 2, 3]), rnd.randint(7, 12), rnd.randint(6, 14))
        sched = list(prog.sequential())
        rnd.shuffle(sched)
        options = f"sc_accesses={rnd.choice(['fenced', 'ra'])}"
        base = _run(rt, prog, sched, options, set())
        positions = [(0, 0)] + [(k + 1, i) for k, t in enumerate(prog.threads) for i in range(len(t))]
        skips = set(rnd.sample(positions, rnd.randint(1, 4)))
        got = _run(rt, prog, sched, options, skips)
        assert got == base, (prog.threads, sched, options, sorted(skips))
        reported += len(base[0])
    assert reported >= 10, reported  # the programs do make reports: their timestamps are compared


def test_a_wide_entry_reaches_a_reader_through_every_location_clock(rt):
    """One location, 8 threads: a writer whose epoch is past 2^32 stores (Wsc(x) := Tsc,
    W(x) := Tc into narrow arrays), a reader loads (Msc(x) ⊔= Tsc, Tsc ⊔= Wsc(x), Ta, Tc ⊔= W(x)),
    a second writer RMWs (Tsc ⊔= Msc(x)). Each reader's clocks must contain the big-epoch fact:
    its values at x are the store's timestamp, as without the jump."""
    prog_threads = [[("st", "x", 5, "rel")], [("ld", "x", "acq")], [("rmw", "x", "add", 1, "rlx")]]
    prog_threads += [[("ld", "x", "rlx")] for _ in range(5)]

    class P:
        threads = prog_threads
    sched = list(range(len(prog_threads)))
    for options in ("sc_accesses=ra", "sc_accesses=fenced"):
        base = _run(rt, P, sched, options, set())
        for skip in ({(1, 0)}, {(0, 0)}, {(1, 0), (2, 0)}):
            assert _run(rt, P, sched, options, skip) == base, (options, skip)
        # the acquire reader's Tc and Tsc at x: the release store's timestamp (main's is 1)
        reader = 2 * 8  # clocks of [main, *threads] by location (one) and clock (8)
        assert base[1][reader + 0] == 2 and base[1][reader + 3] == 2, base[1][reader:reader + 8]


def test_shared_location_clocks_match_the_transcription(rt):
    """Location clocks that share snapshots of thread clocks (more than 6 slots: 8-12
    threads and main) against test_model.py's transcription of algorithm.md §3: each thread
    writes several locations between synchronisations, so a location clock refers to a
    snapshot with a few differing entries, a later write of the same thread takes a new
    snapshot once its clock moved further, Msc(x) := Wsc(x) shares the writer's, and a load's
    Msc(x) ⊔= Tsc shares the reader's or gets an array of its own. Every report (both
    timestamps) must be the transcription's. Programs whose windows of facts overflowed
    (inexact queries, docs/design/clocks.md §5) are skipped; most do not."""
    from test_model import exact_against_transcription
    rnd = random.Random(2026)
    exact, reported = exact_against_transcription(
        rt, rnd, lambda: random_big_program(rnd, rnd.choice([6, 10, 16]), rnd.randint(8, 12), rnd.randint(4, 9)), 30)
    assert exact >= 20 and reported >= 20, (exact, reported)


def test_a_shared_snapshot_outlives_its_thread_and_a_reused_slot(rt):
    """W(x) and Wsc(x) share t1's snapshots (t1's slot is past 6: its clocks have arrays); t1
    writes on, is joined (its snapshots released) and its slot goes to t3, which writes too.
    A reader acquiring x learns exactly t1's facts up to its store of x: y, not z (t1's later
    write) nor w (t3's, in the same slot at later epochs); then z and w by acquiring them."""
    lib, ffi = rt.lib, rt.ffi
    x, y, z, w = rt.var("x"), rt.var("y"), rt.var("z"), rt.var("w")
    main = lib.__rsan_test_new_thread(ffi.NULL)
    pad = [lib.__rsan_test_new_thread(main) for _ in range(8)]
    t1, t2 = lib.__rsan_test_new_thread(main), lib.__rsan_test_new_thread(main)
    for i, p in enumerate(pad):  # t1 and t2 learn every slot: clocks of 11 entries
        lib.__rsan_test_set_current(p)
        rt.store(rt.var(f"p{i}"), 1, "rel")
        for t in (t1, t2):
            lib.__rsan_test_set_current(t)
            rt.load(rt.var(f"p{i}"), "acq")
    lib.__rsan_test_set_current(t1)
    rt.store(y, 1, "rlx")
    rt.store(x, 1, "rel")
    rt.store(z, 1, "rel")
    lib.__rsan_test_set_current(main)
    lib.rsan_thread_join(main, t1)
    slots = lib.__rsan_test_slot_count()
    t3 = lib.__rsan_test_new_thread(main)  # takes t1's slot
    assert lib.__rsan_test_slot_count() == slots
    lib.__rsan_test_set_current(t3)
    rt.store(w, 1, "rel")
    lib.__rsan_test_set_current(t2)
    assert rt.load(x, "acq") == 1
    for which in (TC, TSC):
        assert lib.__rsan_test_thread_clock(t2, which, y) == 1
        assert lib.__rsan_test_thread_clock(t2, which, z) == 0
        assert lib.__rsan_test_thread_clock(t2, which, w) == 0
    assert rt.load(z, "acq") == 1
    assert lib.__rsan_test_thread_clock(t2, TC, z) == 1
    assert lib.__rsan_test_thread_clock(t2, TC, w) == 0
    assert rt.load(w, "acq") == 1
    assert lib.__rsan_test_thread_clock(t2, TC, w) == 1
    lib.__rsan_test_set_current(main)
