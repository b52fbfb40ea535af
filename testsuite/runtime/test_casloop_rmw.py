"""A recognised CAS retry loop is one RMW (runtime/src/casloop.c, docs/reports.md §1):
its first read (__rsan_casloop_load_N) and its failed attempts (__rsan_casloop_cas_N that
fail) make no events; the successful attempt is an RMW with the success order.

Checked against the reference model (testsuite/reference/rc20.py) on random programs: the
runtime, driven through every SC interleaving of the loop's steps (first read, then attempts,
each expecting the value read last, a failure whenever another thread wrote in between),
must report exactly when the model says the program with the loop replaced by
("rmw", x, "add", v, success order) is not robust."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import harness
import rc20

HERE = Path(__file__).resolve().parent

MASK = (1 << 32) - 1
READ_RANK = {"rlx": 0, "rel": 0, "acq": 1, "ar": 1, "sc": 2}


@pytest.fixture(scope="module")
def rt_lib():
    import cffi
    ffi = cffi.FFI()
    ffi.cdef(harness.CDEF)
    return ffi, ffi.dlopen(str(harness.build_engine_lib()))


@pytest.fixture
def rt(rt_lib, tmp_path):
    ffi, lib = rt_lib
    r = harness.Runtime(ffi, lib, tmp_path)
    r.reset()
    yield r
    getattr(lib, "__rsan_test_reset")()


def _apply(op, v, mem):
    if op[0] == "st":
        return op[2]
    return rc20.apply_rmw(op[2], mem, op[3])


def _schedules(threads):
    """Every interleaving of the threads' steps. A ("casloop", x, add, order_load, succ,
    fail) op is a first read and then attempts; an attempt fails iff memory changed since the
    value it expects was read. Yields lists of (thread, step) with step "op", "load", "try"."""
    n = len(threads)

    def rec(pos, phase, seen, mem, path):
        moved = False
        for k in range(n):
            if pos[k] >= len(threads[k]):
                continue
            op = threads[k][pos[k]]
            moved = True
            npos, nphase, nseen, nmem = list(pos), list(phase), list(seen), dict(mem)
            if op[0] == "casloop" and phase[k] == 0:
                nphase[k], nseen[k] = 1, mem.get(op[1], 0)
                yield from rec(npos, nphase, nseen, nmem, path + [(k, "load")])
                continue
            if op[0] == "casloop":
                cur = mem.get(op[1], 0)
                if cur == seen[k]:
                    nmem[op[1]] = (cur + op[2]) & MASK
                    nphase[k], npos[k] = 0, pos[k] + 1
                else:
                    nseen[k] = cur
                yield from rec(npos, nphase, nseen, nmem, path + [(k, "try")])
                continue
            if op[0] in ("st", "rmw"):
                nmem[op[1]] = _apply(op, None, mem.get(op[1], 0)) & MASK
            npos[k] += 1
            yield from rec(npos, nphase, nseen, nmem, path + [(k, "op")])
        if not moved:
            yield path

    yield from rec([0] * n, [0] * n, [0] * n, {}, [])


def _runtime_reports(rt, threads, sc):
    total = 0
    for sched in _schedules(threads):
        rt.reset(f"sc_accesses={sc}")
        names = sorted({op[1] for t in threads for op in t if op[0] != "fence"})
        mem = {n: rt.var(n) for n in names}
        rs = rt.rsan
        main = rs.test_new_thread(rt.ffi.NULL)
        rs.test_set_current(main)
        ths = [rs.test_new_thread(main) for _ in threads]
        pos, seen = [0] * len(threads), [0] * len(threads)
        for k, step in sched:
            op = threads[k][pos[k]]
            rs.test_set_current(ths[k])
            site = rt.site("rmw" if op[0] == "casloop" else op[0] if op[0] != "fence" else "fence",
                           harness.line_of(k + 1, pos[k]), f"t{k + 1}")
            if step == "load":
                seen[k] = getattr(rt.lib, "__rsan_casloop_load_4")(mem[op[1]], harness.ORDERS[op[3]], site)
                continue
            if step == "try":
                r = getattr(rt.lib, "__rsan_casloop_cas_4")(
                    mem[op[1]], seen[k], (seen[k] + op[2]) & MASK, harness.ORDERS[op[4]],
                    harness.ORDERS[op[5]], 1, site)
                if r.ok:
                    pos[k] += 1
                else:
                    seen[k] = r.old
                continue
            if op[0] == "ld":
                rt.load(mem[op[1]], op[2], site)
            elif op[0] == "st":
                rt.store(mem[op[1]], op[2], op[3], site)
            elif op[0] == "rmw":
                rt.rmw(mem[op[1]], op[2], op[3], op[4], site)
            elif op[0] == "fence":
                rt.fence(op[1], site)
            pos[k] += 1
        rs.test_set_current(main)
        total += int(rs.test_report_count())
        if total:
            return total
    return total


def _as_rmw(threads):
    return [[("rmw", op[1], "add", op[2], op[4]) if op[0] == "casloop" else op for op in t]
            for t in threads]


def _random_program(rng, sc_orders):
    orders = ["rlx", "acq", "rel", "ar"] + (["sc"] if sc_orders else [])
    locs = ["x", "y"]
    threads = []
    for _ in range(rng.choice((2, 2, 3))):
        ops = []
        for _ in range(rng.choice((1, 2, 3))):
            kind = rng.choice(("ld", "st", "casloop", "casloop", "fence"))
            x = rng.choice(locs)
            if kind == "ld":
                ops.append(("ld", x, rng.choice(["rlx", "acq"] + (["sc"] if sc_orders else []))))
            elif kind == "st":
                ops.append(("st", x, rng.choice((1, 2)), rng.choice(["rlx", "rel"] + (["sc"] if sc_orders else []))))
            elif kind == "fence":
                ops.append(("fence", rng.choice(["acq", "rel", "sc"])))
            else:
                succ = rng.choice(orders)
                # what the passes accept: no read of the loop ordered above the success
                low = [o for o in ("rlx", "acq", "sc") if READ_RANK[o] <= READ_RANK[succ]]
                fail = [o for o in ("rlx", "acq", "sc") if READ_RANK[o] <= READ_RANK[succ]]
                ops.append(("casloop", x, rng.choice((1, 2)), rng.choice(low), succ, rng.choice(fail)))
        threads.append(ops)
    return threads


def test_counters_updated_by_cas_loops_are_robust_but_not_with_a_plain_first_read(rt):
    """Two threads update x and y with CAS loops only: as RMWs robust (the model agrees, and
    so does the runtime over every interleaving, failed attempts included); the same program
    with each loop's first read as an ordinary load is not (that read may be stale)."""
    t1 = [("casloop", "y", 1, "rlx", "rlx", "rlx"), ("casloop", "x", 1, "rlx", "rlx", "rlx")]
    t2 = [("casloop", "x", 1, "rlx", "rlx", "rlx"), ("casloop", "y", 1, "rlx", "rlx", "rlx")]
    assert rc20.robust(_as_rmw([t1, t2]), sc="ra") is True
    assert _runtime_reports(rt, [t1, t2], "ra") == 0
    plain = [[t1[0] and ("rmw", "y", "add", 1, "rlx"), ("ld", "x", "rlx"), ("rmw", "x", "add", 1, "rlx")],
             [("ld", "x", "rlx"), ("rmw", "x", "add", 1, "rlx"), ("rmw", "y", "add", 1, "rlx")]]
    assert rc20.robust(plain, sc="ra") is False


def test_a_release_cas_loop_publishes_and_its_success_order_matters(rt):
    """Message passing through a CAS loop: with a release success order robust (model and
    runtime agree), with a relaxed one not: the runtime must use the success order."""
    for succ, robust in (("rel", True), ("rlx", False)):
        threads = [[("st", "x", 1, "rlx"), ("casloop", "y", 1, "rlx", succ, "rlx")],
                   [("ld", "y", "acq"), ("ld", "x", "rlx")]]
        assert rc20.robust(_as_rmw(threads), sc="ra") is robust
        assert (_runtime_reports(rt, threads, "ra") == 0) is robust, succ


# seeds 6 and 81 take 20-50 s (every interleaving of long loops): slow, like the rest
SEEDS = [s for s in range(20) if s != 6] + [pytest.param(s, marks=pytest.mark.slow)
                                             for s in [6, *range(20, 150)]]


@pytest.mark.parametrize("seed", SEEDS)
def test_random_loops_agree_with_the_model_of_one_rmw(rt, seed):
    rng = random.Random(seed)
    sc = "ra" if seed % 2 else "fenced"
    threads = _random_program(rng, sc_orders=(sc == "ra"))
    expected = rc20.robust(_as_rmw(threads), sc=sc)
    got = _runtime_reports(rt, threads, sc) == 0
    assert got == expected, (threads, sc)
