"""Fused copy-on-write clocks (runtime/src/clock.c, rsan_clk): shared snapshots must behave
exactly like private copies, joins must be exact whatever shortcut they take, and the engine
must never let a thread's later writes leak into a snapshot it shared (W(x) := Tc,
Wsc(x) := Tsc, a child's clocks := its parent's)."""
import random

import cffi
import pytest

from harness import Program, build_engine_lib
from test_model import check_against_transcription

CLK_CDEF = """
typedef struct rsan_clk rsan_clk;
rsan_clk *rsan_clk_test_new(uint64_t self);
void rsan_clk_test_free(rsan_clk *c);
void rsan_clk_get2(const rsan_clk *c, uint64_t id, uint64_t *ts, uint64_t *tsU);
void rsan_clk_set_max(rsan_clk *c, uint64_t id, uint64_t ts, uint64_t tsU);
void rsan_clk_join(rsan_clk *dst, const rsan_clk *src);
void rsan_clk_join_restricted(rsan_clk *dst, const rsan_clk *src, uint64_t id);
void rsan_clk_assign(rsan_clk *dst, const rsan_clk *src);
int rsan_clk_leq(const rsan_clk *a, const rsan_clk *b, int which);
uint32_t rsan_clk_refs(const rsan_clk *c);
"""

TC, TR, TA, TSC, TCU, TRU, TAU, TSCU = range(8)


@pytest.fixture(scope="module")
def clk():
    ffi = cffi.FFI()
    ffi.cdef(CLK_CDEF)
    return ffi, ffi.dlopen(str(build_engine_lib()))


def value(ffi, lib, c, ids):
    ts, tu = ffi.new("uint64_t *"), ffi.new("uint64_t *")
    out = {}
    for i in ids:
        lib.rsan_clk_get2(c, i, ts, tu)
        if ts[0] or tu[0]:
            out[i] = (ts[0], tu[0])
    return out


def jn(a, b):
    r = dict(a)
    for k, (t, u) in b.items():
        o = r.get(k, (0, 0))
        r[k] = (max(o[0], t), max(o[1], u))
    return r


@pytest.mark.parametrize("seed", range(8))
def test_shared_clocks_behave_like_private_copies(clk, seed):
    """Random set_max / join / restricted join / assign over a few location-style clocks
    (which may shrink on assignment) against a dict model; id 0 is F's inline entry; sizes
    cross the linear/binary search boundary and the tiny-source point-update path."""
    ffi, lib = clk
    rnd = random.Random(seed)
    span = [6, 40, 300, 2000][seed % 4]
    ids = list(range(span))
    n = 5
    cs = [lib.rsan_clk_test_new(0) for _ in range(n)]
    ms = [{} for _ in range(n)]
    for step in range(400):
        op = rnd.randrange(10)
        a, b = rnd.randrange(n), rnd.randrange(n)
        if op < 3:
            i = rnd.choice(ids)
            t, u = rnd.randrange(0, 60), rnd.randrange(0, 60)
            lib.rsan_clk_set_max(cs[a], i, t, u)
            if t or u:
                ms[a] = jn(ms[a], {i: (t, u)})
        elif op < 6:
            lib.rsan_clk_join(cs[a], cs[b])
            ms[a] = jn(ms[a], ms[b])
        elif op == 6:
            i = rnd.choice(ids)
            lib.rsan_clk_join_restricted(cs[a], cs[b], i)
            if i in ms[b]:
                ms[a] = jn(ms[a], {i: ms[b][i]})
        elif op < 9 and a != b:
            lib.rsan_clk_assign(cs[a], cs[b])  # shares b's buffer
            ms[a] = dict(ms[b])
        sample = ids if span <= 300 else rnd.sample(ids, 200) + [i for m in ms for i in m]
        for k in range(n):
            got = value(ffi, lib, cs[k], set(sample) | set(ms[k]))
            want = {i: v for i, v in ms[k].items()}
            assert got == want, (step, k)
        x, y = rnd.randrange(n), rnd.randrange(n)
        for which in (1, 2, 3):
            leq = all((which & 1 == 0 or ms[y].get(i, (0, 0))[0] >= t) and
                      (which & 2 == 0 or ms[y].get(i, (0, 0))[1] >= u) for i, (t, u) in ms[x].items())
            assert bool(lib.rsan_clk_leq(cs[x], cs[y], which)) == leq
    for c in cs:
        lib.rsan_clk_test_free(c)


def test_assignment_shares_and_a_write_unshares(clk):
    ffi, lib = clk
    a, b = lib.rsan_clk_test_new(0), lib.rsan_clk_test_new(0)
    for i in range(1, 50):
        lib.rsan_clk_set_max(a, i, i, 1)
    lib.rsan_clk_assign(b, a)
    assert lib.rsan_clk_refs(a) == 2 and lib.rsan_clk_refs(b) == 2  # one buffer, no copy
    lib.rsan_clk_set_max(a, 7, 100, 0)  # copy-on-write: b keeps the old value
    assert lib.rsan_clk_refs(a) == 1 and lib.rsan_clk_refs(b) == 1
    assert value(ffi, lib, b, [7]) == {7: (7, 1)}
    assert value(ffi, lib, a, [7]) == {7: (100, 1)}
    lib.rsan_clk_set_max(b, 7, 3, 0)  # no change: no copy, a unaffected
    assert value(ffi, lib, a, [7]) == {7: (100, 1)}
    lib.rsan_clk_test_free(a)
    assert value(ffi, lib, b, range(1, 50)) == {i: (i, 1) for i in range(1, 50)}
    lib.rsan_clk_test_free(b)


def test_thread_clocks_skip_joins_of_their_own_snapshots_exactly(clk):
    """A thread-style clock (self != 0, only grows) takes shortcuts for its own past states
    and for memoised sources: the values must still be exact joins."""
    ffi, lib = clk
    rnd = random.Random(7)
    t = lib.rsan_clk_test_new(4 * 10**9 + 3)
    locs = [lib.rsan_clk_test_new(0) for _ in range(6)]
    mt, ml = {}, [{} for _ in locs]
    for step in range(600):
        k = rnd.randrange(len(locs))
        op = rnd.randrange(4)
        if op == 0:  # a write: t grows, the location takes t's snapshot
            i = rnd.randrange(1, 120)
            lib.rsan_clk_set_max(t, i, step + 1, step // 2 + 1)
            mt = jn(mt, {i: (step + 1, step // 2 + 1)})
            lib.rsan_clk_assign(locs[k], t)
            ml[k] = dict(mt)
        elif op == 1:  # a read: t ⊔= location (often its own old snapshot)
            lib.rsan_clk_join(t, locs[k])
            mt = jn(mt, ml[k])
        elif op == 2:  # the location ⊔= t (M(x) ⊔= T)
            lib.rsan_clk_join(locs[k], t)
            ml[k] = jn(ml[k], mt)
        else:  # someone else writes the location
            i = rnd.randrange(1, 120)
            lib.rsan_clk_set_max(locs[k], i, 10**6 + step, 0)
            ml[k] = jn(ml[k], {i: (10**6 + step, 0)})
        assert value(ffi, lib, t, range(0, 121)) == mt, step
        assert value(ffi, lib, locs[k], range(0, 121)) == ml[k], step
    for c in locs + [t]:
        lib.rsan_clk_test_free(c)


def test_release_store_snapshot_is_not_changed_by_later_writes(rt):
    """W(x) := Tc and Wsc(x) := Tsc share t1's clocks; t1's later store to y must not show up
    in W(x) / Wsc(x): t2 acquiring x must not learn about y."""
    lib, ffi = rt.lib, rt.ffi
    x, y = rt.var("x"), rt.var("y")
    main = lib.__rsan_test_new_thread(ffi.NULL)
    t1, t2 = lib.__rsan_test_new_thread(main), lib.__rsan_test_new_thread(main)
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, "rel")
    rt.store(y, 1, "rel")
    rt.store(y, 2, "rlx")
    lib.__rsan_test_set_current(t2)
    assert rt.load(x, "acq") == 1
    assert lib.__rsan_test_thread_clock(t2, TC, x) == 1
    assert lib.__rsan_test_thread_clock(t2, TC, y) == 0
    assert lib.__rsan_test_thread_clock(t2, TCU, y) == 0
    assert lib.__rsan_test_thread_clock(t2, TSC, y) == 0
    assert lib.__rsan_test_thread_clock(t2, TA, y) == 0
    # and t1 kept its own view
    assert lib.__rsan_test_thread_clock(t1, TC, y) == 2
    assert lib.__rsan_test_thread_clock(t1, TSCU, y) == 2
    lib.__rsan_test_set_current(main)


def test_snapshot_taken_by_a_fence_is_not_changed_by_later_writes(rt):
    """The SC fence shares Tsc into F's clocks and Tc into Tr; writes after the fence must not
    reach a thread that synchronises with F (its next fence) or with the release view."""
    lib, ffi = rt.lib, rt.ffi
    x, y, z = rt.var("x"), rt.var("y"), rt.var("z")
    main = lib.__rsan_test_new_thread(ffi.NULL)
    t1, t2 = lib.__rsan_test_new_thread(main), lib.__rsan_test_new_thread(main)
    lib.__rsan_test_set_current(t1)
    rt.store(x, 1, "rlx")
    rt.fence("sc")
    rt.store(y, 1, "rlx")  # after t1's fence: not in F
    rt.store(z, 1, "rlx")  # W(z) := Tr ⊔ z@1: Tr holds x but not y
    lib.__rsan_test_set_current(t2)
    rt.fence("sc")
    assert lib.__rsan_test_thread_clock(t2, TSC, x) == 1
    assert lib.__rsan_test_thread_clock(t2, TSC, y) == 0
    assert lib.__rsan_test_thread_clock(t2, TC, y) == 0
    assert rt.load(z, "acq") == 1
    assert lib.__rsan_test_thread_clock(t2, TC, x) == 1
    assert lib.__rsan_test_thread_clock(t2, TC, y) == 0
    lib.__rsan_test_set_current(main)


def test_child_and_parent_clocks_are_independent_after_create(rt):
    lib, ffi = rt.lib, rt.ffi
    x, y, z = rt.var("x"), rt.var("y"), rt.var("z")
    main = lib.__rsan_test_new_thread(ffi.NULL)
    lib.__rsan_test_set_current(main)
    rt.store(x, 1, "rel")
    child = lib.rsan_thread_create(main)  # shares main's buffers
    rt.store(y, 1, "rlx")
    lib.__rsan_test_set_current(child)
    rt.store(z, 1, "rlx")
    for which in (TC, TA, TSC, TCU, TSCU):
        assert lib.__rsan_test_thread_clock(child, which, x) == 1
        assert lib.__rsan_test_thread_clock(child, which, y) == 0
        assert lib.__rsan_test_thread_clock(main, which, z) == 0
        assert lib.__rsan_test_thread_clock(main, which, y) == 1
    lib.__rsan_test_set_current(main)


def random_big_program(rnd, nvars, nthreads, nops):
    names = [f"v{i}" for i in range(nvars)]
    val = iter(range(1, 10**6))
    threads = []
    for _ in range(nthreads):
        ops = []
        for _ in range(nops):
            v = rnd.choice(names)
            k = rnd.choice(["ld", "ld", "st", "st", "rmw", "cas", "fence"])
            if k == "ld":
                ops.append(("ld", v, rnd.choice(["rlx", "rlx", "acq", "sc"])))
            elif k == "st":
                ops.append(("st", v, next(val), rnd.choice(["rlx", "rlx", "rel", "sc"])))
            elif k == "rmw":
                ops.append(("rmw", v, "add", 1, rnd.choice(["rlx", "acq", "rel", "ar", "sc"])))
            elif k == "cas":
                succ = rnd.choice(["rlx", "acq", "rel", "ar", "sc"])
                fail = rnd.choice(["rlx", "acq"] + (["sc"] if succ == "sc" else []))
                ops.append(("cas", v, rnd.choice([0, 1]), next(val), succ, fail, False))
            else:
                ops.append(("fence", rnd.choice(["acq", "rel", "ar", "sc"])))
        threads.append(ops)
    return Program(*threads)


def test_engine_matches_the_transcription_on_programs_with_large_clocks(rt):
    """test_model.py's oracle on longer programs over up to 40 locations and 4 threads, so
    that clocks outgrow the linear search, joins take the merge, in-place, point-update and
    containment shortcuts, and snapshots are shared many times before they are written."""
    rnd = random.Random(4242)
    reported = 0
    for _ in range(40):
        prog = random_big_program(rnd, rnd.choice([20, 40]), rnd.choice([2, 3, 4]), rnd.randint(15, 30))
        reported += len(check_against_transcription(rt, prog, rnd))
    assert reported >= 20, reported
