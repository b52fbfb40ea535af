"""Waits enabled by memory (runtime/src/sched_wait.c, docs/design/exploration.md §23): under
``--explore`` a wait or recognised spin load (``while (load(&y) != C) ;``) is a step only where
memory lets it through; its failed attempts are no steps. Checked against every interleaving of
the program's own steps (testsuite/sched/brute.py runs with ``sched_wait_value=0``: each attempt a
step, a failed one too): the same verdict, every report key and group, no other; and fewer
schedules than with every attempt a step."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from .brute import TooManyInterleavings, compare
from .test_brute_force import build

ORDERS = ("memory_order_relaxed", "memory_order_acquire", "memory_order_release", "memory_order_seq_cst")
#: seq_cst a sixth of the time: a seq_cst access is three steps (too many interleavings)
LOADS = ("memory_order_relaxed",) * 2 + ("memory_order_acquire",) * 3 + ("memory_order_seq_cst",)
STORES = ("memory_order_relaxed",) * 2 + ("memory_order_release",) * 3 + ("memory_order_seq_cst",)
FENCE = "atomic_thread_fence(memory_order_seq_cst);"


def wait_program(rng: random.Random) -> str:
    """T1 stores to x, then to y a few values, among them values that keep the waits waiting
    (0 clears), its last store one that lets every wait through (so every run ends); T2 waits on
    y, for one value, for any non-zero value, or for a bit of it, then loads x (relaxed or
    acquire); main, and a third of the time T3 (which may wait on y too), add a store or load of
    x or an SC fence. Orders are drawn from relaxed, release / acquire and seq_cst (a seq_cst
    wait is three steps under sc_accesses=fenced, its SC fence part of the event)."""
    last = rng.choice((1, 3))
    ys = [rng.choice((0, 1, 2, 3)), last]

    def wait() -> str:
        order = rng.choice(LOADS)
        shape = rng.choice(("eq", "nonzero", "bit"))
        if shape == "eq":
            return f"while (atomic_load_explicit(&y, {order}) != {last}) ;"
        if shape == "nonzero":
            return f"while (atomic_load_explicit(&y, {order}) == 0) ;"
        return f"while ((atomic_load_explicit(&y, {order}) & 1) == 0) ;"

    def other() -> str:
        kind = rng.choice(("st", "ld", "fence"))
        if kind == "st":
            return f"atomic_store_explicit(&x, {rng.randint(1, 6)}, {rng.choice(STORES)});"
        if kind == "ld":
            return f"(void)atomic_load_explicit(&x, {rng.choice(LOADS)});"
        return FENCE

    t1 = [f"atomic_store_explicit(&x, 7, {rng.choice(ORDERS[:3:2])});"]   # message passing through y
    for v in ys:
        if rng.random() < 0.25:
            t1.append(other())
        t1.append(f"atomic_store_explicit(&y, {v}, {rng.choice(STORES)});")
    t2 = [FENCE] if rng.random() < 0.2 else []
    t2 += [wait(), f"(void)atomic_load_explicit(&x, {rng.choice(LOADS[:-1])});"]
    third = rng.random() < 0.3
    t3 = [wait() if rng.random() < 0.5 else other()] if third else []
    main_ops = [other()] if rng.random() < 0.5 else []
    threads = [("t1", t1), ("t2", t2)] + ([("t3", t3)] if third else [])
    text = "#include <pthread.h>\n#include <stdatomic.h>\natomic_int x, y;\n"
    for name, ops in threads:
        text += f"static void *{name}(void *p) {{ " + " ".join(ops) + " return p; }\n"
    text += "int main(void) {\n  pthread_t th[3];\n"
    for k, (name, _) in enumerate(threads):
        text += f"  pthread_create(&th[{k}], 0, {name}, 0);\n"
    text += "".join(f"  {op}\n" for op in main_ops)
    text += "".join(f"  pthread_join(th[{k}], 0);\n" for k in range(len(threads)))
    return text + "  return 0;\n}\n"


def differential(seed: int, count: int, work: Path, pyrsan_cli, pyrsan_env) -> tuple[int, int]:
    """(programs compared, with reports): programs drawn until ``count`` fit the brute force's
    3,000 interleavings (at most 3 * count drawn), each explored with today's relation and with
    the closure."""
    rng = random.Random(seed)
    compared = reported = 0
    for k in range(3 * count):
        if compared == count:
            break
        text = wait_program(rng)
        (work / f"p{k}").mkdir()
        exe = build(pyrsan_cli, pyrsan_env, text, work / f"p{k}", "p")
        try:
            result = compare(str(exe), work / f"w{k}", ("0", "1"), max_runs=3000)
        except TooManyInterleavings:
            continue
        assert not result.disagreements(), (text, result.disagreements())
        assert all(complete for _, complete, *_ in result.explored.values()), text
        compared += 1
        reported += bool(result.brute_keys)
    return compared, reported


def test_waits_enabled_by_memory_on_random_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, reported = differential(1, 3, tmp_path, pyrsan_cli, pyrsan_env)
    assert compared == 3 and reported >= 1


@pytest.mark.slow
def test_waits_enabled_by_memory_on_more_random_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, reported = differential(2, 16, tmp_path, pyrsan_cli, pyrsan_env)
    assert compared == 16 and reported >= 4


#: T1 waits for y == 2 while main stores 1 (a value that keeps it waiting), then 2.
WAITER = """#include <pthread.h>
#include <stdatomic.h>
atomic_int x, y;
static void *t1(void *p) { while (atomic_load_explicit(&y, memory_order_acquire) != 2) ;
  (void)atomic_load_explicit(&x, memory_order_relaxed); return p; }
int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t1, 0);
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  atomic_store_explicit(&y, 1, memory_order_release);
  atomic_store_explicit(&y, 2, memory_order_release);
  pthread_join(a, 0);
  return 0;
}
"""


def _schedules(exe: Path, work: Path, pyrsan_cli, pyrsan_env, options: str) -> int | None:
    """The schedules of a complete ``--explore`` (None: not complete)."""
    env = dict(pyrsan_env, PYRSAN_OPTIONS=options) if options else pyrsan_env
    proc = subprocess.run([*pyrsan_cli, "run", "--explore", "--keep-going", str(exe)], env=env,
                          capture_output=True, text=True, timeout=600, check=False, cwd=work)
    tag = "exploration complete: "
    text = proc.stdout + proc.stderr
    return int(text.split(tag)[1].split()[0].replace(",", "")) if tag in text else None


def test_a_failed_wait_attempt_is_no_step(tmp_path, pyrsan_cli, pyrsan_env):
    """The waiter's wait is never a candidate while y holds 0 or 1, and the exploration runs one
    schedule per place of the successful read among main's steps after its store of 2 (one
    class: the wait after the store of 2 is dependent with nothing later), where every attempt
    as a step takes one per place of each failed attempt among the stores. Mutant: the wait's
    point always the plain one (atomic.c) gives the same count both ways."""
    exe = build(pyrsan_cli, pyrsan_env, WAITER, tmp_path, "w")
    by_memory = _schedules(exe, tmp_path, pyrsan_cli, pyrsan_env, "")
    every = _schedules(exe, tmp_path, pyrsan_cli, pyrsan_env, "sched_wait_value=0")
    assert by_memory is not None and every is not None, (by_memory, every)
    assert by_memory < every, (by_memory, every)
    # the trace of the default continuation: T1's wait is a candidate only once y == 2
    trace = tmp_path / "trace.jsonl"
    subprocess.run([str(exe)], env=dict(pyrsan_env, PYRSAN_OPTIONS=f"sched=dfs trace_path={trace}"),
                   capture_output=True, timeout=120, check=False)
    steps = [line for line in map(json.loads, trace.read_text().splitlines()) if "step" in line]

    def chosen(line: dict) -> list:
        return next(op for op in line["enabled"] if op[0] == line["tid"])

    waits = [line["step"] for line in steps for op in line["enabled"] if op[:2] == [1, "wait"]]
    stores = [line["step"] for line in steps if chosen(line)[:2] == [0, "store"]]
    assert len(stores) == 3 and waits, steps
    assert min(waits) > stores[-1], steps   # not a candidate before main's store of 2
    assert sum(chosen(line)[:2] == [1, "wait"] for line in steps) == 1, steps   # the successful read


NEVER = """#include <pthread.h>
#include <stdatomic.h>
atomic_int y;
static void *t1(void *p) { while (atomic_load_explicit(&y, memory_order_acquire) != 2) ; return p; }
int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t1, 0);
  atomic_store_explicit(&y, 1, memory_order_release);
  pthread_join(a, 0);
  return 0;
}
"""


def test_a_wait_never_let_through_is_a_deadlock(tmp_path, pyrsan_cli, pyrsan_env):
    """The program hangs (T1 spins for ever, main joins it): every run ends as a deadlock with
    T1 waiting for a write to y, as with every attempt a step. Mutant: a wait point that is
    always enabled spins to max_steps (a bound, not a deadlock)."""
    exe = build(pyrsan_cli, pyrsan_env, NEVER, tmp_path, "n")
    for options in ("", "sched_wait_value=0"):
        trace = tmp_path / f"trace{len(options)}.jsonl"
        env = dict(pyrsan_env, PYRSAN_OPTIONS=f"sched=dfs trace_path={trace} {options}")
        proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=120, check=False)
        assert proc.returncode == 87, (options, proc.stderr)
        end = json.loads(trace.read_text().splitlines()[-1])
        assert end["end"] == "deadlock", end
        assert [1, "wait"] in [b[:2] for b in end["blocked"]], end
