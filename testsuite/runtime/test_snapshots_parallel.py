"""Shared clock snapshots under real parallelism (cffi calls release the GIL): threads share
snapshots through locations, the SC-fence location and thread creation, and drop them while
others read them. Programs that are robust by construction must stay silent: only seq_cst
accesses (sc_accesses=fenced), and relaxed accesses protected by a lock."""
import random
import threading

from harness import ORDERS, RMW_OPS

NTHREADS = 8
NLOCS = 48
OPS = 1500


def _run_threads(rt, body):
    ffi, lib = rt.ffi, rt.lib
    main = lib.__rsan_test_new_thread(ffi.NULL)
    lib.__rsan_test_set_current(main)
    states = [lib.rsan_thread_create(main) for _ in range(NTHREADS)]
    errors = []

    def wrap(k):
        try:
            lib.rsan_thread_start(states[k])
            body(k)
            lib.rsan_thread_finish(states[k], ffi.NULL, ffi.NULL)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(k,)) for k in range(NTHREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    lib.__rsan_test_set_current(main)
    for s in states:
        lib.rsan_thread_join(main, s)
    assert errors == []
    return main


def test_seq_cst_only_program_in_parallel_is_never_reported(rt):
    ffi, lib = rt.ffi, rt.lib
    mem = ffi.new("uint64_t[%d]" % NLOCS)
    counter = ffi.new("uint64_t *")
    sc, add = ORDERS["sc"], RMW_OPS.index("add")
    rsan = rt.rsan

    def body(k):
        rnd = random.Random(k)
        for i in range(OPS):
            p = mem + rnd.randrange(NLOCS)
            r = rnd.randrange(5)
            if r == 0:
                rsan.store_8(p, i, sc, 0)
            elif r == 1:
                rsan.load_8(p, sc, 0)
            elif r == 2:
                old = rsan.load_8(p, sc, 0)
                rsan.cas_8(p, old, old + 1, sc, sc, 0, 0)
            elif r == 3:
                rsan.fence(sc, 0, 0)
            else:
                rsan.rmw_8(counter, 1, add, sc, 0)

    _run_threads(rt, body)
    assert lib.__rsan_test_report_count() == 0
    # the final state is fully known to main after the joins: a relaxed read is robust
    for i in range(NLOCS):
        rsan.load_8(mem + i, ORDERS["rlx"], 0)
    assert lib.__rsan_test_report_count() == 0


def test_lock_protected_relaxed_accesses_in_parallel_are_never_reported(rt):
    ffi, lib = rt.ffi, rt.lib
    mem = ffi.new("uint64_t[%d]" % NLOCS)
    lock_word = ffi.new("uint64_t *")
    mutex = threading.Lock()
    rlx, rsan = ORDERS["rlx"], rt.rsan

    def body(k):
        rnd = random.Random(100 + k)
        me = lib.rsan_thread_current()
        for i in range(OPS // 3):
            with mutex:
                lib.rsan_sync_acquire(me, lock_word)
                for _ in range(3):
                    p = mem + rnd.randrange(NLOCS)
                    if rnd.random() < 0.5:
                        rsan.store_8(p, i, rlx, 0)
                    else:
                        rsan.load_8(p, rlx, 0)
                lib.rsan_sync_release(me, lock_word)
            if rnd.random() < 0.1:
                rsan.fence(ORDERS["sc"], 0, 0)

    _run_threads(rt, body)
    assert lib.__rsan_test_report_count() == 0
