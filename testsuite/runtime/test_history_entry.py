"""A write's history entry is one cache line with its call stack packed (docs/design/clocks.md
§18): a report prints every frame of the stale write's stack that it printed before, whatever
modules the frames come from (the write's own, one other, or more: the stack pool)."""
from __future__ import annotations

import pytest

from harness import PREFIX


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


def test_the_same_pooled_stack_is_kept_once_and_every_one_comes_back(rt):
    ffi, lib = rt.ffi, rt.lib
    s = ffi.new("uint64_t[4]", [A | 1, B | 2, C | 3, 0])
    i = lib.rsan_hist_pool_put(s)
    assert lib.rsan_hist_pool_put(s) == i
    stacks = [[A | k, B | (k * 7), C | (k >> 1), D | k if k % 3 else 0] for k in range(1, 400)]
    idx = [lib.rsan_hist_pool_put(ffi.new("uint64_t[4]", st)) for st in stacks]  # grows, rehashes
    assert len(set(idx)) == len(stacks) and i not in idx
    out = ffi.new("uint64_t[4]")
    for st, j in zip(stacks, idx):
        lib.rsan_hist_pool_get(j, out)
        assert list(out) == st
    assert [lib.rsan_hist_pool_put(ffi.new("uint64_t[4]", st)) for st in stacks] == idx
