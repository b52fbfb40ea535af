"""A thread's memos (runtime/src/clock.c, docs/design/clocks.md §16) are emptied whenever its
clocks are released or overwritten (rsan_thread_snaps_release: a thread's end, and every
restore of a closure state, docs/design/exploration.md §14), but only when one was written
since they were last emptied (memo_put, their single writer, sets memo_used): most programs
have at most RSAN_CLK_INLINE (6) thread slots, no shared snapshot and so no memo, and the
6 KiB memset at every restore was 5% of a closure search. A memo left behind by a release would
be wrong (a restored clock no longer contains the snapshot it remembers), so a release after a
memo was written must leave none."""
import cffi

from harness import build_engine_lib


def _memo_state(lib_path, t):
    ffi = cffi.FFI()
    ffi.cdef("uint64_t __rsan_test_memo_entries(const void *t, uint64_t *used);"
             "void __rsan_test_snaps_release(void *t);")
    lib = ffi.dlopen(str(lib_path))
    used = ffi.new("uint64_t *")
    n = lib.__rsan_test_memo_entries(t, used)
    return lib, n, used[0]


def test_a_release_empties_the_memos_a_wide_join_wrote(rt):
    """t2 acquires a release store of t1, whose clock (9 slots) is exported as a shared snapshot:
    t2's memos remember it. A release must empty them (mutant: memo_put not noting the write, so
    the release skips the memset: t2 keeps 3 entries)."""
    lib, ffi = rt.lib, rt.ffi
    x = rt.var("x")
    main = lib.__rsan_test_new_thread(ffi.NULL)
    pads = [lib.__rsan_test_new_thread(main) for _ in range(7)]
    t1, t2 = lib.__rsan_test_new_thread(main), lib.__rsan_test_new_thread(main)
    pv = [rt.var(f"p{i}") for i in range(len(pads))]
    for p, v in zip(pads, pv):  # every slot in t1's clock: an array, shared exports
        lib.__rsan_test_set_current(p)
        rt.store(v, 1, "rel")
        lib.__rsan_test_set_current(t1)
        rt.load(v, "acq")
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, "rel")
    lib.__rsan_test_set_current(t2)
    assert rt.load(x, "acq") == 1
    test, n, used = _memo_state(build_engine_lib(), t2)
    assert n > 0 and used == 1, (n, used)
    test.__rsan_test_snaps_release(t2)
    _, n, used = _memo_state(build_engine_lib(), t2)
    assert (n, used) == (0, 0)
    assert rt.load(x, "acq") == 1  # the whole join again, which remembers the snapshot again
    _, n, used = _memo_state(build_engine_lib(), t2)
    assert n > 0 and used == 1, (n, used)
    lib.__rsan_test_set_current(main)


def test_narrow_threads_write_no_memo(rt):
    """Three threads (4 slots with main): inline clocks, no shared snapshot, so no memo is
    written and a release leaves the memos alone (what makes the shortcut worth it)."""
    lib, ffi = rt.lib, rt.ffi
    x, y = rt.var("x"), rt.var("y")
    main = lib.__rsan_test_new_thread(ffi.NULL)
    ts = [lib.__rsan_test_new_thread(main) for _ in range(3)]
    for i, t in enumerate(ts):
        lib.__rsan_test_set_current(t)
        rt.store(x, i + 1, "rel")
        rt.load(y, "acq")
        rt.store(y, i + 1, "sc")
        rt.load(x, "sc")
    for t in ts:
        _, n, used = _memo_state(build_engine_lib(), t)
        assert (n, used) == (0, 0)
    lib.__rsan_test_set_current(main)
