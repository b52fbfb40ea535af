"""Generator of C11 / C++11 litmus programs from the classic families, with their reference
verdicts (docs/design/litmus_families.md).

A family is a shape of abstract accesses per thread: ("W", x, v) a write, ("R", x) a read,
("S", x, v) a spin until x == v, ("N", x) a spin until x != 0. A *flavour* gives every
access its memory order and puts fences between a thread's accesses; a *variant* turns
writes or reads into read-modify-writes (exchange, fetch_add, strong / weak CAS, a CAS that
always fails); a *spawn* style says how the threads start (pthread, C11 thrd_create, C++
std::thread with std::atomic, or `main` running the last thread itself after starting the
others). Each generated program is the reference model's op tuples (testsuite/reference/rc20.py)
and its source rendered from the same tuples, so the expected verdict is the model's
(every RC20-consistent execution graph SC-consistent), never a name.

    from litmus_gen import generate
    for case in generate():  # Case(name, family, flavour, variant, spawn, threads, source, lines)
        ...
"""
from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testsuite" / "reference"))

import rc20  # noqa: E402

# -- families ------------------------------------------------------------------------------
# (name, threads): W = write, R = read, S = spin until == v, N = spin until != 0.
FAMILIES: dict[str, list[list[tuple]]] = {
    "SB": [[("W", "x", 1), ("R", "y")], [("W", "y", 1), ("R", "x")]],
    "MP": [[("W", "x", 1), ("W", "y", 1)], [("R", "y"), ("R", "x")]],
    "LB": [[("R", "x"), ("W", "y", 1)], [("R", "y"), ("W", "x", 1)]],
    "IRIW": [[("W", "x", 1)], [("W", "y", 1)], [("R", "x"), ("R", "y")], [("R", "y"), ("R", "x")]],
    "WRC": [[("W", "x", 1)], [("R", "x"), ("W", "y", 1)], [("R", "y"), ("R", "x")]],
    "ISA2": [[("W", "x", 1), ("W", "y", 1)], [("R", "y"), ("W", "z", 1)], [("R", "z"), ("R", "x")]],
    "2+2W": [[("W", "x", 1), ("W", "y", 2)], [("W", "y", 1), ("W", "x", 2)]],
    "2+2W+R": [[("W", "x", 1), ("W", "y", 2), ("R", "y")], [("W", "y", 1), ("W", "x", 2), ("R", "x")]],
    "R": [[("W", "x", 1), ("W", "y", 1)], [("W", "y", 2), ("R", "x")]],
    "S": [[("W", "x", 2), ("W", "y", 1)], [("R", "y"), ("W", "x", 1)]],
    "RWC": [[("W", "x", 1)], [("R", "x"), ("R", "y")], [("W", "y", 1), ("R", "x")]],
    "WRW+WR": [[("W", "x", 1)], [("R", "x"), ("W", "y", 1)], [("W", "y", 2), ("R", "x")]],
    "WRW+2W": [[("W", "x", 2)], [("R", "x"), ("W", "y", 1)], [("W", "y", 2), ("W", "x", 1)]],
    "Z6.0": [[("W", "x", 1), ("W", "y", 1)], [("R", "y"), ("W", "z", 1)], [("W", "z", 2), ("R", "x")]],
    "Z6.1": [[("W", "x", 2), ("W", "y", 1)], [("R", "y"), ("W", "z", 1)], [("W", "z", 2), ("W", "x", 1)]],
    "Z6.2": [[("W", "x", 1), ("W", "y", 1)], [("R", "y"), ("W", "z", 1)], [("R", "z"), ("W", "x", 2)]],
    "Z6.3": [[("W", "x", 1), ("W", "y", 1)], [("W", "y", 2), ("W", "z", 1)], [("R", "z"), ("R", "x")]],
    "3.SB": [[("W", "x", 1), ("R", "y")], [("W", "y", 1), ("R", "z")], [("W", "z", 1), ("R", "x")]],
    "3.LB": [[("R", "x"), ("W", "y", 1)], [("R", "y"), ("W", "z", 1)], [("R", "z"), ("W", "x", 1)]],
    "W+RWC": [[("W", "x", 1), ("W", "y", 1)], [("R", "y"), ("R", "z")], [("W", "z", 1), ("R", "x")]],
    "CoRR": [[("W", "x", 1)], [("R", "x"), ("R", "x")]],
    "CoWW": [[("W", "x", 1), ("W", "x", 2)], [("R", "x"), ("R", "x")]],
    "CoRW": [[("R", "x"), ("W", "x", 1)], [("W", "x", 2)]],
    "CoWR": [[("W", "x", 1), ("R", "x")], [("W", "x", 2), ("R", "x")]],
    # flag spin loops (passes/spinloops.py recognises both shapes)
    "MP+spin": [[("W", "x", 1), ("W", "y", 1)], [("S", "y", 1), ("R", "x")]],
    "MP+spinne": [[("W", "x", 1), ("W", "y", 1)], [("N", "y"), ("R", "x")]],
    "WRC+spin": [[("W", "x", 1)], [("S", "x", 1), ("W", "y", 1)], [("S", "y", 1), ("R", "x")]],
    "ISA2+spin": [[("W", "x", 1), ("W", "y", 1)], [("S", "y", 1), ("W", "z", 1)],
                  [("S", "z", 1), ("R", "x")]],
    "SB+spin": [[("W", "x", 1), ("R", "y"), ("W", "f", 1)], [("W", "y", 1), ("S", "f", 1), ("R", "x")]],
}
#: Not in the default set (named with --family): a 4-thread relay of spin loops, whose seq_cst
#: version takes thousands of schedules (docs/design/litmus_families.md §3 (2)).
EXTRA_FAMILIES: dict[str, list[list[tuple]]] = {
    "CHAIN4+spin": [[("W", "x", 1)], [("S", "x", 1), ("W", "y", 1)], [("S", "y", 1), ("W", "z", 1)],
                    [("S", "z", 1), ("R", "x")]],
}
SHAPES = {**FAMILIES, **EXTRA_FAMILIES}

# -- flavours ------------------------------------------------------------------------------
# (write order, read order, rmw order, fence between accesses or None)
FLAVOURS: dict[str, tuple] = {
    "rlx": ("rlx", "rlx", "rlx", None),
    "ra": ("rel", "acq", "ar", None),
    "sc": ("sc", "sc", "sc", None),
    "rlx+F": ("rlx", "rlx", "rlx", "sc"),
    "ra+F": ("rel", "acq", "ar", "sc"),
    "rlx+arF": ("rlx", "rlx", "rlx", "ar"),
}
VARIANTS = ("plain", "xchg", "fadd", "cas", "casw", "casfail")
SPAWNS = ("pthread", "thrd", "cxx", "main")


@dataclass
class Case:
    name: str
    family: str
    flavour: str
    variant: str
    spawn: str
    threads: list                 # rc20 op tuples per thread
    source: str = ""
    suffix: str = ".c"
    read_lines: set = field(default_factory=set)   # lines a report's access may name
    write_lines: set = field(default_factory=set)  # lines a report's stale write may name


def _op(acc, orders, variant: str, k: int):
    """One abstract access as an rc20 op under the flavour's orders and the variant."""
    w, r, u, _ = orders
    kind = acc[0]
    if kind == "W":
        x, v = acc[1], acc[2]
        if variant == "xchg":
            return ("rmw", x, "xchg", v, u)
        if variant in ("cas", "casw"):
            # succeeds on the initial value: a write in every graph where it reads 0
            return ("cas", x, 0, v, u, _fail_order(u), variant == "casw")
        return ("st", x, v, w)
    if kind == "R":
        x = acc[1]
        if variant == "fadd":
            return ("rmw", x, "add", 0, u)
        if variant == "casfail":
            # expects a value no write stores: always fails, a read with the failure order
            return ("cas", x, NEVER, NEVER + 1, u, r, False)
        return ("ld", x, r)
    if kind == "S":
        return ("wait", acc[1], acc[2], r)
    if kind == "N":
        return ("waitne", acc[1], 0, r)
    raise ValueError(acc)


#: The expected value of the variant "casfail": no write stores it, so the CAS always fails.
NEVER = 7


def _cas_role(expected: int) -> str:
    return "r" if expected == NEVER else "u"


def _fail_order(u: str) -> str:
    return {"rlx": "rlx", "acq": "acq", "rel": "rlx", "ar": "acq", "sc": "sc"}[u]


def build(family: str, flavour: str, variant: str = "plain", per_thread: list | None = None):
    """The rc20 threads of family x flavour x variant (per_thread: one flavour per thread)."""
    out = []
    for k, accs in enumerate(SHAPES[family]):
        fl = FLAVOURS[per_thread[k] if per_thread else flavour]
        ops = []
        for i, acc in enumerate(accs):
            if i and fl[3]:
                ops.append(("fence", fl[3]))
            ops.append(_op(acc, fl, variant, k))
        out.append(ops)
    return out


def applicable(family: str, variant: str) -> bool:
    kinds = {a[0] for t in SHAPES[family] for a in t}
    if variant == "casw" and kinds & {"S", "N"}:
        return False  # a spurious failure of the flag's write would leave the spinner spinning
    if variant in ("xchg", "cas", "casw"):
        return "W" in kinds
    if variant in ("fadd", "casfail"):
        return "R" in kinds
    return True


# -- rendering -----------------------------------------------------------------------------
C_ORD = {"rlx": "memory_order_relaxed", "acq": "memory_order_acquire", "rel": "memory_order_release",
         "ar": "memory_order_acq_rel", "sc": "memory_order_seq_cst", "con": "memory_order_consume"}
CXX_ORD = {k: "std::" + v for k, v in C_ORD.items()}
RMW_FN = {"xchg": "exchange", "add": "fetch_add", "sub": "fetch_sub"}


def _stmt_c(op, reg: str) -> tuple[str, str]:
    """(C statement, role): role 'r' read, 'w' write, 'u' both, '' none."""
    kind = op[0]
    if kind == "st":
        _, x, v, o = op
        if o == "sc":
            return f"atomic_store(&{x}, {v});", "w"
        return f"atomic_store_explicit(&{x}, {v}, {C_ORD[o]});", "w"
    if kind == "ld":
        _, x, o = op
        if o == "sc":
            return f"{reg} = atomic_load(&{x});", "r"
        return f"{reg} = atomic_load_explicit(&{x}, {C_ORD[o]});", "r"
    if kind == "rmw":
        _, x, name, v, o = op
        return f"{reg} = atomic_{RMW_FN[name]}_explicit(&{x}, {v}, {C_ORD[o]});", "u"
    if kind == "cas":
        _, x, e, d, s, f, weak = op
        w = "weak" if weak else "strong"
        return (f"{{ int e = {e}; {reg} = atomic_compare_exchange_{w}_explicit(&{x}, &e, {d}, "
                f"{C_ORD[s]}, {C_ORD[f]}); }}", _cas_role(e))
    if kind == "fence":
        return f"atomic_thread_fence({C_ORD[op[1]]});", ""
    if kind == "wait":
        _, x, v, o = op
        return f"while (atomic_load_explicit(&{x}, {C_ORD[o]}) != {v})\n    ;", "r"
    if kind == "waitne":
        _, x, _v, o = op
        return f"while (!atomic_load_explicit(&{x}, {C_ORD[o]}))\n    ;", "r"
    raise ValueError(op)


def _stmt_cxx(op, reg: str) -> tuple[str, str]:
    kind = op[0]
    if kind == "st":
        _, x, v, o = op
        return f"{x}.store({v}, {CXX_ORD[o]});", "w"
    if kind == "ld":
        _, x, o = op
        return f"{reg} = {x}.load({CXX_ORD[o]});", "r"
    if kind == "rmw":
        _, x, name, v, o = op
        return f"{reg} = {x}.{RMW_FN[name]}({v}, {CXX_ORD[o]});", "u"
    if kind == "cas":
        _, x, e, d, s, f, weak = op
        w = "weak" if weak else "strong"
        return (f"{{ int e = {e}; {reg} = {x}.compare_exchange_{w}(e, {d}, {CXX_ORD[s]}, "
                f"{CXX_ORD[f]}); }}", _cas_role(e))
    if kind == "fence":
        return f"std::atomic_thread_fence({CXX_ORD[op[1]]});", ""
    if kind == "wait":
        _, x, v, o = op
        return f"while ({x}.load({CXX_ORD[o]}) != {v})\n    ;", "r"
    if kind == "waitne":
        _, x, _v, o = op
        return f"while (!{x}.load({CXX_ORD[o]}))\n    ;", "r"
    raise ValueError(op)


def render(case: Case) -> None:
    """Fills case.source, suffix, read_lines and write_lines from case.threads."""
    cxx = case.spawn == "cxx"
    stmt = _stmt_cxx if cxx else _stmt_c
    locs = sorted({op[1] for t in case.threads for op in t if op[0] != "fence"})
    n = len(case.threads)
    nregs = sum(len(t) for t in case.threads)
    lines: list[str] = [
        f"// {case.name}: generated by benchmarks/litmus_gen.py (family {case.family}, flavour "
        f"{case.flavour}, variant {case.variant}, threads by {case.spawn})",
    ]
    if cxx:
        lines += ["#include <atomic>", "#include <cstdio>", "#include <thread>", ""]
        lines.append(f"std::atomic<int> {', '.join(locs)};")
    else:
        inc = "#include <threads.h>" if case.spawn == "thrd" else "#include <pthread.h>"
        lines += [inc, "#include <stdatomic.h>", "#include <stdio.h>", ""]
        lines.append(f"atomic_int {', '.join(locs)};")
    lines.append(f"int r[{nregs}];")
    lines.append("")
    reads: set[int] = set()
    writes: set[int] = set()
    reg = 0
    main_thread = n - 1 if case.spawn == "main" else None
    bodies: list[list[str]] = []
    for k, ops in enumerate(case.threads):
        body = []
        for op in ops:
            text, role = stmt(op, f"r[{reg}]")
            if role:
                reg += 1
            body.append((text, role))
        bodies.append(body)

    def emit(body, indent="  "):
        for text, role in body:
            lineno = len(lines) + 1
            if "r" in role or "u" in role:
                reads.add(lineno)
            if "w" in role or "u" in role:
                writes.add(lineno)
            for part in text.split("\n"):
                lines.append(indent + part.strip() if part.strip() != ";" else indent + "  ;")

    for k, body in enumerate(bodies):
        if k == main_thread:
            continue
        if cxx:
            lines.append(f"static void t{k}() {{")
        elif case.spawn == "thrd":
            lines.append(f"static int t{k}(void *arg) {{")
            lines.append("  (void)arg;")
        else:
            lines.append(f"static void *t{k}(void *arg) {{")
            lines.append("  (void)arg;")
        emit(body)
        if not cxx:
            lines.append("  return 0;" if case.spawn == "thrd" else "  return NULL;")
        lines.append("}")
        lines.append("")
    spawned = [k for k in range(n) if k != main_thread]
    if cxx:
        lines.append("int main() {")
        for k in spawned:
            lines.append(f"  std::thread th{k}(t{k});")
        for k in spawned:
            lines.append(f"  th{k}.join();")
    else:
        lines.append("int main(void) {")
        tt = "thrd_t" if case.spawn == "thrd" else "pthread_t"
        lines.append(f"  {tt} th[{len(spawned)}];")
        for i, k in enumerate(spawned):
            if case.spawn == "thrd":
                lines.append(f"  thrd_create(&th[{i}], t{k}, NULL);")
            else:
                lines.append(f"  pthread_create(&th[{i}], NULL, t{k}, NULL);")
        if main_thread is not None:
            emit(bodies[main_thread])
        for i, _k in enumerate(spawned):
            if case.spawn == "thrd":
                lines.append(f"  thrd_join(th[{i}], NULL);")
            else:
                lines.append(f"  pthread_join(th[{i}], NULL);")
    fmt = " ".join(["%d"] * nregs)
    args = ", ".join(f"r[{i}]" for i in range(nregs))
    printf = "std::printf" if cxx else "printf"
    if nregs:
        lines.append(f'  {printf}("{fmt}\\n", {args});')
    lines.append("  return 0;")
    lines.append("}")
    case.source = "\n".join(lines) + "\n"
    case.suffix = ".cpp" if cxx else ".c"
    case.read_lines, case.write_lines = reads, writes


def generate(families=None, flavours=None, variants=VARIANTS, spawns=SPAWNS, mixed: int = 2,
             seed: int = 1, all_spawns: bool = False) -> list[Case]:
    """Every family x flavour x applicable variant, plus `mixed` random per-thread flavour
    mixes per family; each program with one spawn style (rotating), or all with all_spawns."""
    rng = random.Random(seed)
    cases: list[Case] = []
    index = 0
    for family in families or FAMILIES:
        combos = []
        for flavour in flavours or FLAVOURS:
            for variant in variants:
                if applicable(family, variant) and (variant == "plain" or flavour in ("rlx", "ra", "sc")):
                    combos.append((flavour, variant, None))
        for m in range(mixed):
            per = [rng.choice(tuple(FLAVOURS)) for _ in SHAPES[family]]
            combos.append((f"mix{m}:" + "/".join(per), "plain", per))
        for flavour, variant, per in combos:
            styles = spawns if all_spawns else (spawns[index % len(spawns)],)
            index += 1
            for spawn in styles:
                threads = build(family, flavour, variant, per)
                slug = (f"{family}_{flavour}_{variant}_{spawn}".replace("+", "p").replace(".", "")
                        .replace(":", "_").replace("/", "-").lower())
                case = Case(slug, family, flavour, variant, spawn, threads)
                render(case)
                cases.append(case)
    return cases


#: The model's cost driver: every SC fence is an RMW on one location F (a seq_cst access under
#: sc_accesses=fenced two), and the graphs multiply with their orders. 8 such RMWs take the
#: model a few seconds; 10 (a 3-thread program of five seq_cst accesses) more than a minute
#: for 100,000 graphs. Beyond MAX_F_RMWS the verdict is left unknown.
MAX_F_RMWS = 8


def f_rmws(threads, sc: str = "fenced") -> int:
    return sum(1 for t in threads for e in rc20.expand_thread(t, sc) if e.loc == rc20.FLOC)


def reference_verdict(case: Case, limit: int = 400_000, sc: str = "fenced") -> bool | None:
    """The reference model's verdict under sc_accesses=sc (fenced: pyrsan's default), None when
    the program has more than MAX_F_RMWS SC-fence RMWs or the model's search exceeds `limit`
    graphs."""
    if f_rmws(case.threads, sc) > MAX_F_RMWS:
        return None
    try:
        return rc20.Enumerator(case.threads, sc, limit=limit).run().robust
    except RuntimeError:
        return None
