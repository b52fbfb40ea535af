"""What a thread knows of shared snapshots (runtime/src/clock.c, docs/design/clocks.md §16):
a join X ⊔= L of a location clock that shares a snapshot X's memo remembers joins only L's
pairs, an export L := X takes X's differences from its snapshot from the delta X keeps, and
L ⊑ X is decided from L's pairs when X's memo remembers L's snapshot. Programs use more than
RSAN_CLK_INLINE (6) thread slots, so that thread clocks are exported as shared snapshots.
The engine is the debug build (harness.py): every join a memo skips is asserted to add
nothing and every delta export to give the pairs a whole comparison gives; here every
thread clock at every location, and every report, must be test_model.py's transcription's."""
import random

import cffi

from harness import build_engine_lib, line_of
from test_model import Model, Thr
from test_snapshots import random_big_program

CLOCKS = ("Tc", "Tr", "Ta", "Tsc", "TcU", "TrU", "TaU", "TscU")  # __rsan_test_thread_clock's which


def _memo_counts():
    """(memo joins, delta exports, memo containment tests) so far: debug builds' counters"""
    ffi = cffi.FFI()
    ffi.cdef("void __rsan_test_memo_counts(uint64_t out[3]);")
    lib = ffi.dlopen(str(build_engine_lib()))  # the library the rt fixture loaded
    out = ffi.new("uint64_t[3]")
    lib.__rsan_test_memo_counts(out)
    return tuple(out)


def bursts(rnd, prog):
    """An interleaving in which a thread runs a few operations in a row, so that its exports
    share one snapshot and other threads meet it again (memo hits) between its snapshots."""
    left = [len(t) for t in prog.threads]
    sched = []
    while any(left):
        k = rnd.choice([i for i, n in enumerate(left) if n])
        n = min(left[k], rnd.randint(1, 5))
        sched += [k] * n
        left[k] -= n
    return sched


def random_bursts_exact(rt, rnd, count, locations, threads):
    """count random programs (random_big_program over rnd.choice(locations) locations and
    threads() threads) run in bursts through the engine and the transcription; each run whose
    queries were exact must give the same clocks and reports. (exact runs, reports in them)."""
    exact = reported = 0
    for _ in range(count):
        prog = random_big_program(rnd, rnd.choice(locations), threads(), rnd.randint(6, 14))
        sched = bursts(rnd, prog)
        mode = rnd.choice(["fenced", "ra"])
        got, want, inexact = run_both(rt, prog, sched, mode)
        if inexact:
            continue
        assert got == want, (prog.threads, sched, mode)
        exact += 1
        reported += len(got[0])
    return exact, reported


def run_both(rt, prog, sched, mode):
    """prog in the interleaving sched through the engine and the transcription: (engine's
    reports, every thread clock at every location; the same from the transcription), and the
    engine's count of inexact queries (then its clock values are bounds)."""
    rt.reset(f"sc_accesses={mode}")
    lib = rt.lib
    names = sorted({op[1] for t in prog.threads for op in t if op[0] != "fence"})
    mem = {n: rt.var(n) for n in names}
    main = lib.__rsan_test_new_thread(rt.ffi.NULL)
    threads = [lib.__rsan_test_new_thread(main) for _ in prog.threads]
    m = Model(mode)
    mmain = Thr()
    mthreads = [Thr(mmain) for _ in prog.threads]
    pos = [0] * len(threads)
    for k in sched:
        i = pos[k]
        op = prog.threads[k][i]
        lib.__rsan_test_set_current(threads[k])
        fn, line = f"t{k + 1}", line_of(k + 1, i)
        rt.atomic_op(mem, op, line, fn)
        m.op(mthreads[k], op, (k + 1, i))
        pos[k] += 1
    lib.__rsan_test_set_current(main)
    got_clocks = [lib.__rsan_test_thread_clock(t, which, mem[n])
                  for t in threads for n in names for which in range(8)]
    want_clocks = [getattr(t, c).get(n, 0) for t in mthreads for n in names for c in CLOCKS]
    got = sorted(((r["access"]["thread"], r["access"]["line"] - 10 * r["access"]["thread"]),
                  r["type"], r["timestamps"]["hb"], r["timestamps"]["sc"]) for r in rt.reports())
    return (got, got_clocks), (sorted(m.reports), want_clocks), lib.__rsan_test_inexact_count()


def test_memo_joins_and_delta_exports_keep_every_clock_and_report(rt):
    """Random programs of 8-14 threads over 1-4 locations (every kind of operation, order and
    fence), run in bursts: location clocks share snapshots that other threads' memos
    remember, thread clocks are exported from their deltas, new snapshots are taken as clocks
    move. Every thread clock at every location and every report must be the transcription's;
    the three shortcuts must each have been taken, or this test could not fail."""
    rnd = random.Random(1116)
    before = _memo_counts()
    exact, reported = random_bursts_exact(rt, rnd, 30, [1, 2, 4], lambda: rnd.randint(8, 14))
    after = _memo_counts()
    hits = [a - b for a, b in zip(after, before)]
    assert exact >= 20 and reported >= 20, (exact, reported)
    assert all(h >= 50 for h in hits), hits


def test_a_later_snapshot_of_a_remembered_lineage_is_joined(rt):
    """t1's release stores share snapshots of its Tc. t2 acquires x (its memo remembers t1's
    snapshot); t1 then learns the stores of 7 other threads (more differences than a shared
    clock holds: its next export takes a new snapshot of the same lineage) and stores y; t2
    acquires y. t2 must learn those 7 stores: a memo that took the newer snapshot for the one
    it remembers would skip them (then the debug build's assertion fails, and t2's clock
    misses them); and a re-read of x after that must still see x's store, not more."""
    lib, ffi = rt.lib, rt.ffi
    x, y = rt.var("x"), rt.var("y")
    main = lib.__rsan_test_new_thread(ffi.NULL)
    pads = [lib.__rsan_test_new_thread(main) for _ in range(7)]
    t1, t2 = lib.__rsan_test_new_thread(main), lib.__rsan_test_new_thread(main)
    pv = [rt.var(f"p{i}") for i in range(len(pads))]
    for p, v in zip(pads, pv):  # every slot in t1's and t2's clocks: arrays, shared exports
        lib.__rsan_test_set_current(p)
        rt.store(v, 1, "rel")
        for t in (t1, t2):
            lib.__rsan_test_set_current(t)
            rt.load(v, "acq")
    before = _memo_counts()
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, "rel")
    lib.__rsan_test_set_current(t2)
    assert rt.load(x, "acq") == 1  # t2's Tc and Ta remember t1's snapshot now
    for p, v in zip(pads, pv):  # a second store of each: t1 learns them, t2 does not
        lib.__rsan_test_set_current(p)
        rt.store(v, 2, "rel")
        lib.__rsan_test_set_current(t1)
        rt.load(v, "acq")
    lib.__rsan_test_set_current(t1)
    rt.store(y, 1, "rel")
    lib.__rsan_test_set_current(t2)
    for v in pv:
        assert lib.__rsan_test_thread_clock(t2, 0, v) == 1  # Tc: the first stores only
    assert rt.load(y, "acq") == 1
    for v in pv:
        assert lib.__rsan_test_thread_clock(t2, 0, v) == 2, "t2 missed a store t1 had learnt"
        assert lib.__rsan_test_thread_clock(t2, 2, v) == 2  # Ta
    assert rt.load(x, "acq") == 1
    assert lib.__rsan_test_thread_clock(t2, 0, x) == 1
    after = _memo_counts()
    assert after[1] > before[1], (before, after)  # t1's first pad loads exported from its delta
    lib.__rsan_test_set_current(main)
