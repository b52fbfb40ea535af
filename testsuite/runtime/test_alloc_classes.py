"""The runtime's size classes (runtime/src/alloc.c, docs/design/clocks.md §20): a location's
history ring, evicted-fact table and race clock S_x come from per-size slabs with free lists,
so a young location's first operations call no malloc. Each block is zeroed and aligned, a
released block is reused by the next allocation of its class only, and a location's blocks
go back to their classes when it is retired (memory does not grow over rounds)."""
import pytest

SIZES = [1, 8, 16, 17, 32, 40, 48, 64, 65, 100, 128, 192, 256, 320, 352, 384, 448, 512]


def _cls(n):  # alloc.c slab_cls
    return (n + 15) // 16 - 1 if n <= 48 else 2 + (n + 63) // 64


def test_blocks_are_zeroed_aligned_and_reused_by_their_class_only(rt):
    ffi, lib = rt.ffi, rt.lib
    rt.reset("")
    held = {}
    for n in SIZES:
        p = lib.__rsan_test_slab_alloc(n)
        addr = int(ffi.cast("uintptr_t", p))
        assert addr % (64 if n >= 64 else 16) == 0, n
        size = 16 * (_cls(n) + 1) if n <= 48 else 64 * (_cls(n) - 2)
        assert size >= n
        assert bytes(ffi.buffer(p, size)) == bytes(size), n  # zeroed
        ffi.memmove(p, b"\xff" * size, size)
        held[n] = (p, addr, size)
    for n in SIZES:  # released, then the same class gets it back, zeroed; no other class does
        p, addr, size = held[n]
        lib.__rsan_test_slab_free(p, n)
        for m in SIZES:
            if _cls(m) != _cls(n):
                q = lib.__rsan_test_slab_alloc(m)
                assert int(ffi.cast("uintptr_t", q)) != addr, (n, m)
                lib.__rsan_test_slab_free(q, m)
        same = [m for m in SIZES if _cls(m) == _cls(n)][-1]  # the largest size of the class
        q = lib.__rsan_test_slab_alloc(same)
        assert int(ffi.cast("uintptr_t", q)) == addr, (n, same)
        assert bytes(ffi.buffer(q, size)) == bytes(size), n
        lib.__rsan_test_slab_free(q, same)


@pytest.mark.parametrize("writes", [1, 3, 8, 20])
def test_a_retired_location_gives_its_blocks_back(rt, writes):
    """Rounds of N locations written `writes` times by 6 threads (rings of 1 to 8 entries, an
    evicted-fact table from the fifth fact on, S_x) then retired: after the first round the
    next rounds take every block from the free lists (no chunk more), and each round's
    histories hold exactly its writes (the ring keeps them at their indices through its
    growths: a write's value is what the reports name)."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    rt.reset("")
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    ths = [lib.rsan_thread_create(main) for _ in range(6)]
    N = 128
    a = ffi.new("uint32_t[%d]" % (2 * N))
    after = []
    for rnd in range(4):
        for w in range(writes):
            rsan.test_set_current(ths[w % len(ths)])
            for i in range(N):
                rt.store(a + 2 * i, 100 * rnd + w + 1, "rel" if w % 2 else "rlx")
                rt.load(a + 2 * i, "acq")
        for i in range(N):  # write w (value 100 rnd + w + 1) in entry w % 8, the newest kept
            ring = [lib.__rsan_test_history_value(a + 2 * i, e) for e in range(8)]
            want = [-1] * 8
            for w in range(writes):
                want[w % 8] = 100 * rnd + w + 1
            assert ring == want, (rnd, i)
        for i in range(0, N, 97):
            assert lib.__rsan_test_location_stamp(a + 2 * i) == writes
            assert rt.load(a + 2 * i, "acq") == 100 * rnd + writes
        lib.rsan_memory_retire(a, 8 * N)
        after.append(lib.__rsan_test_slab_bytes())
    assert after[0] > 0
    assert after[1] == after[2] == after[3], after
    assert rt.reports() == []
