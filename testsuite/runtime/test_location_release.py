"""Record slabs given back to the system (runtime/src/location_slab.c, docs/design/clocks.md
§25): a slab whose records are all free (and not the one its class hands out next) is dropped
with MADV_DONTNEED once its class keeps enough free records besides it (here: none, the test
hook); its pages read as zero, which a stale reader rejects, and it is reused, its records
cleared again, before any new slab is made. Reports and values stay what they were."""
import ctypes
import random
import re
import threading

import cffi
import pytest

import intercept_build as ib
from harness import ORDERS, build_engine_lib

FULL, NOW, COLD, COMPACT = 0, 1, 2, 3
PAGE = 4096

_ffi = cffi.FFI()
_ffi.cdef("""
uint32_t __rsan_test_lslab_keep(uint32_t n);
uint64_t __rsan_test_lslab_released(void);
uint64_t __rsan_test_location_copy(const void *addr, void *buf);
""")
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)


def hooks():
    return _ffi.dlopen(str(build_engine_lib()))  # the library the harness loaded: one state


def resident(addr):
    vec = ctypes.create_string_buffer(1)
    assert _libc.mincore(ctypes.c_void_p(addr & ~(PAGE - 1)), PAGE, vec) == 0
    return vec.raw[0] & 1


def record_of(rt, p):
    buf = _ffi.new("char[384]")
    r = hooks().__rsan_test_location_copy(_ffi.cast("void *", int(rt.ffi.cast("uintptr_t", p))), buf)
    assert r
    return r & ~63, r & 63


@pytest.fixture
def released_at_once(rt):
    """(hooks, main's thread, current): every slab whose records are all free is given back at
    once (no class keeps one for reuse) until the test ends."""
    h = hooks()
    old_keep = h.__rsan_test_lslab_keep(0)
    main = rt.lib.__rsan_test_new_thread(rt.ffi.NULL)
    rt.lib.__rsan_test_set_current(main)
    yield h, main
    h.__rsan_test_lslab_keep(old_keep)


def test_free_slabs_are_dropped_and_reused_cleared(rt, released_at_once):
    """Locations written relaxed (class NOW) and with release (FULL), freed together: their
    slabs but each class's newest are dropped (not resident), and new locations reuse them:
    the right class, stamp 1 after one write, each its own value, no report. Mutants: no
    madvise (still resident); a reused record not given its class again (a NOW slab's zero
    record taken for a FULL one: the run crashes)."""
    ffi, lib = rt.ffi, rt.lib
    h, _ = released_at_once
    N = 400
    a = ffi.new("uint32_t[%d]" % (2 * N))
    for i in range(N):
        rt.store(a + 2 * i, i + 1, "rel" if i % 2 else "rlx")
    recs = [record_of(rt, a + 2 * i) for i in range(N)]
    assert {c for _, c in recs} == {NOW, FULL}
    before = h.__rsan_test_lslab_released()
    lib.rsan_memory_retire(a, 8 * N)
    dropped = h.__rsan_test_lslab_released() - before
    # 200 FULL records: 6 whole slabs of 32, 200 NOW: 3 of 64 (the newest of each kept)
    assert dropped >= 5 * 32 * 384 + 2 * 64 * 320
    gone = {addr & ~(PAGE - 1) for addr, _ in recs if not resident(addr)}
    assert len(gone) * PAGE >= dropped - 2 * PAGE  # (a slab's edge pages may hold others)
    b = ffi.new("uint32_t[%d]" % (2 * N))
    for i in range(N):
        rt.store(b + 2 * i, 1000 + i, "rel" if i % 2 else "rlx")
    assert h.__rsan_test_lslab_released() < before + dropped  # reused before new slabs
    for i in range(N):
        p = b + 2 * i
        assert lib.__rsan_test_location_class(p) == (FULL if i % 2 else NOW)
        assert lib.__rsan_test_location_stamp(p) == 1
        assert rt.load(p, "acq") == 1000 + i
    addrs = [record_of(rt, b + 2 * i)[0] for i in range(N)]
    assert len(set(addrs)) == N
    assert rt.reports() == []


def test_pages_of_free_records_are_dropped_alone(rt, released_at_once):
    """Of 640 locations written relaxed (class NOW: slabs of 64 records on five pages), every
    32nd stays and the rest are freed: the pages that hold only free records are dropped while
    their slabs stay in use; every survivor's record is byte for byte what it was (a page
    dropped under a live record, or a record that straddles into it, would zero part of it)
    and resident; new locations made after are of the right class with stamp 1 (a dropped
    record left on the free list would be handed out zero); once the survivors go too, their
    slabs are released whole. Mutants: a page's records taken as free although one is live
    (the straddling one: a survivor's bytes change); dropped records left on the free list
    (a new location's record is not cleared: wrong class or a crash)."""
    ffi, lib = rt.ffi, rt.lib
    h, _ = released_at_once
    N, KEEP = 640, 32
    a = ffi.new("uint32_t[%d]" % (2 * N))
    for i in range(N):
        rt.store(a + 2 * i, i + 1, "rlx")
    assert all(lib.__rsan_test_location_class(a + 2 * i) == NOW for i in range(N))

    def copy(i):
        buf = _ffi.new("char[384]")
        r = h.__rsan_test_location_copy(_ffi.cast("void *", int(ffi.cast("uintptr_t", a + 2 * i))), buf)
        return r, bytes(_ffi.buffer(buf, 320))

    kept = {i: copy(i) for i in range(0, N, KEEP)}
    before = h.__rsan_test_lslab_released()
    for i in range(N):
        if i % KEEP:
            lib.rsan_memory_retire(a + 2 * i, 4)
    dropped = h.__rsan_test_lslab_released() - before
    assert dropped >= 8 * PAGE  # about two pages of five in each slab of 64
    for i, (r, raw) in kept.items():
        assert copy(i) == (r, raw)
        assert resident(r & ~63)
        assert rt.load(a + 2 * i, "acq") == i + 1
    b = ffi.new("uint32_t[%d]" % (2 * N))
    for i in range(N):
        rt.store(b + 2 * i, 7, "rlx")
    for i in range(N):
        assert lib.__rsan_test_location_class(b + 2 * i) == NOW
        assert lib.__rsan_test_location_stamp(b + 2 * i) == 1
    lib.rsan_memory_retire(b, 8 * N)
    mid = h.__rsan_test_lslab_released()
    lib.rsan_memory_retire(a, 8 * N)
    assert h.__rsan_test_lslab_released() > mid  # the survivors' slabs, whole
    assert rt.reports() == []


def test_stale_readers_across_releases(rt, released_at_once):
    """Threads make and free locations in their own blocks while others load from every block
    (their lookups may hold pointers to records that are freed, dropped and reused
    meanwhile): nothing crashes or hangs, and each owner's locations, new each round and
    written once, have stamp 1 (a record shared by two locations, or state left from a
    dropped slab, shows another). A smoke test of the concurrent paths (which interleavings
    it meets is up to the machine); mutant caught: the locks taken for the drop never given
    up (no madvise: a looker hangs)."""
    ffi, lib = rt.ffi, rt.lib
    h, main = released_at_once
    NT, NB, ROUNDS = 4, 96, 30
    blocks = [ffi.new("uint64_t[%d]" % NB) for _ in range(NT)]
    errors = []
    states = [lib.rsan_thread_create(main) for _ in range(2 * NT)]
    rlx, add = ORDERS["rlx"], 0

    def owner(k):
        blk = blocks[k]
        for r in range(ROUNDS):
            for i in range(NB):
                lib.__rsan_rmw_8(blk + i, r + 1, add, rlx, 0)  # a counter: 1, 3, 6, ...
            for i in range(NB):  # a new location each round, written once: stamp 1
                if lib.__rsan_test_location_stamp(blk + i) != 1:
                    errors.append((k, r, i))
            lib.rsan_memory_retire(blk, 8 * NB)
            for i in range(NB):
                blk[i] = 0  # the next round's locations start from 0 again

    def looker(k):
        rnd = random.Random(k)
        for _ in range(ROUNDS * NB):
            blk = blocks[rnd.randrange(NT)]
            lib.__rsan_load_8(blk + rnd.randrange(NB), rlx, 0)

    def wrap(k, body):
        try:
            lib.rsan_thread_start(states[k])
            body(k % NT)
            lib.rsan_thread_finish(states[k], ffi.NULL, ffi.NULL)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=wrap, args=(k, owner if k < NT else looker)) for k in range(2 * NT)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in ts), "a thread hung"
    lib.__rsan_test_set_current(main)
    for s in states:
        lib.rsan_thread_join(main, s)
    assert errors == []
    assert h.__rsan_test_lslab_released() > 0



def test_fork_meets_slabs_given_back(tmp_path):
    """fork while other threads make, promote and free records, slabs and pages given back at
    once (fork_released.c): the fork handler takes every record's lock, a given-back one's
    too, and gives the pages back again after; every child frees old blocks and makes new
    locations (reusing given-back slabs) and exits 0, and the parent's census shows slabs
    given back. Mutant: fork_unlock leaving a given-back slab's record locks held instead of
    dropping its pages again (the next reuse of that slab waits forever: timeout)."""
    cc = ib.find_compiler("clang-22")
    if cc is None:
        pytest.skip("clang-22 not installed")
    rt = ib.build_runtime(cc, tmp_path / "rt")
    exe = ib.build_program(cc, ib.PROGRAMS / "fork_released.c", rt, tmp_path)
    result = ib.run_program(exe, [], tmp_path, timeout=300, extra_options="report_races=0:verbosity=1")
    assert result.returncode == 0, result.describe()
    released = re.search(r"location records released: \d+ bytes now \(slabs released (\d+) times", result.stderr)
    assert released and int(released.group(1)) > 0, result.describe()  # (the parent's census)
