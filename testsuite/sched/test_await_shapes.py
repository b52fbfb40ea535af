"""Waiting loops of two more shapes (passes/awaitloops.py `pure_iterations`, `select_nested`;
docs/design/exploration.md §22), against every interleaving (the brute force with every
iteration a step, ``sched_await=0``): the same verdict and report groups, no other report.

- *Dekker's loop*: a waiting loop one of whose paths stores (and waits) before it goes round
  again; its other iterations only load and fence (benchmarks/programs/sched/dekker_tree.c).
- *Waits in a counting loop*: ``for (j = 0; j < N; j++) while ((fence, load(&v[j])) == 0);``
  (lamport_fast.c); the counting loop loads nothing itself, and the inner waits are marked.
"""

from __future__ import annotations

import random

import pytest

from .test_await_loops import DEFAULT_AWAIT, random_blocked

FENCE = "atomic_thread_fence(memory_order_seq_cst);"
ORDERS = {"rlx": "memory_order_relaxed", "acq": "memory_order_acquire", "rel": "memory_order_release"}
#: blocked iterations under both relations, and the default await under both
MODES = (("-2", "0"), ("-2", "1")) + DEFAULT_AWAIT


def _load(rng: random.Random, loc: str) -> str:
    return f"atomic_load_explicit(&{loc}, {ORDERS[rng.choice(('rlx', 'rlx', 'acq'))]})"


def _ops(rng: random.Random, locs: tuple[str, ...], value, n: int) -> list[str]:
    out = []
    for _ in range(n):
        kind, loc = rng.choice(("st", "ld", "fence")), rng.choice(locs)
        if kind == "st":
            out.append(f"atomic_store_explicit(&{loc}, {next(value)}, {ORDERS[rng.choice(('rlx', 'rel'))]});")
        else:
            out.append(f"(void){_load(rng, loc)};" if kind == "ld" else FENCE)
    return out


def _program(rng: random.Random, globals_: str, t1: str, main_ops: list[str], locs: tuple[str, ...], value,
             extra: int = 2, third: float = 0.5) -> str:
    for _ in range(rng.randint(0, extra)):
        main_ops.insert(rng.randint(0, len(main_ops)), _ops(rng, locs, value, 1)[0])
    third = rng.random() < third
    t2 = ("static void *t2(void *p) { " + " ".join(_ops(rng, locs, value, rng.randint(1, extra))) + " return p; }\n"
          if third else "")
    return ("#include <pthread.h>\n#include <stdatomic.h>\n" + globals_ + t1 + t2 +
            "int main(void) {\n  pthread_t a" + (", b" if third else "") + ";\n  pthread_create(&a, 0, t1, 0);\n" +
            ("  pthread_create(&b, 0, t2, 0);\n" if third else "") +
            "  " + "\n  ".join(main_ops) + "\n  pthread_join(a, 0);\n" + ("  pthread_join(b, 0);\n" if third else "") +
            "  return 0;\n}\n")


def dekker_program(rng: random.Random) -> str:
    """T1 loops: (an SC fence or not) load `first`, leave when non-zero; (a fence or not) load
    `second`; when that is 0, store to `third` and wait (a spin load) until `second` is non-zero.
    main stores non-zero values to `first` and `second` (so that the loop ends), in either order;
    main and, half the time, T2 add loads, stores and SC fences."""
    first, second, third = rng.sample(("x", "y", "z"), 3)
    value = iter(range(1, 100))

    def fenced() -> str:
        return FENCE if rng.random() < 0.5 else ""

    after = f" (void){_load(rng, rng.choice(('x', 'y', 'z')))};" if rng.random() < 0.5 else ""
    t1 = (f"static void *t1(void *p) {{ (void)atomic_load_explicit(&z, memory_order_relaxed);\n"
          f"  for (;;) {{ {fenced()} int a = {_load(rng, first)}; if (a) break;\n"
          f"    {fenced()} int b = {_load(rng, second)};\n"
          f"    if (!b) {{ atomic_store_explicit(&{third}, {next(value)}, {ORDERS[rng.choice(('rlx', 'rel'))]});\n"
          f"      while (!{_load(rng, second)}) ; }} }}{after} return p; }}\n")
    main_ops = [f"atomic_store_explicit(&{loc}, {next(value)}, {ORDERS[rng.choice(('rlx', 'rel'))]});"
                for loc in rng.sample((first, second), 2)]
    return _program(rng, "atomic_int x, y, z;\n", t1, main_ops, ("x", "y", "z"), value)


def counted_waits_program(rng: random.Random) -> str:
    """T1: for j in 0..N-1 (N 2 or 3), wait with an SC fence before each load until the word
    `w(j)` is non-zero, where w(j) is v[j] or, a third of the time, the same word x for every j
    (re-reads across the inner loops' instances: the counting thread, docs/scheduling.md
    "Counting loops"). main stores non-zero values to every word waited on; main and, half the
    time, T2 add loads, stores (some of 0: a word waited on may be cleared again) and fences."""
    n = rng.choice((2, 2, 2, 3))
    same = rng.random() < 1 / 3
    word = "x" if same else "v[j]"
    value = iter(range(1, 100))
    after = f" (void){_load(rng, rng.choice(('x', 'v[0]', 'v[1]')))};" if rng.random() < 0.3 else ""
    t1 = (f"static void *t1(void *p) {{ (void)atomic_load_explicit(&v[2], memory_order_relaxed);\n"
          f"  for (int j = 0; j < {n}; j++) while (({FENCE[:-1]}, {_load(rng, word)}) == 0) ;{after} return p; }}\n")
    words = ("x",) if same else tuple(f"v[{j}]" for j in range(n))
    main_ops = [f"atomic_store_explicit(&{loc}, {next(value)}, {ORDERS[rng.choice(('rlx', 'rel'))]});"
                for loc in rng.sample(words, len(words))]
    clear = iter([0] * 100)
    ops = ("x", "v[0]", "v[1]")
    program = _program(rng, "atomic_int x, v[3];\n", t1, main_ops, ops, value, extra=1, third=0.0)
    if rng.random() < 0.3:   # a clear after the first store: the waiter may wait again
        program = program.replace("  pthread_join(a, 0);",
                                  f"  atomic_store_explicit(&{words[0]}, {next(clear)}, memory_order_relaxed);\n"
                                  f"  atomic_store_explicit(&{words[0]}, {next(value)}, memory_order_release);\n"
                                  "  pthread_join(a, 0);", 1)
    return program


def test_dekker_loops_on_random_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, _ = random_blocked(3, 3, tmp_path, pyrsan_cli, pyrsan_env, MODES, make=dekker_program)
    assert compared >= 2


def test_counted_waits_on_random_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, _ = random_blocked(3, 3, tmp_path, pyrsan_cli, pyrsan_env, MODES, make=counted_waits_program)
    assert compared >= 2


@pytest.mark.slow
@pytest.mark.parametrize("make", [dekker_program, counted_waits_program])
def test_waiting_loop_shapes_on_more_random_programs(make, tmp_path, pyrsan_cli, pyrsan_env):
    compared, reported = random_blocked(11, 16, tmp_path, pyrsan_cli, pyrsan_env, MODES, make=make)
    assert compared >= 8
