"""The direct-mapped location table (runtime/src/location.c): exact addresses inside one
8-byte granule, retiring part of a granule, and lookups racing with retirement and reuse of
the same addresses (a reader holding a retired record must look again, never use it)."""
import threading

from harness import ORDERS, RMW_OPS


def test_byte_atomics_in_one_granule_are_distinct_locations(rt):
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    buf = ffi.new("uint8_t[16]")
    for i in range(8):
        lib.__rsan_store_1(buf + i, i + 1, ORDERS["rel"], 0)
    ids = [lib.__rsan_test_location_id(buf + i) for i in range(8)]
    assert 0 not in ids and len(set(ids)) == 8
    assert lib.__rsan_test_location_count() == 8
    for i in range(8):
        assert rsan.load_1(buf + i, ORDERS["acq"], 0) == i + 1
    # retiring bytes 2..5 leaves 0, 1, 6, 7 (same granule) with their ids
    lib.rsan_memory_retire(buf + 2, 4)
    after = [lib.__rsan_test_location_id(buf + i) for i in range(8)]
    assert after[2:6] == [0, 0, 0, 0]
    assert after[:2] == ids[:2] and after[6:] == ids[6:]
    assert lib.__rsan_test_location_count() == 4
    # a new location at a retired address gets a new id
    lib.__rsan_store_1(buf + 3, 9, ORDERS["rel"], 0)
    assert lib.__rsan_test_location_id(buf + 3) not in (0, ids[3])


def test_lookups_racing_with_retire_and_reuse_lose_no_update(rt):
    """Workers update shared counters while one thread keeps retiring and re-creating the
    locations of a neighbouring block in the same granules and pages: every update lands,
    and the table ends with exactly the live locations."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    N, ITERS, WORKERS, ROUNDS = 64, 300, 3, 200
    counters = ffi.new("uint32_t[%d]" % (2 * N))  # even slots: counters, odd: churned
    threads = [lib.rsan_thread_create(main) for _ in range(WORKERS + 1)]
    add, rlx = RMW_OPS.index("add"), ORDERS["rlx"]
    errors = []

    def worker(k):
        try:
            rsan.test_set_current(threads[k])
            for _ in range(ITERS):
                for i in range(0, 2 * N, 2):
                    lib.__rsan_rmw_4(counters + i, 1, add, rlx, 0)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def churner():
        try:
            rsan.test_set_current(threads[WORKERS])
            for r in range(ROUNDS):
                for i in range(1, 2 * N, 2):
                    lib.__rsan_store_4(counters + i, r, ORDERS["rel"], 0)
                for i in range(1, 2 * N, 2):
                    lib.rsan_memory_retire(counters + i, 4)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(WORKERS)]
    ts.append(threading.Thread(target=churner))
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert [counters[i] for i in range(0, 2 * N, 2)] == [WORKERS * ITERS] * N
    assert all(lib.__rsan_test_location_id(counters + i) == 0 for i in range(1, 2 * N, 2))
    assert lib.__rsan_test_location_count() == N
