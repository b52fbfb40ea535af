"""The stores of an atomic write's hot path, byte for byte (docs/design/clocks.md §24, §28): the
history entry's fields (runtime/src/rsan_engine.h rsan_hist_record: stamps, value, the key's
index with the rmw bit, the thread; the key's site, stack and kind through the pool) and the
window's newest fact (rsan_location.h
rsan_loc_add_fact_i: slot and low timestamps as one store; the eviction's places) must be what
the fields say, read from the live record and its history ring after every write of random
programs (many threads on a few locations: full windows that evict, sparse and direct
evicted-fact tables, every size and order).

Mutants it fails on (checked by hand): rsan_hkey_kind's size at the wrong shift; the rmw bit
not stored; a fact's ts16/tsU16 swapped in the packed store; the eviction's
oldest fact taken one place off (the window then loses a fact: the newest facts of the record
no longer match the model below)."""
import random
import struct

import cffi
import pytest

from harness import ORDERS, RMW_OPS, build_engine_lib

OP_STORE, OP_RMW, OP_CAS_WEAK, OP_CAS_STRONG = 1, 2, 3, 4  # rsan_internal.h enum rsan_opkind
FCAP_INLINE = 4  # RSAN_FACTS
CDEF = """
uint64_t __rsan_test_location_copy(const void *addr, void *buf);
uint64_t __rsan_test_location_stamp(const void *addr);
"""


@pytest.fixture(scope="module")
def hooks():
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    return ffi, ffi.dlopen(str(build_engine_lib()))


def record(hooks, p):
    """(line 0's fields, the record's bytes) of p's live record"""
    ffi, lib = hooks
    buf = ffi.new("uint8_t[384]")
    r = lib.__rsan_test_location_copy(p, buf)
    assert r, "a written location has a record"
    b = bytes(ffi.buffer(buf, 384))
    fcap, cls = b[4], b[5]
    hist_next, = struct.unpack_from("<I", b, 12)
    stamp, stampU, nfacts, fold, hist = struct.unpack_from("<QQQQQ", b, 24)
    return dict(fcap=fcap, cls=cls, hist_next=hist_next, stamp=stamp, stampU=stampU, nfacts=nfacts,
                fold=fold, hist=hist), b


def newest_fact(hooks, f, b):
    """(epoch, slot, ts16, tsU16) of the window's newest fact (inline or grown window)"""
    return fact_at(hooks, f, b, f["nfacts"] - 1)


def fact_at(hooks, f, b, pos):
    """(epoch, slot, ts16, tsU16) of the window's fact number pos (nfacts counts them)"""
    ffi = hooks[0]
    i = pos & (f["fcap"] - 1)
    if f["fcap"] == FCAP_INLINE:
        raw = b[64 + 16 * i: 64 + 16 * i + 16]
    else:
        ext, = struct.unpack_from("<Q", b, 64)
        raw = bytes(ffi.buffer(ffi.cast("uint8_t *", ext + 16 * i), 16))
    return struct.unpack("<QIHH", raw)


def newest_evicted(hooks, b, slot):
    """(epoch, ts) of slot's newest evicted fact in the record's evicted-fact table, None if
    the slot has no entry (rsan_location.h rsan_evicted, or rsan_evicted32 in a narrow table,
    evlog 1; the sparse table's slots in evslot)"""
    ffi = hooks[0]
    evlog = b[11]
    ev, = struct.unpack_from("<Q", b, 208)
    if not ev:
        return None
    if evlog > 2:  # direct: entry slot
        i = slot if slot < 1 << evlog else None
    else:
        evslot = struct.unpack_from("<4H", b, 232)
        i = evslot.index(slot + 1) if slot + 1 in evslot else None
    if i is None:
        return None
    if evlog == 1:  # narrow: 32-byte entries, (first, first_ts), then h[2] of (epoch, ts, tsU)
        e = bytes(ffi.buffer(ffi.cast("uint8_t *", ev + 32 * i), 32))
        h = [struct.unpack_from("<II", e, 8 + 12 * k) for k in range(2)]
        if not h[0][0]:
            return None
        return h[1] if h[1][0] > h[0][0] else h[0]
    e = bytes(ffi.buffer(ffi.cast("uint8_t *", ev + 64 * i), 64))
    # the newest of the two remembered is the one with the larger epoch (epoch 0: unused)
    e0, e1 = struct.unpack_from("<Q", e, 16)[0], struct.unpack_from("<Q", e, 40)[0]
    if not e0:
        return None
    k = 1 if e1 > e0 else 0
    epoch, ts = struct.unpack_from("<QQ", e, 16 + 24 * k)
    return epoch, ts


def full_ts(stamp, low):
    return stamp - ((stamp - low) & 0xFFFF)


def hist_entry(hooks, f, k):
    """the 32 bytes of the entry of write k (k % RSAN_HIST in a ring of 8; its length is
    the smallest power of 2 >= max(hist_next, 2), and k < hist_next)"""
    ffi = hooks[0]
    return bytes(ffi.buffer(ffi.cast("uint8_t *", f["hist"] + 32 * (k % 8)), 32))


def hist_key(rt, key):
    """(site, stack, order, op, rmw_op, size) of the key the entry's key field names"""
    k = rt.ffi.new("rsan_hkey *")
    rt.lib.rsan_hist_key_get(key >> 1, k)
    kind = k.kind
    assert kind >> 32 == 0, "kind: 4 bytes"
    return k.site, list(k.stack), kind & 0xFF, (kind >> 8) & 0xFF, (kind >> 16) & 0xFF, (kind >> 24) & 0xFF


@pytest.mark.parametrize("seed", range(4))
def test_every_write_stores_its_entry_and_fact_as_the_fields_say(rt, hooks, seed):
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    rng = random.Random(seed)
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    nthreads = [3, 6, 10, 12][seed]
    threads = [lib.rsan_thread_create(main) for _ in range(nthreads)]
    slot_of = {}
    mem = ffi.new("uint64_t[6]")  # one location per 8-byte granule
    locs = [mem + k for k in range(3)]
    evicted = grown = checked_ev = direct = narrow = 0
    sites = [0] + [rt.site("st", 10 + i, f"w{i}") for i in range(3)]  # the keys' sites vary
    keys, srng = set(), random.Random(seed + 100)
    # (loads of writes their thread knows make no fact, docs/design/clocks.md §26: windows fill
    # more slowly, and seed 3 needs the longer run to reach a direct evicted-fact table)
    for step in range([1500, 1500, 3000, 30000][seed]):
        ti = rng.randrange(nthreads)
        t = threads[ti]
        rsan.test_set_current(t)
        p = rng.choice(locs)
        kind = rng.choices(["ld", "st", "rmw", "cas"], [3, 3, 3, 2])[0]
        size = rng.choice([4, 8])
        order = rng.choice(["rlx", "acq", "rel", "ar", "sc"])
        if kind == "ld":
            rt.load(p, rng.choice(["rlx", "acq", "sc"]), size=size)
            continue
        if kind == "cas":
            cur = rt.load(p, "rlx", size=size) if rng.random() < 0.7 else rng.randrange(4)
        before, bb = record(hooks, p) if hooks[1].__rsan_test_location_stamp(p) else (None, None)
        oldest = fact_at(hooks, before, bb, before["fold"]) if before and before["nfacts"] > before["fold"] else None
        site = srng.choice(sites)  # its own stream: the program's random choices as before
        if kind == "st":
            order = rng.choice(["rlx", "rel", "sc"])
            v = rng.randrange(1 << 40)
            rt.store(p, v, order, size=size, site=site)
            want = (OP_STORE, 0, 0, v & ((1 << 8 * size) - 1))
        elif kind == "rmw":
            op = rng.choice(["add", "xchg", "or"])
            old = rt.rmw(p, op, 3, order, size=size, site=site)
            m = (1 << 8 * size) - 1
            new = {"add": (old + 3) & m, "xchg": 3, "or": old | 3}[op]
            want = (OP_RMW, RMW_OPS.index(op), 1, new)
        else:
            weak = rng.random() < 0.3
            _, ok = rt.cas(p, cur, cur + 1, order, "rlx", weak, size=size, site=site)
            if not ok:
                continue
            want = (OP_CAS_WEAK if weak else OP_CAS_STRONG, 0, 1, (cur + 1) & ((1 << 8 * size) - 1))
        f, b = record(hooks, p)
        # the newest fact is this write's: the thread's slot, the record's low timestamps
        epoch, slot, ts16, tsU16 = newest_fact(hooks, f, b)
        assert (ts16, tsU16) == (f["stamp"] & 0xFFFF, f["stampU"] & 0xFFFF), (seed, step)
        assert slot_of.setdefault(ti, slot) == slot, (seed, step, "a thread's facts have its slot")
        assert f["nfacts"] - f["fold"] <= f["fcap"]
        if before is not None and before["fcap"] == f["fcap"] and before["nfacts"] - before["fold"] == f["fcap"]:
            evicted += 1  # a full window stays full, one fact evicted
            assert (f["nfacts"], f["fold"]) == (before["nfacts"] + 1, before["fold"] + 1), (seed, step)
            # the oldest fact left the window into its slot's entry, as its newest evicted fact
            oepoch, oslot, ots16, _ = oldest  # (read before the write: its place is the new fact's)
            got = newest_evicted(hooks, b, oslot)
            if got is not None:
                checked_ev += 1
                assert got == (oepoch, full_ts(f["stamp"], ots16)), (seed, step, got)
        grown += f["fcap"] > FCAP_INLINE
        direct += b[11] > 2  # evlog: a direct table (a window at RSAN_FACTS_MAX, many slots)
        narrow += b[11] == 1  # a narrow sparse table (every value below 2^32)
        # the entry of this write, every field and the padding
        e = hist_entry(hooks, f, f["hist_next"] - 1)
        ts, tsU, value, key, tid = struct.unpack_from("<QQQIi", e, 0)
        wop, wrmw_op, wrmw, wvalue = want
        assert (ts, tsU) == (f["stamp"], f["stampU"]), (seed, step)
        assert (value, tid, key & 1) == (wvalue, lib.rsan_thread_tid(t), wrmw), (seed, step)
        ksite, kstack, o, op, rmw_op, sz = hist_key(rt, key)
        assert ksite == site and kstack == [0] * 4, (seed, step)  # no frames
        assert (o, op, rmw_op, sz) == (ORDERS[order], wop, wrmw_op, size), (seed, step, kind)
        keys.add(key >> 1)
    assert evicted > 50 and checked_ev > 50, (evicted, checked_ev)  # full windows were reached
    assert narrow, "a narrow evicted-fact table was read"
    assert len(keys) > 20, len(keys)  # many (site, kind) keys, each named by its own index
    if nthreads >= 10:
        assert grown, "a grown window was reached"
    if seed == 3:
        assert direct, "a direct evicted-fact table was reached"
