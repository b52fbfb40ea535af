"""The record lines an atomic operation asks for (runtime/src/rsan_location.h
rsan_loc_prefetch_early / rsan_loc_prefetch_lines, docs/design/clocks.md §23): every line of the
location record that an operation writes must be one it asked for with ownership (the lock's
line 0, the early lines before the lock, and a write's late lines after it), so that no store
finds out a line another core holds only when it is made. Checked by copying the live record
before and after each operation of random programs (many threads: windows that evict, shared
clocks; release fences: full records; spins: re-reads) and comparing it line by line."""
import random

import cffi
import pytest

from harness import build_engine_lib

FULL, NOW, COLD, COMPACT = 0, 1, 2, 3  # rsan_location.h RSAN_LOC_*
SIZE = {FULL: 384, NOW: 320, COLD: 256, COMPACT: 128}

CDEF = """
uint64_t __rsan_test_location_copy(const void *addr, void *buf);
unsigned __rsan_test_location_lines(int cls, int wr);
"""


@pytest.fixture(scope="module")
def hooks():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    return ffi, ffi.dlopen(str(build_engine_lib()))  # the engine's library (loaded once)


def copy(hooks, p):
    ffi, lib = hooks
    buf = ffi.new("uint8_t[384]")
    r = lib.__rsan_test_location_copy(p, buf)
    return (r, bytes(ffi.buffer(buf, SIZE[r & 63]))) if r else (0, b"")


def owned(hooks, cls, wr):
    """Lines the operation holds for ownership: the lock's, the early ones, a write's late ones."""
    m = hooks[1].__rsan_test_location_lines(cls, wr)
    return 1 | (m & 0xFF) | ((m >> 8) if wr else 0)


def test_the_masks_are_the_design():
    """Before the lock lines 1-3 (and 4 for a write); after it what the class has beyond them:
    W for a full record, Wsc too for a load; nothing that a class does not have."""
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    lib = ffi.dlopen(str(build_engine_lib()))
    want = {(FULL, 0): (0x0E, 0x30), (FULL, 1): (0x1E, 0x20), (NOW, 0): (0x0E, 0x10), (NOW, 1): (0x1E, 0),
            (COLD, 0): (0x0E, 0), (COLD, 1): (0x1E, 0), (COMPACT, 0): (0x0E, 0), (COMPACT, 1): (0x1E, 0)}
    for (cls, wr), (early, late) in want.items():
        m = lib.__rsan_test_location_lines(cls, wr)
        assert (m & 0xFF, m >> 8) == (early, late), (cls, wr)
        assert late < 1 << (SIZE[cls] // 64), (cls, wr)  # lines the class has


def changed_lines(a, b):
    return {i // 64 for i in range(0, len(a), 64) if a[i:i + 64] != b[i:i + 64]}


@pytest.mark.parametrize("seed", range(6))
def test_every_line_an_operation_writes_was_asked_for_with_ownership(rt, hooks, seed):
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    rng = random.Random(seed)
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    nthreads = [3, 5, 9, 12, 4, 8][seed]
    threads = [lib.rsan_thread_create(main) for _ in range(nthreads)]
    nlocs = 3
    mem = ffi.new("uint32_t[%d]" % (2 * nlocs))  # one location per 8-byte granule
    locs = [mem + 2 * k for k in range(nlocs)]
    orders = ["rlx", "acq", "rel", "ar", "sc"]
    checked = {}
    for step in range(900):
        t = rng.choice(threads)
        rsan.test_set_current(t)
        p = rng.choice(locs)
        kind = rng.choices(["ld", "st", "rmw", "cas", "fence", "spin"], [4, 3, 3, 2, 1, 2])[0]
        if kind == "fence":
            rt.fence(rng.choice(["acq", "rel", "sc"]))
            continue
        before = copy(hooks, p)
        wr = kind in ("st", "rmw", "cas")
        if kind == "ld":
            rt.load(p, rng.choice(["rlx", "acq", "sc"]))
        elif kind == "spin":  # re-reads of the same write
            for _ in range(3):
                rt.load(p, "acq")
        elif kind == "st":
            rt.store(p, rng.randrange(4), rng.choice(["rlx", "rel", "sc"]))
        elif kind == "rmw":
            rt.rmw(p, rng.choice(["add", "xchg", "or"]), 1, rng.choice(orders))
        else:
            rt.cas(p, rng.randrange(3), rng.randrange(3), rng.choice(orders), rng.choice(["rlx", "acq"]))
        after = copy(hooks, p)
        if not before[0] or before[0] != after[0]:
            continue  # made, promoted or made compact: another record (test_location_class.py)
        cls = before[0] & 63
        if cls == COMPACT:
            continue  # never operated on: expanded first
        lines = changed_lines(before[1], after[1])
        allowed = owned(hooks, cls, wr)
        stray = {i for i in lines if not allowed >> i & 1}
        assert not stray, (seed, step, kind, cls, sorted(lines), bin(allowed))
        for i in lines:
            checked[(kind, cls, i)] = checked.get((kind, cls, i), 0) + 1
    # the program reached the lines that matter: Wsc by writes, W by writes of full records,
    # the facts, Msc and line 3 by loads
    reached = {(k, c, i) for (k, c, i) in checked}
    assert any(k in ("st", "rmw", "cas") and i == 4 for k, c, i in reached)
    assert any(k == "ld" and i in (1, 2, 3) for k, c, i in reached)
    if seed % 2 == 0:
        assert any(c == FULL and i == 5 for k, c, i in reached), sorted(reached)
