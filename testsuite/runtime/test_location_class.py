"""Location records by size class (runtime/src/location.c, docs/design/clocks.md §19): a
location is made in the smallest class (no W or Wsc line) and promoted, by a bigger record
that takes its place in the table, before an operation would make W or Wsc not ⊥. The id,
stamps, facts, history, initial value and every clock carry over: reports stay
test_model.py's transcription; writes racing with the promotion land in the one live record."""
import random
import threading
import time

from harness import ORDERS, RMW_OPS
from test_model import exact_against_transcription
from test_race_rules import setup
from test_snapshots import random_big_program

FULL, NOW, COLD, COMPACT = 0, 1, 2, 3  # rsan_location.h RSAN_LOC_*: 6, 5, 4 and 2 cache lines


def fresh(rt, n=1):
    return rt.ffi.new("uint32_t[%d]" % (2 * n))  # even words: one location per 8-byte granule


def test_each_operation_takes_the_class_it_needs(rt):
    """A load leaves a location in the smallest class; a write whose W(x) stays ⊥ (relaxed,
    no release fence: Tr = ⊥) takes the class with Wsc; a release write, or any write after a
    release fence (Tr not ⊥), takes the full record; rsan_loc_acquire's callers (wait, BCAS)
    take the full record. The location keeps its id through each promotion."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    add = RMW_OPS.index("add")
    cases = [  # (what the thread did first, the operation, the class it must leave)
        ((), lambda p: rt.load(p, "acq"), COLD),
        ((), lambda p: rt.load(p, "sc"), COLD),
        ((), lambda p: rt.store(p, 1, "rlx"), NOW),
        ((), lambda p: rt.rmw(p, "add", 1, "rlx"), NOW),
        ((), lambda p: rt.rmw(p, "add", 1, "acq"), NOW),
        ((), lambda p: rt.cas(p, 0, 1, "rlx", "rlx"), NOW),
        ((), lambda p: rt.cas(p, 5, 1, "acq", "acq"), NOW),  # fails: promoted for its success order
        ((), lambda p: rt.store(p, 1, "rel"), FULL),
        ((), lambda p: rt.store(p, 1, "sc"), FULL),
        ((), lambda p: rt.rmw(p, "add", 1, "rel"), FULL),
        ((), lambda p: rt.rmw(p, "add", 1, "ar"), FULL),
        ((), lambda p: rt.cas(p, 0, 1, "rel", "rlx"), FULL),
        (("rel",), lambda p: rt.store(p, 1, "rlx"), FULL),
        (("rel",), lambda p: rt.rmw(p, "add", 1, "rlx"), FULL),
        ((), lambda p: lib.__rsan_wait_4(p, 0, ORDERS["acq"], 0), FULL),
        ((), lambda p: lib.__rsan_bcas_4(p, 0, 1, ORDERS["rlx"], 0), FULL),
    ]
    buf = fresh(rt, len(cases) + 1)  # kept: an address freed by Python would be a live location
    for k, (before, op, want) in enumerate(cases):
        t = lib.rsan_thread_create(main)
        rsan.test_set_current(t)
        for f in before:
            rt.fence(f)
        p = buf + 2 * k
        rt.load(p)
        first = lib.__rsan_test_location_class(p)  # compact when its Msc fits (docs/design/clocks.md §21)
        assert first in (COLD, COMPACT)
        ident, promoted = lib.__rsan_test_location_id(p), lib.__rsan_test_location_promotions()
        op(p)
        assert lib.__rsan_test_location_class(p) == want, (before, want)
        assert lib.__rsan_test_location_id(p) == ident
        # a compact record is expanded (a promotion) before any operation, into its class
        assert lib.__rsan_test_location_promotions() - promoted == (want != COLD or first == COMPACT)
    # promoted once more: the class without W to the full one, Wsc carried
    t = lib.rsan_thread_create(main)
    rsan.test_set_current(t)
    p = buf + 2 * len(cases)
    lib.__rsan_rmw_4(p, 1, add, ORDERS["rlx"], 0)
    assert lib.__rsan_test_location_class(p) == NOW
    lib.__rsan_store_4(p, 2, ORDERS["rel"], 0)
    assert lib.__rsan_test_location_class(p) == FULL
    assert lib.__rsan_test_location_stamp(p) == 2


def test_a_location_is_made_in_the_class_its_first_operation_needs(rt):
    """No promotion right after the location is made: a write that makes it makes it in the
    class the write needs."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    buf = fresh(rt, 4)
    promoted = lib.__rsan_test_location_promotions()
    rt.store(buf, 1, "rlx")
    rt.rmw(buf + 2, "add", 1, "rel")
    rt.load(buf + 4, "acq")
    lib.__rsan_wait_4(buf + 6, 0, ORDERS["acq"], 0)
    assert [lib.__rsan_test_location_class(buf + 2 * i) for i in range(4)] == [NOW, FULL, COMPACT, FULL]
    assert lib.__rsan_test_location_promotions() == promoted


def test_a_thread_waiting_for_the_lock_of_a_promoted_record(rt):
    """Thread b's access blocks on the lock of the record a's release store promotes (the
    promotion pauses with that lock held, __rsan_test_set_promote_hook): b must find the
    record retired and use the new one. Its acquire load then reads a's store through the
    new record's W and leaves its fact there (b's Tc at x is 1); its write counts in the new
    record's stamp."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    add = RMW_OPS.index("add")
    ops = {"load": lambda p: lib.__rsan_load_4(p, ORDERS["acq"], 0),
           "rmw": lambda p: lib.__rsan_rmw_4(p, 1, add, ORDERS["rlx"], 0)}
    rounds = [k for k in ops for _ in range(3)]
    buf = fresh(rt, len(rounds))
    paused = threading.Event()

    @ffi.callback("void(const void *)")
    def hook(addr):
        if not paused.is_set():
            paused.set()
            time.sleep(0.05)  # b is now waiting for the old record's lock

    lib.__rsan_test_set_promote_hook(hook)
    try:
        for i, kind in enumerate(rounds):
            p = buf + 2 * i
            rsan.test_set_current(main)
            lib.__rsan_load_4(p, ORDERS["rlx"], 0)  # made in the smallest class (compact)
            ident = lib.__rsan_test_location_id(p)
            a, b = lib.rsan_thread_create(main), lib.rsan_thread_create(main)
            paused.clear()

            def writer():
                rsan.test_set_current(a)
                lib.__rsan_store_4(p, 1, ORDERS["rel"], 0)

            def waiter():
                rsan.test_set_current(b)
                paused.wait()
                ops[kind](p)

            ts = [threading.Thread(target=waiter), threading.Thread(target=writer)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            assert paused.is_set()
            assert lib.__rsan_test_location_id(p) == ident
            assert lib.__rsan_test_location_class(p) == FULL
            if kind == "load":
                assert lib.__rsan_test_thread_clock(b, 0, p) == 1, "b's load did not use the new record"
                assert lib.__rsan_test_location_stamp(p) == 1
            else:
                assert lib.__rsan_test_location_stamp(p) == 2 and buf[2 * i] == 2
    finally:
        lib.__rsan_test_set_promote_hook(ffi.NULL)


def test_promotion_keeps_every_verdict(rt):
    """Programs over many locations whose first accesses are loads and relaxed writes (the
    small classes) and whose later ones are release writes and fences (promotions, some after
    the facts, history, shared clocks and S_x were made): every report must be the
    transcription's. 7 threads: the clocks are shared snapshots (docs/design/clocks.md §13),
    moved by the promotion."""
    rnd = random.Random(19)

    def staged():
        early = random_big_program(rnd, 12, 7, rnd.randint(4, 8), kinds=("ld", "ld", "st", "rmw", "cas"),
                                   loads=("rlx", "acq", "sc"), stores=("rlx",))
        late = random_big_program(rnd, 12, 7, rnd.randint(4, 8), kinds=("ld", "st", "rmw", "cas", "fence"),
                                  loads=("rlx", "acq", "sc"), stores=("rlx", "rel", "sc"))
        early.threads = [a + b for a, b in zip(early.threads, late.threads)]
        return early

    promoted = rt.lib.__rsan_test_location_promotions()
    exact, reported = exact_against_transcription(rt, rnd, staged, 40)
    assert rt.lib.__rsan_test_location_promotions() - promoted >= 300
    assert exact >= 30 and reported >= 100, (exact, reported)


def test_promotion_races_with_waiters(rt):
    """Threads hammer fresh locations at once: relaxed RMWs (promotion to the class with
    Wsc), one thread's release stores (to the full record) and acquire loads, so promotions
    happen while other threads wait for the record's lock. Every write must land in the one
    live record: each location's stamp counts every write made, ids stay, and the table has
    exactly the locations."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    N, ROUNDS, ADDERS = 48, 12, 3
    add, rlx = RMW_OPS.index("add"), ORDERS["rlx"]
    threads = [lib.rsan_thread_create(main) for _ in range(ADDERS + 2)]
    errors = []
    blocks = []

    def adder(k, mem):
        rsan.test_set_current(threads[k])
        for i in range(N):
            lib.__rsan_rmw_4(mem + 2 * i, 1, add, rlx, 0)

    def releaser(mem):
        rsan.test_set_current(threads[ADDERS])
        for i in range(N):
            lib.__rsan_rmw_4(mem + 2 * i, 1000, add, ORDERS["rel"], 0)

    def loader(mem):
        rsan.test_set_current(threads[ADDERS + 1])
        for i in range(N):
            lib.__rsan_load_4(mem + 2 * i, ORDERS["acq"], 0)

    def guarded(f, *a):
        try:
            f(*a)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    for _ in range(ROUNDS):
        mem = fresh(rt, N)
        blocks.append(mem)
        rsan.test_set_current(main)
        for i in range(N):  # made in the smallest class, their ids known
            lib.__rsan_load_4(mem + 2 * i, rlx, 0)
        ids = [lib.__rsan_test_location_id(mem + 2 * i) for i in range(N)]
        ts = [threading.Thread(target=guarded, args=(adder, k, mem)) for k in range(ADDERS)]
        ts += [threading.Thread(target=guarded, args=(releaser, mem)),
               threading.Thread(target=guarded, args=(loader, mem))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert errors == []
        for i in range(N):
            assert mem[2 * i] == ADDERS + 1000
            assert lib.__rsan_test_location_stamp(mem + 2 * i) == ADDERS + 1  # every write
            assert lib.__rsan_test_location_id(mem + 2 * i) == ids[i]
            assert lib.__rsan_test_location_class(mem + 2 * i) == FULL
    assert lib.__rsan_test_location_count() == N * ROUNDS


def test_small_records_are_reused_by_class(rt):
    """Records are type-stable per class: a retired small record (freed, or replaced by its
    promotion) goes to its class's free list and the next location of that class reuses it,
    cleared (a new location there starts with stamp 0 and no facts: its first relaxed load of
    a fresh value is not stale). A load makes a COLD record and leaves a compact one
    (docs/design/clocks.md §21): the COLD record goes back to its list at once, and the next
    load's location takes it again."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    N = 64
    CLS = (FULL, NOW, COLD, COMPACT)
    a = fresh(rt, N)
    before = [lib.__rsan_test_location_records(c) for c in CLS]
    for i in range(N):
        rt.load(a + 2 * i)
        assert lib.__rsan_test_location_class(a + 2 * i) == COMPACT
    made = [lib.__rsan_test_location_records(c) for c in CLS]
    assert made[COLD] <= before[COLD] + 1  # one COLD record at a time
    lib.rsan_memory_retire(a, 8 * N)  # freed: N records back to the compact class's list
    for i in range(N):
        rt.load(a + 2 * i)  # made again from the lists
    assert [lib.__rsan_test_location_records(c) for c in CLS] == made
    for i in range(N):
        rt.store(a + 2 * i, i + 1, "rlx")  # expanded: N more compact records on the list
    after = [lib.__rsan_test_location_records(c) for c in CLS]
    assert after[NOW] >= made[NOW] + N - 32 and after[COLD] == made[COLD] and after[COMPACT] == made[COMPACT]
    b = fresh(rt, N)
    for i in range(N):
        rt.load(b + 2 * i)  # from the records the expansions retired
        assert lib.__rsan_test_location_stamp(b + 2 * i) == 0
        assert lib.__rsan_test_location_class(b + 2 * i) == COMPACT
    assert [lib.__rsan_test_location_records(c) for c in (COLD, COMPACT)] == made[COLD:]
    for i in range(N):  # the promoted ones kept their state: the stores' values, one write each
        assert lib.__rsan_test_location_stamp(a + 2 * i) == 1 and rt.load(a + 2 * i, "acq") == i + 1
    assert rt.reports() == []


def _sx_through_a_promotion(rt, fence):
    """T1 (the initial thread, after it made T2 and T3): data = 1 (plain); fence rel
    (Tr := Tc = ⊥: T1 made no fact yet, while the race detector's R := C is not ⊥);
    x.store(1, rlx), which leaves x in the class without W and sets S_x := R.
    T2: x.fetch_add(1, rel): promotes x to the full class, S_x ⊔= C.
    T3: x.load(acq) reads the RMW, in T1's store's release sequence: C ⊔= S_x, so T1's
    write happens before T3's read (fence-to-acquire synchronisation). With fence=False
    nothing orders them: the variant that must report."""
    th, (data, x) = setup(rt, nvars=("data", "x"))
    t2, t3 = th.spawn(), th.spawn()
    th.on(th.main)  # T1: the initial thread, whose Tc is ⊥ until its first atomic access
    rt.write(data, site=rt.site("write", 11, "t1"))
    if fence:
        rt.fence("rel", site=rt.site("fence", 12, "t1"))
    rt.store(x, 1, "rlx", site=rt.site("st", 13, "t1"))
    assert rt.lib.__rsan_test_location_class(x) == NOW  # S_x not ⊥ in a record below FULL
    promoted = rt.lib.__rsan_test_location_promotions()
    th.on(t2)
    rt.rmw(x, "add", 1, "rel", site=rt.site("rmw", 21, "t2"))
    assert rt.lib.__rsan_test_location_class(x) == FULL
    assert rt.lib.__rsan_test_location_promotions() - promoted == 1
    th.on(t3)
    assert rt.load(x, "acq", site=rt.site("ld", 31, "t3")) == 2
    rt.read(data, site=rt.site("read", 32, "t3"))
    return rt.races()


def test_the_race_clock_s_x_moves_with_a_promotion(rt):
    """S_x can be not ⊥ in a record without W (a relaxed store after a release fence made when
    the thread's Tc was still ⊥: docs/design/clocks.md §20), so the promotion must carry it:
    not moved, T3's acquire load misses T1's release fence and reports a race on data."""
    assert _sx_through_a_promotion(rt, fence=True) == []
    races = _sx_through_a_promotion(rt, fence=False)
    assert len(races) == 1 and races[0]["access"]["line"] == 32
