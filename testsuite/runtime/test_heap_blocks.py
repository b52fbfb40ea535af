"""The live heap blocks that name a report's object (runtime/src/heap.c): the block containing
an address is found whatever its size and however many blocks live, and a freed one is gone.
The index never reads the memory it names, so the blocks here are addresses, not memory."""
from hypothesis import given, settings
from hypothesis import strategies as st

BASE = 0x7F0000000000

# small sizes, and sizes around and between the level boundaries of heap.c (2^(8 + 4k))
SIZES = st.one_of(st.integers(0, 300), st.sampled_from(
    [2 ** (8 + 4 * k) + d for k in range(5) for d in (-1, 0, 1)]
    + [3 * 2 ** (7 + 4 * k) for k in range(5)] + [2 ** (9 + 4 * k) - 1 for k in range(5)]))


def find(rt, addr):
    out = rt.ffi.new("rsan_block_info *")
    return (int(out.addr), int(out.size)) if rt.lib.rsan_heap_find(addr, out) else None


def containing(live, addr):
    hits = [(a, n) for a, n in live.items() if a <= addr < a + max(n, 1)]
    assert len(hits) <= 1
    return hits[0] if hits else None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2 ** 12), SIZES, st.booleans()), min_size=1, max_size=40),
       st.lists(st.integers(0, 2 ** 22), max_size=40))
def test_the_block_containing_an_address_is_found_at_every_size(engine, tmp_path_factory, plan, probes):
    from harness import Runtime
    ffi, lib = engine
    rt = Runtime(ffi, lib, tmp_path_factory.mktemp("heap"))
    rt.reset()
    try:
        live: dict[int, int] = {}
        cursor = BASE
        for gap, size, free_one in plan:
            if free_one and live:
                addr = sorted(live)[gap % len(live)]
                lib.rsan_heap_free(ffi.cast("void *", addr))
                del live[addr]
            cursor += 16 * (gap + 1)
            lib.rsan_heap_alloc(ffi.cast("void *", cursor), size)
            live[cursor] = size
            cursor += max(size, 1)
        edges = [a + d for a, n in live.items() for d in (-1, 0, max(n, 1) - 1, max(n, 1))]
        middles = [a + n // 2 + d for a, n in live.items() for d in (-1, 0, 1)]
        for addr in edges + middles + [BASE + p for p in probes]:
            assert find(rt, addr) == containing(live, addr), hex(addr)
    finally:
        lib.__rsan_test_reset()


def test_a_block_of_many_pages_is_found_far_from_its_start(rt):
    big = BASE + 0x123450
    rt.lib.rsan_heap_alloc(rt.ffi.cast("void *", big), 3 << 20)
    rt.lib.rsan_heap_alloc(rt.ffi.cast("void *", big + (3 << 20)), 24)
    assert find(rt, big + (3 << 20) - 1) == (big, 3 << 20)
    assert find(rt, big + (3 << 20) + 8) == (big + (3 << 20), 24)
    rt.lib.rsan_heap_free(rt.ffi.cast("void *", big))
    assert find(rt, big + 700_000) is None
