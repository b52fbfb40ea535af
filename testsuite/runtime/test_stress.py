"""64 real threads (cffi calls release the GIL) over more than 100,000 distinct locations:
no crash, no lost update, memory values consistent, the location table sees every address."""
import threading

from harness import ORDERS, RMW_OPS

NTHREADS = 64
FRESH = 1600     # read-only locations per thread (64 * 1600 = 102,400)
PRIVATE = 16     # locations each thread updates
ITERS = 8
SHARED = 32      # locations every thread updates


def test_64_threads_over_100k_locations(rt):
    ffi, lib = rt.ffi, rt.lib
    rsan = rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    shared = ffi.new("uint64_t[%d]" % SHARED)
    counter = ffi.new("uint32_t *")
    threads = [lib.rsan_thread_create(main) for _ in range(NTHREADS)]
    fresh = [ffi.new("uint32_t[%d]" % FRESH) for _ in range(NTHREADS)]
    for k in range(NTHREADS):
        for i in range(FRESH):
            fresh[k][i] = k * 100000 + i
    private = [ffi.new("uint64_t[%d]" % PRIVATE) for _ in range(NTHREADS)]
    errors = []
    add, rlx, acq_rel = RMW_OPS.index("add"), ORDERS["rlx"], ORDERS["ar"]

    def body(k):
        try:
            lib.rsan_thread_start(threads[k])
            f = fresh[k]
            load4, rmw8, rmw4 = rsan.load_4, rsan.rmw_8, rsan.rmw_4
            for i in range(FRESH):
                v = load4(f + i, rlx, 0)
                if v != k * 100000 + i:
                    errors.append(("fresh", k, i, v))
            p = private[k]
            for _ in range(ITERS):
                for i in range(PRIVATE):
                    rmw8(p + i, 1, add, rlx, 0)
            for i in range(SHARED):
                rmw8(shared + (i + k) % SHARED, 1, add, acq_rel, 0)
            rmw4(counter, 1, add, rlx, 0)
            lib.rsan_thread_finish(threads[k], ffi.NULL, ffi.NULL)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=body, args=(k,)) for k in range(NTHREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    rsan.test_set_current(main)
    for t in threads:
        lib.rsan_thread_join(main, t)
    assert errors == []
    assert counter[0] == NTHREADS
    assert [shared[i] for i in range(SHARED)] == [NTHREADS] * SHARED
    assert all(private[k][i] == ITERS for k in range(NTHREADS) for i in range(PRIVATE))
    n = lib.__rsan_test_location_count()
    assert n == NTHREADS * (FRESH + PRIVATE) + SHARED + 1
    assert n >= 100_000
    # ids are unique per address
    ids = {lib.__rsan_test_location_id(fresh[k] + i) for k in range(0, NTHREADS, 7) for i in range(0, FRESH, 13)}
    assert 0 not in ids and len(ids) == len(range(0, NTHREADS, 7)) * len(range(0, FRESH, 13))
    # after the joins main knows every write: reading the shared locations is robust
    before = lib.__rsan_test_report_count()
    for i in range(SHARED):
        assert rsan.load_8(shared + i, rlx, 0) == NTHREADS
    assert lib.__rsan_test_report_count() == before
