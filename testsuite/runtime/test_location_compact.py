"""The compact record of a never-written location (runtime/src/location_compact.c,
docs/design/clocks.md §21): after a load that added a fact, a COLD record whose state fits
(never written, at most 3 facts, Msc ⊥, a snapshot with at most one difference or an inline
clock of at most 4 entries) is replaced by a 128-byte compact record, which is expanded back
into the class an operation needs before that operation runs. Its id, facts, Msc, msc_in and
initial value carry over both ways: reports stay test_model.py's transcription; a thread
blocked on the lock of the record being replaced uses the live one."""
import os
import random
import re
import subprocess
import sys
import textwrap
import threading
import time

from harness import ORDERS, RMW_OPS, Program
from test_model import exact_against_transcription
from test_snapshots import random_big_program

FULL, NOW, COLD, COMPACT = 0, 1, 2, 3  # rsan_location.h RSAN_LOC_*


def fresh(rt, n=1):
    return rt.ffi.new("uint32_t[%d]" % (2 * n))  # even words: one location per 8-byte granule


def test_a_load_leaves_a_never_written_location_compact(rt):
    """Loads by three threads leave the location compact after each new fact (a re-read,
    which adds none, leaves the expanded record as it is); the fourth thread's fact does not
    fit, and a write expands it into the class the write needs. The id and the initial value
    (memory's value at the first touch) stay through every move. Both kinds of Msc: a thread
    clock of at most 4 slots (inline) and one of more than 6 (a shared snapshot)."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    kept = []  # every buffer lives to the end: a freed one's address would come back with its record
    for extra in (0, 8):  # threads made first: the loaders' clocks have 2-4 or 10+ slots
        main = rsan.test_new_thread(ffi.NULL)
        rsan.test_set_current(main)
        for _ in range(extra):
            lib.rsan_thread_create(main)
        p = fresh(rt)
        kept.append(p)
        p[0] = 7
        loaders = [lib.rsan_thread_create(main) for _ in range(4)]
        shrunk = lib.__rsan_test_location_shrinks()
        rsan.test_set_current(loaders[0])
        assert rt.load(p, "acq") == 7
        assert lib.__rsan_test_location_class(p) == COMPACT, extra
        ident = lib.__rsan_test_location_id(p)
        assert rt.load(p, "acq") == 7  # a re-read: expanded, no new fact, not shrunk again
        assert lib.__rsan_test_location_class(p) == COLD
        for k in (1, 2):
            rsan.test_set_current(loaders[k])
            assert rt.load(p, "rlx") == 7
            # Msc: loaders' clocks joined, inline (fits) or no longer one snapshot (does not)
            assert lib.__rsan_test_location_class(p) == (COMPACT if not extra else COLD), (extra, k)
        assert lib.__rsan_test_location_shrinks() - shrunk == (3 if not extra else 1)
        for k in (2, 0, 1):  # re-reads: each thread's fact is found (it was moved), none added
            rsan.test_set_current(loaders[k])
            assert rt.load(p, "acq") == 7
            assert lib.__rsan_test_location_facts(p) == 3
        rsan.test_set_current(loaders[3])
        assert rt.load(p, "sc") == 7  # a fourth fact: no longer fits
        assert lib.__rsan_test_location_class(p) == COLD
        assert lib.__rsan_test_location_shrinks() - shrunk == (3 if not extra else 1)
        assert lib.__rsan_test_location_id(p) == ident
        q = fresh(rt)
        kept.append(q)
        # a clock of at most 4 slots (inline), or a fresh thread's (a snapshot and its own entry)
        rsan.test_set_current(loaders[2] if not extra else lib.rsan_thread_create(main))
        rt.load(q, "acq")
        assert lib.__rsan_test_location_class(q) == COMPACT
        rt.rmw(q, "add", 1, "rlx")  # expanded straight into the class without W
        assert lib.__rsan_test_location_class(q) == NOW and lib.__rsan_test_location_stamp(q) == 1
        assert rt.reports() == []


def test_small_atomics_in_one_granule_keep_their_chain(rt):
    """Eight one-byte locations share a granule's chain; compact records link it through a
    field of their own layout (location.c loc_gnext). Loaded, re-loaded, written and freed in
    mixed order, every location keeps its id and the table exactly the live ones."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    rnd = random.Random(5)
    threads = [lib.rsan_thread_create(main) for _ in range(3)]
    g = ffi.new("uint64_t[2]")
    b = ffi.cast("uint8_t *", g)
    count = lib.__rsan_test_location_count()
    ids = {}
    for i in rnd.sample(range(8), 8):
        rsan.test_set_current(threads[i % 3])
        lib.__rsan_load_1(b + i, ORDERS["acq"], 0)
        ids[i] = lib.__rsan_test_location_id(b + i)
    assert [lib.__rsan_test_location_class(b + i) for i in range(8)] == [COMPACT] * 8
    assert len(set(ids.values())) == 8 and lib.__rsan_test_location_count() == count + 8
    add = RMW_OPS.index("add")
    for _ in range(4):
        for i in rnd.sample(range(8), 8):
            rsan.test_set_current(rnd.choice(threads))
            if rnd.random() < 0.3:
                lib.__rsan_rmw_1(b + i, 1, add, ORDERS["rlx"], 0)
            else:
                lib.__rsan_load_1(b + i, ORDERS["rlx"], 0)
            assert lib.__rsan_test_location_id(b + i) == ids[i]
        assert lib.__rsan_test_location_count() == count + 8
    lib.rsan_memory_retire(b + 2, 3)  # three in the middle of the chain freed
    assert [lib.__rsan_test_location_id(b + i) == 0 for i in range(8)] == [i in (2, 3, 4) for i in range(8)]
    assert all(lib.__rsan_test_location_id(b + i) == ids[i] for i in (0, 1, 5, 6, 7))
    assert lib.__rsan_test_location_count() == count + 5


def test_compaction_keeps_every_verdict(rt):
    """Programs whose first accesses are loads (locations made compact, expanded by later
    loads of other threads and made compact again) and whose later ones are writes of every
    order, seq_cst loads and fences (expansions into every class): every report must be the
    transcription's. 7 threads (shared snapshots) and 2 or 3 (inline clocks)."""
    rnd = random.Random(23)

    def staged():
        nthreads = rnd.choice([2, 3, 7, 7])
        early = random_big_program(rnd, 16, nthreads, rnd.randint(4, 10), kinds=("ld",),
                                   loads=("rlx", "acq", "sc"))
        late = random_big_program(rnd, 16, nthreads, rnd.randint(6, 12), kinds=("ld", "st", "rmw", "cas", "fence"),
                                  loads=("rlx", "acq", "sc"), stores=("rlx", "rel", "sc"))
        early.threads = [a + b for a, b in zip(early.threads, late.threads)]
        return early

    shrunk = rt.lib.__rsan_test_location_shrinks()
    exact, reported = exact_against_transcription(rt, rnd, staged, 60)
    assert rt.lib.__rsan_test_location_shrinks() - shrunk >= 500
    assert exact >= 45 and reported >= 40, (exact, reported)


def _written_then_loaded(rnd, nthreads):
    """Each thread first writes some of w0..w5 (its clock moves past its snapshot), then loads
    fresh locations c0..c11 (made compact with Msc = its snapshot and one difference), then
    seq_cst and release writes and seq_cst loads everywhere: Tsc ⊔= Msc(c) on a write of c
    passes on what the loaders knew."""
    val = iter(range(1, 10**6))
    ws, cs = [f"w{i}" for i in range(6)], [f"c{i}" for i in range(12)]
    threads = []
    for _ in range(nthreads):
        ops = [("st", rnd.choice(ws), next(val), rnd.choice(["rlx", "rel", "sc"])) for _ in range(rnd.randint(1, 3))]
        ops += [("ld", c, rnd.choice(["rlx", "acq", "sc"])) for c in rnd.sample(cs, rnd.randint(2, 5))]
        for _ in range(rnd.randint(3, 7)):
            v = rnd.choice(ws + cs)
            if rnd.random() < 0.5:
                ops.append(("st", v, next(val), rnd.choice(["rel", "sc", "sc"])))
            else:
                ops.append(("ld", v, rnd.choice(["acq", "sc", "sc"])))
        threads.append(ops)
    return Program(*threads)


def test_compaction_keeps_what_loaders_knew(rt):
    """test_model.py's oracle on _written_then_loaded programs: the Msc a compact record keeps
    (a snapshot and the loader's own difference) must come back whole."""
    rnd = random.Random(31)
    shrunk = rt.lib.__rsan_test_location_shrinks()
    exact, reported = exact_against_transcription(rt, rnd, lambda: _written_then_loaded(rnd, rnd.choice([3, 7, 8])), 80)
    assert rt.lib.__rsan_test_location_shrinks() - shrunk >= 300
    assert exact >= 60 and reported >= 40, (exact, reported)


def test_a_thread_waiting_for_the_lock_of_a_record_made_compact(rt):
    """Thread b's access blocks on the lock of the COLD record that main's load is replacing
    by a compact one (the shrink pauses with that lock held, __rsan_test_set_promote_hook): b
    must find it retired, then find the compact record and expand it. Its write counts in the
    live record's stamp; its load leaves its fact there (beside a's; a later re-read by b adds none)."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    for _ in range(8):  # the loaders' clocks are shared snapshots: their Msc fits
        lib.rsan_thread_create(main)
    add = RMW_OPS.index("add")
    ops = {"load": lambda p: lib.__rsan_load_4(p, ORDERS["acq"], 0),
           "rmw": lambda p: lib.__rsan_rmw_4(p, 1, add, ORDERS["rlx"], 0)}
    rounds = [k for k in ops for _ in range(3)]
    buf = fresh(rt, len(rounds))
    paused = threading.Event()

    calling = threading.Event()

    @ffi.callback("void(const void *)")
    def hook(addr):
        if not paused.is_set():
            paused.set()
            calling.wait(timeout=30)
            time.sleep(0.1)  # b, which has just called in, is now waiting for the old record's lock

    lib.__rsan_test_set_promote_hook(hook)
    try:
        for i, kind in enumerate(rounds):
            p = buf + 2 * i
            a, b = lib.rsan_thread_create(main), lib.rsan_thread_create(main)
            paused.clear()
            calling.clear()
            shrunk = lib.__rsan_test_location_shrinks()

            def loader():
                rsan.test_set_current(a)
                lib.__rsan_load_4(p, ORDERS["rlx"], 0)  # made COLD, then shrunk

            def waiter():
                rsan.test_set_current(b)
                if paused.wait(timeout=30):
                    calling.set()
                    ops[kind](p)

            ts = [threading.Thread(target=waiter), threading.Thread(target=loader)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            assert paused.is_set()
            assert lib.__rsan_test_location_shrinks() - shrunk >= 1
            assert lib.__rsan_test_location_count() >= 1
            if kind == "load":
                assert lib.__rsan_test_location_class(p) in (COLD, COMPACT)
                assert lib.__rsan_test_location_facts(p) == 2  # a's and b's
                rsan.test_set_current(b)
                lib.__rsan_load_4(p, ORDERS["acq"], 0)  # b's fact is in the live record: no new one
                assert lib.__rsan_test_location_facts(p) == 2
            else:
                assert lib.__rsan_test_location_class(p) == NOW
                assert lib.__rsan_test_location_stamp(p) == 1 and buf[2 * i] == 1
    finally:
        lib.__rsan_test_set_promote_hook(ffi.NULL)


CENSUS_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, %r)
    from harness import load_engine
    ffi, lib = load_engine()
    words = ffi.new("uint32_t[8]")  # even words: one location per 8-byte granule
    main = lib.__rsan_test_new_thread(ffi.NULL)
    lib.__rsan_test_set_current(lib.rsan_thread_create(main))
    for i in (0, 2, 4):
        lib.__rsan_load_4(words + i, 2, 0)  # acquire loads: each left compact
    lib.__rsan_store_4(words + 6, 1, 3, 0)  # a release store: a full record
""")


def test_the_census_counts_every_class_and_the_records_made(tmp_path, engine):
    """verbosity=1 prints the census at exit (location_census.c): the live records by class,
    the records made compact, and the bytes of records made against those live (a load first
    makes a cold record, then a compact one: the cold one goes back to its free list), and
    the size classes' line (alloc.c rsan_slab_print_census): the release store's 1-entry
    history ring is split from one 512-byte block of the buddy system, whose other halves (64,
    128 and 256 bytes) are free. Mutant caught: buddy_alloc handing out the whole 512-byte
    block for a 64-byte ring (no split: nothing free)."""
    from harness import HERE

    env = dict(os.environ, PYRSAN_OPTIONS="verbosity=1")
    proc = subprocess.run([sys.executable, "-c", CENSUS_SCRIPT % str(HERE)], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    live = re.search(r"location records: (\d+) live \((\d+) bytes\): (\d+) full .*?, (\d+) compact",
                     proc.stderr)
    made = re.search(r"(\d+) made compact; (\d+) bytes of records made, (\d+) of them free", proc.stderr)
    assert live and made, proc.stderr
    n, live_bytes, full, compact = map(int, live.groups())
    shrinks, made_bytes, free = map(int, made.groups())
    assert (n, full, compact, shrinks) == (4, 1, 3, 3)
    assert live_bytes == 384 + 3 * 128   # rsan_loc_size: full 384, compact 128
    # each load first makes a cold record (256 bytes), freed by its compaction and reused by the
    # next location's: one made, free at exit
    assert made_bytes == live_bytes + 256 and free == 256
    classes = re.search(r"size classes: (\d+) bytes taken, (\d+) of them by the buddy system "
                        r"\(64\.\.512 bytes\), free there: (\d+) (\d+) (\d+) (\d+)", proc.stderr)
    assert classes, proc.stderr
    taken, buddy, *free_by_order = map(int, classes.groups())
    assert buddy == 512 and free_by_order == [64, 128, 256, 0] and taken >= buddy
