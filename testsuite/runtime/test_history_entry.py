"""A write's history entry is 32 bytes, its site, call stack and kind in the key pool
(docs/design/clocks.md §28): a report prints every frame of the stale write's stack that it
printed before, whatever modules the frames come from (the write's own, one other, or more)."""
from __future__ import annotations

import pytest

from harness import ORDERS, PREFIX, RMW_OPS

OP_STORE, OP_RMW = 1, 2  # rsan_internal.h enum rsan_opkind


def other_module(rt, prefix: int, name: str, functions: list[str]) -> list[int]:
    """Registers a module with id prefix prefix and one call site per function (line 100 + i
    in name); returns their site ids."""
    ffi = rt.ffi
    n = len(functions)
    frames = ffi.new(f"rsan_frame[{n}]")
    sites = ffi.new(f"rsan_site[{n}]")
    mod = ffi.new("rsan_module *")
    rt._keep += [frames, sites, mod]
    for i, fn in enumerate(functions):
        frames[i].file, frames[i].function = rt._cstr(name), rt._cstr(fn)
        frames[i].line, frames[i].column = 100 + i, 7
        sites[i].kind, sites[i].order, sites[i].size, sites[i].nframes = 0, 0, 0, 1
        sites[i].frames = frames + i
    mod.abi_version, mod.nsites, mod.nglobals = 1, n, 0
    mod.id_prefix, mod.sites, mod.name = prefix, sites, rt._cstr(name)
    rt.rsan.register_module(mod)
    return [prefix | i for i in range(n)]


def stale_write_stack(rt, calls: list[int]) -> tuple[list, str]:
    """main stores x through the nested calls calls (outermost first), then SB's threads run:
    T2's load of x names main's store as the stale write (hb-latest). Returns the JSON frames
    of that write, (function, file, line), and the report's text."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    x, y = rt.var("x"), rt.var("y")
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    arr = ffi.new("uint64_t[]", calls or [0])
    lib.helper_chain_store(len(calls), arr, ffi.cast("uint32_t *", x), 5, rt.site("st", 9, "writer"))
    t1, t2 = lib.rsan_thread_create(main), lib.rsan_thread_create(main)
    rsan.test_set_current(t1)
    rt.store(x, 1, site=rt.site("st", 1, "t1"))
    rt.load(y, site=rt.site("ld", 2, "t1"))
    rsan.test_set_current(t2)
    rt.store(y, 1, site=rt.site("st", 3, "t2"))
    rt.load(x, site=rt.site("ld", 4, "t2"))
    (r,) = rt.reports()
    assert r["previous"]["thread"] == lib.rsan_thread_tid(main)
    return [(f["function"], f["file"], f["line"]) for f in r["previous"]["stack"]], r["text"]


def own(rt, fn: str, line: int) -> int:
    return rt.site("call", line, fn, size=0)


A, B, C, D = (0x1111AAAA00000000, 0x2222BBBB00000000, 0x3333CCCC00000000, 0x4444DDDD00000000)


@pytest.mark.parametrize("shape", [
    "own",            # every frame in the write's module: code 1
    "one_other",      # the write's module and one other: codes 1 and 2
    "other_only",     # every frame in one other module: code 2
    "three",          # the write's, A and B: the pool
    "four_others",    # A, B, C, D: the pool
    "deeper",         # 6 calls: the 4 innermost kept, as before
    "short",          # 2 calls: the rest of the stack empty
])
def test_the_stale_writes_stack_keeps_every_frame(rt, shape):
    a = other_module(rt, A, "/abs/a.c", ["a0", "a1"])
    b = other_module(rt, B, "/abs/b.c", ["b0"])
    c = other_module(rt, C, "/abs/c.c", ["c0"])
    d = other_module(rt, D, "/abs/d.c", ["d0"])
    m = [own(rt, f"m{i}", 20 + i) for i in range(6)]
    calls = {
        "own": m[:4],
        "one_other": [m[0], a[0], m[1], a[1]],
        "other_only": [a[0], a[1], a[0], a[1]],
        "three": [m[0], a[0], b[0], m[1]],
        "four_others": [a[0], b[0], c[0], d[0]],
        "deeper": [m[0], m[1], a[0], b[0], c[0], m[2]],
        "short": [b[0], a[1]],
    }[shape]
    frames, text = stale_write_stack(rt, calls)

    def frame(s):
        if s >> 32 == PREFIX >> 32:
            i = m.index(s)
            return (f"m{i}", "/abs/litmus.c", 20 + i)
        mod = {A: ("/abs/a.c", ["a0", "a1"]), B: ("/abs/b.c", ["b0"]), C: ("/abs/c.c", ["c0"]),
               D: ("/abs/d.c", ["d0"])}[s & ~0xffffffff]
        i = s & 0xffffffff
        return (mod[1][i], mod[0], 100 + i)

    expect = [("writer", "/abs/litmus.c", 9)] + [frame(s) for s in reversed(calls)][:4]
    assert frames == expect
    # the text block prints the same frames, in order
    for k, (fn, file, line) in enumerate(expect):
        assert f"#{k} {fn} {file}:{line}:" in text


def test_the_same_key_is_kept_once_and_every_one_comes_back(rt):
    """The key pool (history.c): a key put twice has one index; 5000 distinct keys (the table
    rehashes, the keys fill segments 0 to 6) each come back whole from their index, and
    putting them again gives the same indices. Mutant caught: the table not rehashed on growth
    (a repeated put gets a new index). (key_at's place shifted inside its segment is an
    equivalent mutant: puts and gets both go through it.)"""
    ffi, lib = rt.ffi, rt.lib

    def key(site, stack, kind):
        k = ffi.new("rsan_hkey *")
        k.site, k.kind = site, kind
        for i, s in enumerate(stack):
            k.stack[i] = s
        return k

    def back(i):
        out = ffi.new("rsan_hkey *")
        lib.rsan_hist_key_get(i, out)
        return out.site, list(out.stack), out.kind

    k0 = key(A | 1, [A | 1, B | 2, C | 3, 0], 0x04020105)
    i = lib.rsan_hist_key_put(k0)
    assert lib.rsan_hist_key_put(k0) == i
    keys = [(A | k, [A | k, B | (k * 7), C | (k >> 1), D | k if k % 3 else 0], k % 5 | (k % 7) << 8)
            for k in range(1, 5000)]
    idx = [lib.rsan_hist_key_put(key(*k)) for k in keys]  # grows, rehashes, new segments
    assert len(set(idx)) == len(keys) and i not in idx
    # a key differing in one field only is another key
    assert lib.rsan_hist_key_put(key(A | 1, [A | 1, B | 2, C | 3, 0], 0x04020106)) not in idx + [i]
    assert lib.rsan_hist_key_put(key(A | 1, [A | 1, B | 2, C | 3, 1], 0x04020105)) not in idx + [i]
    for k, j in zip(keys, idx):
        assert back(j) == k
    assert back(i) == (A | 1, [A | 1, B | 2, C | 3, 0], 0x04020105)
    assert [lib.rsan_hist_key_put(key(*k)) for k in keys] == idx


def test_writes_whose_keys_differ_in_one_field_each_keep_their_own(rt):
    """One thread writes x from one site through call chains that differ in one frame only
    (the outermost one kept, stack[3]; the innermost, stack[0]), then with another order and
    size and as an RMW, twice each (the second time from its cache): every entry of the ring
    decodes to its own write's site, stack and kind. Mutants caught: the cache's hit comparing
    only site and stack[0] (a write gets the key of the chain before it)."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    x = rt.var("x")
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    m = [own(rt, f"m{i}", 20 + i) for i in range(6)]
    site = rt.site("st", 9, "writer")
    # the first three chains have the same site and innermost caller (stack[0]), so the same
    # cache slot (rsan_engine.h rsan_hist_key_i): only the comparison tells their keys apart
    chains = [m[:4], [m[1], m[0]] + m[2:4], [m[4]] + m[1:4], m[:3] + [m[5]]]
    want = []
    for rep in range(2):
        for calls in chains:
            arr = ffi.new("uint64_t[]", calls)
            v = len(want) + 1
            lib.helper_chain_store(len(calls), arr, ffi.cast("uint32_t *", x), v, site)
            want.append((site, list(reversed(calls)), ORDERS["rlx"], OP_STORE, 0, 0, 4, v))
        rt.store(x, 50 + rep, "sc", site=site, size=4)
        want.append((site, [0] * 4, ORDERS["sc"], OP_STORE, 0, 0, 4, 50 + rep))
    # the last 8 writes, write k at entry k % 8
    out = ffi.new("rsan_write *")
    n = len(want)
    for k in range(n - 8, n):
        assert lib.__rsan_test_history_write(x, k % 8, out) == 1
        got = (out.site, list(out.stack), out.order, out.op, out.rmw_op, out.rmw, out.size, out.value)
        assert got == want[k], (k, got, want[k])
        assert (out.ts, out.tsU, out.tid) == (k + 1, k + 1, lib.rsan_thread_tid(main))
    old = rt.rmw(x, "add", 3, "ar", site=site, size=4)
    assert lib.__rsan_test_history_write(x, n % 8, out) == 1
    assert (out.site, list(out.stack), out.order, out.op, out.rmw_op, out.rmw, out.value) == \
        (site, [0] * 4, ORDERS["ar"], OP_RMW, RMW_OPS.index("add"), 1, old + 3)
    assert (out.ts, out.tsU) == (n + 1, n)


@pytest.mark.parametrize("stale", [0, 1, 3])
def test_a_writes_stack_is_its_innermost_four_live_frames(rt, stale):
    """One thread writes x through chains of 0 to 6 calls, the innermost frame first leaving
    `stale` frames on the shadow stack that were entered and never left (unwound, as by
    longjmp): every entry's stack is the chain's innermost four calls, innermost first, 0 where
    the chain is shorter; the stale frames are never in it (docs/design/clocks.md §30: the walk
    in registers takes the innermost frames only when all are live). Mutants caught: the
    walk's liveness test dropped (the stale frames' site in the stack); the frames taken
    outermost first; a chain deeper than four giving its outermost frames."""
    ffi, lib, rsan = rt.ffi, rt.lib, rt.rsan
    x = rt.var("x")
    main = rsan.test_new_thread(ffi.NULL)
    rsan.test_set_current(main)
    m = [own(rt, f"m{i}", 40 + i) for i in range(6)]
    dead = own(rt, "unwound", 60)
    site = rt.site("st", 9, "writer")
    out = ffi.new("rsan_write *")
    for k, n in enumerate([0, 1, 2, 3, 4, 5, 6, 3, 1]):
        calls = m[:n]
        arr = ffi.new("uint64_t[]", calls or [0])
        lib.helper_chain_stale_store(n, arr, stale, dead, ffi.cast("uint32_t *", x), k + 1, site)
        assert lib.__rsan_test_history_write(x, k % 8, out) == 1
        want = (list(reversed(calls)) + [0] * 4)[:4]
        assert (list(out.stack), out.value, out.site) == (want, k + 1, site), (n, stale)
