"""Location clocks (clock.c) against a dict model: get, set_max, join (in place, both
small/linear and large/binary sizes), restricted join, copy, comparisons."""
import random

import pytest


class LC:
    def __init__(self, ffi, lib):
        self.ffi, self.lib = ffi, lib
        self.c = ffi.new("rsan_lc *")

    def entries(self):
        return [(self.c.e[i].id, self.c.e[i].ts) for i in range(self.c.n)]

    def free(self):
        self.lib.rsan_lc_free(self.c)


def as_dict(lc):
    return dict(lc.entries())


def check_sorted(lc):
    ids = [i for i, _ in lc.entries()]
    assert ids == sorted(set(ids))
    assert all(ts > 0 for _, ts in lc.entries())


@pytest.mark.parametrize("seed", range(6))
def test_clock_operations_match_a_dict_model(engine, seed):
    ffi, lib = engine
    rnd = random.Random(seed)
    span = [8, 40, 400][seed % 3]  # small clocks (linear search) and large ones (binary)
    a, b = LC(ffi, lib), LC(ffi, lib)
    ma, mb = {}, {}
    for _ in range(300):
        op = rnd.randrange(6)
        if op == 0:
            i, t = rnd.randrange(span), rnd.randrange(1, 50)
            lib.rsan_lc_set_max(a.c, i, t)
            ma[i] = max(ma.get(i, 0), t)
        elif op == 1:
            i, t = rnd.randrange(span), rnd.randrange(1, 50)
            lib.rsan_lc_set_max(b.c, i, t)
            mb[i] = max(mb.get(i, 0), t)
        elif op == 2:
            changed = lib.rsan_lc_join(a.c, b.c)
            new = {k: max(ma.get(k, 0), mb.get(k, 0)) for k in set(ma) | set(mb)}
            assert bool(changed) == (new != ma)
            ma = new
        elif op == 3:
            i = rnd.randrange(span)
            lib.rsan_lc_join_restricted(b.c, a.c, i)
            if ma.get(i, 0):
                mb[i] = max(mb.get(i, 0), ma[i])
        elif op == 4 and rnd.random() < 0.2:
            lib.rsan_lc_copy(b.c, a.c)
            mb = dict(ma)
        elif op == 5 and rnd.random() < 0.1:
            i, t = rnd.randrange(span), rnd.randrange(1, 50)
            lib.rsan_lc_singleton(a.c, i, t)
            ma = {i: t}
        check_sorted(a)
        check_sorted(b)
        assert as_dict(a) == ma and as_dict(b) == mb
        for i in range(0, span, max(1, span // 20)):
            assert lib.rsan_lc_get(a.c, i) == ma.get(i, 0)
        leq = all(mb.get(k, 0) >= v for k, v in ma.items())
        assert bool(lib.rsan_lc_leq(a.c, b.c)) == leq
        assert bool(lib.rsan_lc_eq(a.c, b.c)) == (ma == mb)
    a.free()
    b.free()


def test_join_into_empty_and_from_empty(engine):
    ffi, lib = engine
    a, b = LC(ffi, lib), LC(ffi, lib)
    assert lib.rsan_lc_join(a.c, b.c) == 0
    lib.rsan_lc_set_max(b.c, 3, 7)
    lib.rsan_lc_set_max(b.c, 1, 2)
    assert lib.rsan_lc_join(a.c, b.c) == 1
    assert a.entries() == [(1, 2), (3, 7)]
    lib.rsan_lc_set_max(a.c, 3, 0)  # timestamp 0 is "absent": no entry, no change
    lib.rsan_lc_set_max(a.c, 9, 0)
    assert a.entries() == [(1, 2), (3, 7)]
    lib.rsan_lc_clear(a.c)
    assert a.entries() == [] and lib.rsan_lc_get(a.c, 3) == 0
    a.free()
    b.free()
