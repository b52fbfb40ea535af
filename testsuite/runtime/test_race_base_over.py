"""A slot's new base made over its full base (runtime/src/vclock.c base_over, join_thin_over,
docs/design/races.md §18): when a thread exports a C that did not move since its last export
(after a few sparse exports, docs/design/races.md §20), the new base its thin exports share is
coded as 16-bit offsets over the slot's full base F (B[u] = F[u] + off[u]) when every entry
fits, else it is a new full base.
Threads are created after 20 idle ones, so every clock has more than RSAN_VC_DENSE entries and
S_x is coded. Each scenario expects races exactly where happens-before is missing, so a base
over F decoded without its offsets, without F, or without the thin entry, or made although an
entry does not fit (a truncated offset), fails it; and the first one fails if no base over F is
made (the memory this saves)."""
import os

import cffi
import pytest

from harness import build_engine_lib
from test_race_differential import check

PAD = 20
JUMP = 0x10000 + 16  # release stores: t2's entry moves past F[t2] + 0xffff
SAME_SPARSE = 4  # race_clock.c C_SAME_MAX: exports of an unmoved C made sparse before a new base


@pytest.fixture
def hooks(rt):
    ffi = cffi.FFI()
    ffi.cdef("uint64_t __rsan_test_bases_over(void);")
    return ffi.dlopen(str(build_engine_lib()))


def on(rt, t):
    rt.rsan.test_set_current(t)


def races(rt):
    return [(r["location"]["name"], r["access"]["line"], r["previous"]["line"]) for r in rt.races()]


@pytest.mark.parametrize("via", ["acq", "fence"])
@pytest.mark.parametrize("jump", [0, JUMP])
def test_a_base_over_the_full_base_decodes_every_entry(rt, hooks, via, jump):
    """t1: w.store(rel) [a new full base F]. t3: h = 1; x.store(rel). t2: `jump` release stores
    of z; g = 1; m.store(rel). t1: m.load(acq) [C moves: t2's entry]; x.fetch_add(rel) [S_x ⋢ C:
    the join is coded, and the slot's state no longer says C moved]; e = 1; y.store(rel) five
    times [C as at the last export: sparse four times (docs/design/races.md §20), then a new
    base, over F (t2's offset not 0); with the jump, a full base at once];
    f1 = 1; y2.store(rel) [thin on it: C's own entry one more]; f2 = 1. t4: y.load and y2.load
    (acquire, or relaxed then an acquire fence: the decoding join into A); reads g, e, f1 (all
    ordered: by t1's acquire of m, then y, then y2's own entry) and f2 (not: written after)."""
    rt.reset()
    names = ("e", "f1", "f2", "g", "h", "m", "w", "x", "y", "y2", "z")
    vs = {n: rt.var(n) for n in names}
    lib = rt.lib
    main = rt.rsan.test_new_thread(rt.ffi.NULL)
    on(rt, main)
    for _ in range(PAD):
        lib.rsan_thread_create(main)
    t1, t2, t3, t4 = (lib.rsan_thread_create(main) for _ in range(4))
    on(rt, t1)
    rt.store(vs["w"], 1, "rel", site=rt.site("st", 11, "t1"))
    on(rt, t3)
    rt.write(vs["h"], site=rt.site("write", 31, "t3"))
    rt.store(vs["x"], 1, "rel", site=rt.site("st", 32, "t3"))
    on(rt, t2)
    st = rt.site("st", 21, "t2")
    for i in range(jump):
        rt.store(vs["z"], i, "rel", site=st)
    rt.write(vs["g"], site=rt.site("write", 22, "t2"))
    rt.store(vs["m"], 1, "rel", site=rt.site("st", 23, "t2"))
    on(rt, t1)
    assert rt.load(vs["m"], "acq", site=rt.site("ld", 12, "t1")) == 1
    rt.rmw(vs["x"], "add", 1, "rel", site=rt.site("rmw", 13, "t1"))
    rt.write(vs["e"], site=rt.site("write", 14, "t1"))
    before = hooks.__rsan_test_bases_over()  # (a slot's bases outlive a reset: count t1's only)
    for _ in range(SAME_SPARSE + 1):  # the first few sparse (§20), then a new base
        rt.store(vs["y"], 1, "rel", site=rt.site("st", 15, "t1"))
    rt.write(vs["f1"], site=rt.site("write", 16, "t1"))
    rt.store(vs["y2"], 1, "rel", site=rt.site("st", 17, "t1"))
    made = hooks.__rsan_test_bases_over() - before
    assert made == (0 if jump else 1), made
    rt.write(vs["f2"], site=rt.site("write", 18, "t1"))
    on(rt, t4)
    order = "acq" if via == "acq" else "rlx"
    assert rt.load(vs["y"], order, site=rt.site("ld", 41, "t4")) == 1
    assert rt.load(vs["y2"], order, site=rt.site("ld", 42, "t4")) == 1
    if via == "fence":
        rt.fence("acq", site=rt.site("fence", 43, "t4"))
    for k, name in enumerate(("g", "e", "f1", "f2")):
        rt.read(vs[name], site=rt.site("read", 44 + k, "t4"))
    assert races(rt) == [("f2", 47, 18)]


def test_random_programs_with_bases_over_full_ones(rt, hooks):
    """The differential programs after 20 idle threads (clocks of 21+ entries, every S_x coded),
    with a base over the slot's full base wherever a thread exports a C that did not move since
    its last export. Fails when such a base decodes to another clock than the C it was made
    from (a miss or a false alarm against the model, or the debug build's check that a thin
    export decodes to C), and when the programs make no base over a full one."""
    before = hooks.__rsan_test_bases_over()
    count = int(os.environ.get("PYRSAN_RACE_DIFF_COUNT", "150"))
    runs, racy = check(rt, count, seed=61, pad=PAD)
    assert racy > 0
    assert hooks.__rsan_test_bases_over() > before
