"""The runtime's size classes (runtime/src/alloc.c, docs/design/clocks.md §20, §22): a
location's history ring, evicted-fact table and race clock S_x come from per-size slabs with
free lists, so a young location's first operations call no malloc. Each block is zeroed and
aligned, a released block is reused by the next allocation of its class only (history rings,
64 to 512 bytes, come from a buddy system whose free blocks merge and split instead), and a
location's blocks go back to their classes when it is retired (memory does not grow over
rounds)."""
import random

import pytest

SIZES = [1, 8, 16, 17, 32, 40, 48, 64, 65, 100, 128, 129, 160, 161, 192, 256, 320, 352, 384, 448, 512]
CLS_160 = 3 + 512 // 64  # alloc.c SLAB_160: 129 .. 160 bytes (a narrow evicted-fact table's)


def _cls(n):  # alloc.c slab_cls
    if 128 < n <= 160:
        return CLS_160
    return (n + 15) // 16 - 1 if n <= 48 else 2 + (n + 63) // 64


def _size(n):  # alloc.c slab_size of n's class
    c = _cls(n)
    return 160 if c == CLS_160 else 16 * (c + 1) if n <= 48 else 64 * (c - 2)


def _buddy(n):  # alloc.c buddy_order >= 0: 64, 128, 256, 512 bytes
    lines = (n + 63) // 64
    return n > 48 and lines & (lines - 1) == 0


def test_blocks_are_zeroed_aligned_and_reused_by_their_class_only(rt):
    ffi, lib = rt.ffi, rt.lib
    rt.reset("")
    held = {}
    for n in SIZES:
        p = lib.__rsan_test_slab_alloc(n)
        addr = int(ffi.cast("uintptr_t", p))
        assert addr % (32 if _cls(n) == CLS_160 else 64 if n >= 64 else 16) == 0, n
        size = _size(n)
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


def _drain_top(lib, held):
    """takes 512-byte blocks until one is new memory (the buddy system's top free list empty)"""
    before = lib.__rsan_test_slab_bytes()
    while lib.__rsan_test_slab_bytes() == before:
        held.append(lib.__rsan_test_ring_alloc(512))


def test_a_ring_left_behind_becomes_a_ring_of_another_length(rt):
    """The buddy system (alloc.c, docs/design/clocks.md §22): 4096 rings of one entry (64
    bytes) carved from new 512-byte blocks, all released, merge back into those whole blocks
    (but for at most buddy_keep / 2 = 8 pairs per order left unmerged, the mark set to 16 here:
    24 blocks of 512), which
    the next 8-entry rings (512 bytes) then get without a byte of new memory; and the same
    with 2- and 4-entry rings. Mutant caught: buddy_release pushing the block without merging
    (the 512-byte free list does not grow, the 8-entry rings take new memory)."""
    ffi, lib = rt.ffi, rt.lib
    rt.reset("")
    keep = lib.__rsan_test_buddy_keep(16)
    try:
        _rings_merge(ffi, lib)
    finally:
        lib.__rsan_test_buddy_keep(keep)


def _rings_merge(ffi, lib):
    for small in (64, 128, 256):
        keep = []
        _drain_top(lib, keep)
        top0 = lib.__rsan_test_buddy_free_bytes(512)
        b0 = lib.__rsan_test_slab_bytes()
        rings = [lib.__rsan_test_ring_alloc(small) for _ in range(4096)]
        grown = lib.__rsan_test_slab_bytes() - b0
        for p in rings:
            lib.__rsan_test_ring_free(p, small)
        # every block split for them is whole again (and more, when free halves of older
        # blocks were used and merged too)
        whole = lib.__rsan_test_buddy_free_bytes(512) - top0
        assert whole >= grown - 24 * 512 and grown >= 64 * 512, (small, whole, grown)
        b1 = lib.__rsan_test_slab_bytes()
        addrs = {int(ffi.cast("uintptr_t", p)) for p in rings}
        bases = {a & ~511 for a in addrs}
        big = [lib.__rsan_test_ring_alloc(512) for _ in range(whole // 512)]
        assert lib.__rsan_test_slab_bytes() == b1, small  # no new memory
        assert {int(ffi.cast("uintptr_t", p)) for p in big} <= bases | {a & ~511 for a in addrs}
        for p in big + keep:
            lib.__rsan_test_ring_free(p, 512)


def test_buddy_blocks_never_overlap_and_keep_their_contents(rt):
    """Random allocations and releases of 64..512-byte blocks (rings of every buddy order, and
    other classes' line sizes beside them), each live block filled with its own byte: at every step
    no two live blocks overlap, each is aligned to its size's power of 2 and zeroed when
    handed out, and every live block still holds its byte. Mutants caught: a merge that does
    not test the buddy's free bit (two live blocks overlap), the bit left set by
    buddy_unlink (a live block merged into a free one), the buddy found at p ^ (32 << k)."""
    ffi, lib = rt.ffi, rt.lib
    rt.reset("")
    rng = random.Random(22)
    sizes = [64, 128, 192, 256, 320, 512]
    live = {}  # addr -> (ptr, size, byte)
    for step in range(3000):
        if live and (rng.random() < 0.45 or len(live) > 400):
            a = rng.choice(list(live))
            p, n, byte = live.pop(a)
            assert bytes(ffi.buffer(p, n)) == bytes([byte]) * n, (step, n)
            (lib.__rsan_test_ring_free if _buddy(n) else lib.__rsan_test_slab_free)(p, n)
            continue
        n = rng.choice(sizes)
        p = (lib.__rsan_test_ring_alloc if _buddy(n) else lib.__rsan_test_slab_alloc)(n)
        a = int(ffi.cast("uintptr_t", p))
        assert bytes(ffi.buffer(p, n)) == bytes(n), (step, n)
        if _buddy(n):
            assert a % n == 0, (step, n)
        for b, (_, m, _) in live.items():
            assert a + n <= b or b + m <= a, (step, n, m)
        byte = step % 255 + 1
        ffi.memmove(p, bytes([byte]) * n, n)
        live[a] = (p, n, byte)
    for p, n, byte in live.values():
        assert bytes(ffi.buffer(p, n)) == bytes([byte]) * n
        (lib.__rsan_test_ring_free if _buddy(n) else lib.__rsan_test_slab_free)(p, n)
