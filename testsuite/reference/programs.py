"""Random tiny litmus programs for the differential tests (harness.py op tuples).

Both a hypothesis strategy (for pytest, with shrinking) and a plain seeded generator (for
benchmarks/differential.py) draw from the same vocabulary: loads, stores, fetch_add,
exchange, CAS (weak by default), fences, in every valid memory order; with blocking=True
also wait(x = v) and BCAS(x, e -> d) (RSAN paper §4.3).
"""
from __future__ import annotations

import random

LOAD_ORDERS = ("rlx", "rlx", "con", "acq", "sc")  # rlx twice: more non-robust programs
STORE_ORDERS = ("rlx", "rlx", "rel", "sc")
RMW_ORDERS = ("rlx", "acq", "rel", "ar", "sc")
CAS_FAIL_ORDERS = ("rlx", "acq", "sc")
FENCE_ORDERS = ("acq", "rel", "ar", "sc")
VARS = ("x", "y", "z")


def make_op(kind: str, var: str, a: int, b: int, o1: str, o2: str, weak: bool):
    if kind == "ld":
        return ("ld", var, o1)
    if kind == "st":
        return ("st", var, a, o1)
    if kind == "add":
        return ("rmw", var, "add", a, o1)
    if kind == "xchg":
        return ("rmw", var, "xchg", a, o1)
    if kind == "cas":
        return ("cas", var, b, a, o1, o2, weak)
    if kind == "fence":
        return ("fence", o1)
    if kind == "wait":
        return ("wait", var, b, o1)
    if kind == "bcas":
        return ("bcas", var, b, a, o1)
    raise ValueError(kind)


def sc_cost(op, sc: str) -> int:
    """How many RMWs on the SC-fence location F the op becomes (the model's cost driver:
    graphs multiply with the orders of F)."""
    if op[0] == "fence":
        return 1 if op[1] == "sc" else 0
    if sc != "fenced":
        return 0
    if op[0] == "cas":
        return 2 if "sc" in (op[4], op[5]) else 0
    return 2 if op[-1] == "sc" else 0


def _no_sc(orders):
    return tuple(o for o in orders if o != "sc")


KINDS = ("ld", "st", "add", "xchg", "cas", "fence")
BLOCKING_KINDS = KINDS + ("wait", "bcas")


def var_names(n: int) -> tuple:
    """n variable names: x, y, z, then v3, v4, ..."""
    return VARS[:n] + tuple(f"v{i}" for i in range(len(VARS), n))


def random_op(rng: random.Random, nvars: int, weak: bool = True, budget: int = 99,
              sc: str = "fenced", relaxed_bias: bool = False, blocking: bool = False,
              many: int = 0):
    """A random op whose SC cost fits in budget (relaxed_bias: relaxed three times likelier,
    which makes non-robust programs common; blocking: waits and BCAS too)."""
    if blocking:
        kind = rng.choices(BLOCKING_KINDS, (4, 4, 1, 1, 2, 2, 3, 2))[0]
    else:
        kind = rng.choices(KINDS, (4, 4, 1, 1, 2, 2))[0]
    if many:  # many locations: most ops on two hot ones (so that threads still interact)
        var = rng.choice(VARS[:2]) if rng.random() < 0.75 else rng.choice(var_names(many))
    else:
        var = rng.choice(VARS[:nvars])
    a = rng.randint(1, 2)
    b = rng.randint(0, 2)
    orders = {"ld": LOAD_ORDERS, "wait": LOAD_ORDERS, "st": STORE_ORDERS,
              "fence": FENCE_ORDERS}.get(kind, RMW_ORDERS)
    fails = CAS_FAIL_ORDERS
    if budget < (2 if sc == "fenced" and kind != "fence" else 1):
        orders, fails = _no_sc(orders), _no_sc(fails)
    if relaxed_bias and kind != "fence":
        orders = ("rlx",) * 3 + tuple(orders)
    o1 = rng.choice(orders)
    o2 = rng.choice(fails)
    return make_op(kind, var, a, b, o1, o2, weak)


def random_program(rng: random.Random, max_events: int = 8, weak: bool = True,
                   sc: str = "fenced", sc_budget: int = 4, blocking: bool = False,
                   threads: int = 0, locations: int = 0):
    """2-4 threads (exactly `threads` when given), 3..max_events ops, at most sc_budget RMWs
    on F after lowering; locations > 3: variables drawn from that many (75% on two hot ones)."""
    nthreads = threads or rng.choice((2, 2, 3, 3, 4))
    total = rng.randint(max(nthreads, 3), max(max_events, nthreads))
    nvars = rng.choice((1, 2, 2, 2, 3))
    sizes = [1] * nthreads
    for _ in range(total - nthreads):
        sizes[rng.randrange(nthreads)] += 1
    budget = sc_budget
    bias = rng.random() < 0.5
    threads = []
    for n in sizes:
        ops = []
        for _ in range(n):
            op = random_op(rng, nvars, weak, budget, sc, bias, blocking,
                           many=locations if locations > len(VARS) else 0)
            budget -= sc_cost(op, sc)
            ops.append(op)
        threads.append(ops)
    return threads


def strategy(max_events: int = 8, weak: bool = True, sc: str = "fenced", sc_budget: int = 4,
             blocking: bool = False):
    """hypothesis strategy for a program: 2-4 threads, at most max_events ops in total, at
    most sc_budget RMWs on F after lowering with sc_accesses=sc."""
    from hypothesis import strategies as st

    def op(nvars):
        return st.builds(
            make_op,
            st.sampled_from(BLOCKING_KINDS if blocking else KINDS),
            st.sampled_from(VARS[:nvars]),
            st.integers(1, 2), st.integers(0, 2),
            st.just(None), st.sampled_from(CAS_FAIL_ORDERS), st.just(weak),
        )

    @st.composite
    def prog(draw):
        nvars = draw(st.sampled_from((2, 1, 3)))
        nthreads = draw(st.integers(2, 4))
        total = draw(st.integers(nthreads, max(max_events, nthreads)))
        sizes = [1] * nthreads
        for _ in range(total - nthreads):
            sizes[draw(st.integers(0, nthreads - 1))] += 1
        threads = []
        budget = sc_budget
        bias = draw(st.booleans())  # relaxed three times likelier: more non-robust programs
        for n in sizes:
            ops = []
            for _ in range(n):
                o = draw(op(nvars))
                kind = o[0]
                tight = budget < (2 if sc == "fenced" and kind != "fence" else 1)
                more = ("rlx",) * 3 if bias and kind != "fence" else ()
                if kind == "cas":
                    o1 = draw(st.sampled_from(more + (_no_sc(RMW_ORDERS) if tight else RMW_ORDERS)))
                    o2 = "acq" if (tight and o[5] == "sc") else o[5]
                    o = (o[0], o[1], o[2], o[3], o1, o2, o[6])
                else:
                    orders = {"ld": LOAD_ORDERS, "wait": LOAD_ORDERS, "st": STORE_ORDERS,
                              "fence": FENCE_ORDERS}.get(kind, RMW_ORDERS)
                    o = o[:-1] + (draw(st.sampled_from(more + (_no_sc(orders) if tight else orders))),)
                budget -= sc_cost(o, sc)
                ops.append(o)
            threads.append(ops)
        return threads

    return prog()


def show(threads) -> str:
    """One line per thread, C-like, for reports and failure messages."""
    names = {"rlx": "rlx", "con": "con", "acq": "acq", "rel": "rel", "ar": "acq_rel", "sc": "sc"}
    lines = []
    for k, ops in enumerate(threads):
        parts = []
        for op in ops:
            if op[0] == "ld":
                parts.append(f"ld({op[1]},{names[op[2]]})")
            elif op[0] == "st":
                parts.append(f"{op[1]}={op[2]}({names[op[3]]})")
            elif op[0] == "rmw":
                parts.append(f"{op[2]}({op[1]},{op[3]},{names[op[4]]})")
            elif op[0] == "cas":
                w = "casw" if op[6] else "cass"
                parts.append(f"{w}({op[1]},{op[2]}->{op[3]},{names[op[4]]},{names[op[5]]})")
            elif op[0] == "wait":
                parts.append(f"wait({op[1]}=={op[2]},{names[op[3]]})")
            elif op[0] == "bcas":
                parts.append(f"bcas({op[1]},{op[2]}->{op[3]},{names[op[4]]})")
            else:
                parts.append(f"F({names[op[1]]})")
        lines.append(f"T{k + 1}: " + "; ".join(parts))
    return "\n".join(lines)
