"""Overflow blocks are taken in order (docs/design/races.md §13): the blocks of the granules that
crowd are the first ones of the static array, so that a program backs the pages of the blocks it
uses and no others, and which granules get a block is what it was when blocks sat by hash. The
test reads the granules' main cells (shadow.c `rsan_shadow_cells`) and the count of blocks taken
(race_overflow.c `rsan_race_ovf_taken`) from the engine library."""
import ctypes

from harness import build_engine_lib
from test_race_rules import setup

NLOADERS = 6  # more atomic readers than a granule's 4 cells: the granule is marked
NGRANULES = 12
MARK_TID, TID_SHIFT, CLOCK_SHIFT, OVF_SLOTS = 0xFFFF, 10, 26, 4096


def engine_symbols():
    lib = ctypes.CDLL(str(build_engine_lib()))  # the library the engine fixture loaded
    cells = lib.rsan_shadow_cells
    cells.restype, cells.argtypes = ctypes.POINTER(ctypes.c_uint64), [ctypes.c_uint64]
    return cells, ctypes.c_uint32.in_dll(lib, "rsan_race_ovf_taken")


def mark_index(cells, addr):
    """The block index of the mark among the main cells of addr's granule (None: no mark)."""
    c = cells(addr)
    for i in range(4):
        if (c[i] >> TID_SHIFT) & 0xFFFF == MARK_TID:
            return (c[i] >> CLOCK_SHIFT) % OVF_SLOTS
    return None


def test_crowded_granules_take_the_first_blocks_in_order(rt):
    """Twelve granules, each crowded by six threads' atomic loads (two more than its cells), take
    one block each: their marks name distinct blocks below the count of blocks taken, which grew
    by one for each granule that had no block yet, and a plain write unordered with the loads is
    still a race on each (the block's cells are checked). Fails if a block is placed at its
    granule's hash slot (the layout of session 13: indices spread over the 4,096 blocks, above
    the count) or if two granules share a block."""
    cells, taken = engine_symbols()
    names = tuple(f"x{i}" for i in range(NGRANULES))
    th, xs = setup(rt, nvars=names)
    loaders = [th.spawn() for _ in range(NLOADERS)]
    writer = th.spawn()
    before = taken.value
    for k, x in enumerate(xs):
        for i, t in enumerate(loaders):
            th.on(t)
            rt.load(x, "rlx", site=rt.site("ld", 100 * k + i, f"t{i}"), size=8)
    after = taken.value
    idx = [mark_index(cells, int(rt.ffi.cast("uintptr_t", x))) for x in xs]
    assert None not in idx
    assert len(set(idx)) == NGRANULES
    # a granule at an address that an earlier test of this process crowded has its block again
    # (a block stays its granule's): below `before`; every other one took the next block
    assert all(i < after for i in idx), (before, after, idx)
    assert after - before == sum(i >= before for i in idx)
    assert rt.races() == []
    th.on(writer)
    for k, x in enumerate(xs):
        rt.write(x, site=rt.site("write", 5000 + k, "w"), size=8)
    assert sorted(r["access"]["line"] for r in rt.races()) == [5000 + k for k in range(NGRANULES)]


def ovf_hash(g):
    """race_overflow.c ovf_hash: where a granule's probe sequence starts."""
    return (((g >> 3) * 0x9E3779B97F4A7C15) % (1 << 64) >> 52) % OVF_SLOTS


def test_granules_whose_probes_collide_take_distinct_blocks(rt):
    """Three granules of one buffer whose probe sequences start at the same table slot, each
    crowded by six threads' atomic loads: each takes a block of its own (the second and third
    probe past the slots the first ones took), and a plain write unordered with the loads is a
    race on each, with one of that granule's loads. Fails if a lookup takes the block of an
    occupied slot without comparing its granule (the three granules share one block)."""
    cells, taken = engine_symbols()
    th, _ = setup(rt, nvars=("unused",))
    n = 1 << 17  # 1 MB: about 32 granules per table slot
    buf = rt.ffi.new(f"uint64_t[{n}]")
    rt._keep.append(buf)
    base = int(rt.ffi.cast("uintptr_t", buf))
    want = ovf_hash(base)
    picks = [i for i in range(n) if ovf_hash(base + 8 * i) == want][:3]
    assert len(picks) == 3
    loaders = [th.spawn() for _ in range(NLOADERS)]
    writer = th.spawn()
    for k, i in enumerate(picks):
        for j, t in enumerate(loaders):
            th.on(t)
            rt.load(buf + i, "rlx", site=rt.site("ld", 100 * k + j, f"t{j}"), size=8)
    idx = [mark_index(cells, base + 8 * i) for i in picks]
    assert None not in idx and len(set(idx)) == 3, idx
    assert all(i < taken.value for i in idx)
    assert rt.races() == []
    th.on(writer)
    for k, i in enumerate(picks):
        rt.write(buf + i, site=rt.site("write", 5000 + k, "w"), size=8)
    got = sorted((r["access"]["line"], r["previous"]["line"] // 100) for r in rt.races())
    assert got == [(5000 + k, k) for k in range(3)], got


LANE_SLOTS, LANE_BYTES = 32, 32  # rsan_race.h: slots 0..31's lanes in rsan_race_lanes[slot][block]


def test_a_slots_lanes_of_blocks_taken_in_turn_are_neighbours(rt):
    """Slot u's lane in block i is rsan_race_lanes[u][i] (docs/design/races.md §15): the lanes of
    one thread in the blocks of granules that crowd one after the other sit side by side, two to
    a line, and no line holds two threads' lanes. Twelve granules crowded in turn by six loaders:
    each loader that took a lane in granule k (its read cell, its slot, in the lane) has it at
    rsan_race_lanes[its slot][block of k], and nowhere else in the block's column; the blocks
    are consecutive, so its twelve lanes are consecutive 32-byte entries. Fails if the lanes are
    laid out by block (session 13: a block's 32 lanes together, a thread's lanes of two granules
    1,600 bytes apart) or a lane's index is not its block's."""
    cells, taken = engine_symbols()
    lib = ctypes.CDLL(str(build_engine_lib()))
    lanes = ctypes.addressof(ctypes.c_uint64.in_dll(lib, "rsan_race_lanes"))

    def lane_read(u, i):  # the read cell ([0]) of slot u's lane in block i
        return ctypes.c_uint64.from_address(lanes + (u * OVF_SLOTS + i) * LANE_BYTES).value

    names = tuple(f"y{i}" for i in range(NGRANULES))
    th, xs = setup(rt, nvars=names)
    loaders = [th.spawn() for _ in range(NLOADERS)]
    for k, x in enumerate(xs):
        for i, t in enumerate(loaders):
            th.on(t)
            rt.load(x, "rlx", site=rt.site("ld", 100 * k + i, f"t{i}"), size=8)
    idx = [mark_index(cells, int(rt.ffi.cast("uintptr_t", x))) for x in xs]
    assert None not in idx and len(set(idx)) == NGRANULES
    for i in idx:
        in_lanes = 0
        for u in range(LANE_SLOTS):
            w = lane_read(u, i)
            if w:
                assert (w >> TID_SHIFT) & 0xFFFF == u, (i, u, hex(w))  # the slot's own lane
                in_lanes += 1
        assert in_lanes >= 1, i  # six loaders, four main cells and the block's: some are in lanes
    assert rt.races() == []
