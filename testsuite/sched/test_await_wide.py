"""Wide iterations (docs/design/exploration.md §"Wide iterations", runtime/src/sched_await.c): a
waiting loop that reads many times an iteration (more than the 16 reads the runtime once kept)
parks like a narrow one, under the default ``pyrsan run`` and under ``--explore``: a verdict, not
a thread spinning to max_steps (a hang, exit 3). Checked against every interleaving (the brute
force with ``sched_await=0``) on random programs whose iterations read 17-24 times."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from .brute import TooManyInterleavings, every_interleaving
from .test_await_loops import disagreements, explored_groups
from .test_brute_force import build

FENCE = "atomic_thread_fence(memory_order_seq_cst);"


def scan_program(width: int, relaxed: bool, fenced: bool = False) -> str:
    """T1 waits for any of ``width`` flags (a scan of an array: ``width`` reads an iteration, an
    SC fence after the first when ``fenced``: a rotated unit, §10); main stores data, then the
    last flag. Release/acquire: robust; relaxed: message passing, not robust."""
    store, load = ("memory_order_relaxed",) * 2 if relaxed else ("memory_order_release", "memory_order_acquire")
    fence = FENCE if fenced else ""
    return f"""#include <pthread.h>
#include <stdatomic.h>
atomic_int flags[{width}];
atomic_int data;
static void *t1(void *p) {{
  (void)atomic_load_explicit(&data, memory_order_relaxed);
  for (;;) {{
    int any = atomic_load_explicit(&flags[0], {load}); {fence}
    for (int i = 1; i < {width}; i++) any |= atomic_load_explicit(&flags[i], {load});
    if (any) break;
  }}
  return atomic_load_explicit(&data, memory_order_relaxed) ? p : (void *)1;
}}
int main(void) {{
  pthread_t a;
  pthread_create(&a, 0, t1, 0);
  atomic_store_explicit(&data, 1, memory_order_relaxed);
  atomic_store_explicit(&flags[{width} - 1], 1, {store});
  pthread_join(a, 0);
  return 0;
}}
"""


@pytest.mark.parametrize("width", [17, 40, 100])
@pytest.mark.parametrize("relaxed", [False, True], ids=["robust", "mp"])
def test_a_wide_waiting_loop_gets_a_verdict(width, relaxed, tmp_path, pyrsan_cli, pyrsan_env, run_pyrsan):
    """The default command and ``--explore`` (today's relation and the closure): robust where
    robust, the report where not; never a hang. Mutant: the 16-read cap (AW_READS_MAX 16): the
    waiter never repeats, spins to max_steps, and the run exits 3."""
    exe = build(pyrsan_cli, pyrsan_env, scan_program(width, relaxed), tmp_path, "p")
    for closure in ("0", "1"):
        complete, keys, _, _ = explored_groups(exe, tmp_path / f"e{closure}", "1", closure)
        assert complete and bool(keys) == relaxed, (closure, keys)
    proc = run_pyrsan("run", exe, cwd=tmp_path)
    assert proc.returncode == (66 if relaxed else 0), proc.stderr
    if not relaxed:
        assert "exploration complete" in proc.stderr, proc.stderr


def test_a_wide_rotated_unit_gets_a_verdict(tmp_path, pyrsan_cli, pyrsan_env):
    """A wide loop that fences after its first load (units rotated to start at the fence, §10)
    under the default await and under blocked iterations (sched_await=-2)."""
    exe = build(pyrsan_cli, pyrsan_env, scan_program(40, True, fenced=True), tmp_path, "p")
    for flag in ("1", "-2"):
        complete, keys, _, _ = explored_groups(exe, tmp_path / f"e{flag}", flag, "0")
        assert complete and keys, flag


def wide_program(rng: random.Random) -> str:
    """A random waiting program whose loop reads 17-24 times an iteration: T1 loads z first (the
    scheduler knows it before its loop), then loops over loads of two of x, y, z (each read
    several times, in a random order, with SC fences here and there and, in some, reads of the
    third location) until both (or either) read non-zero. Main stores non-zero values to both,
    in either order, with a load, store or SC fence added; half the time a third thread adds
    one or two. The loop reads at most three words, so every interleaving's spin is seen by the
    brute force (docs/scheduling.md: a yield after three reads of one value)."""
    orders = {"rlx": "memory_order_relaxed", "acq": "memory_order_acquire", "rel": "memory_order_release"}
    first, second = rng.sample(("x", "y", "z"), 2)
    third = ({"x", "y", "z"} - {first, second}).pop()
    value = iter(range(1, 100))

    def load(loc: str) -> str:
        return f"atomic_load_explicit(&{loc}, {orders[rng.choice(('rlx', 'rlx', 'acq'))]})"

    def op() -> str:
        kind, loc = rng.choice(("st", "ld", "fence")), rng.choice(("x", "y", "z"))
        if kind == "st":
            return f"atomic_store_explicit(&{loc}, {next(value)}, {orders[rng.choice(('rlx', 'rel'))]});"
        return f"(void){load(loc)};" if kind == "ld" else FENCE

    width = rng.randint(17, 24)
    others = rng.choice((0, 0, 2))
    reads = ["a"] * ((width - others) // 2) + ["b"] * (width - others - (width - others) // 2) + ["c"] * others
    rng.shuffle(reads)
    fences = rng.choice((0, 0, 1, 2))
    body = []
    for var in reads:
        if rng.random() < fences / width:
            body.append(FENCE)
        loc = {"a": first, "b": second, "c": third}[var]
        body.append(f"{var} |= {load(loc)};")
    cond = rng.choice(("a && b", "a || b"))
    t1 = ("static void *t1(void *p) { (void)atomic_load_explicit(&z, memory_order_relaxed);\n"
          "  for (;;) { int a = 0, b = 0, c = 0;\n    " + "\n    ".join(body) +
          f"\n    if (({cond}) && c >= 0) break; }}\n  return p; }}\n")
    main_ops = [f"atomic_store_explicit(&{loc}, {next(value)}, {orders[rng.choice(('rlx', 'rel'))]});"
                for loc in rng.sample((first, second), 2)]
    main_ops.insert(rng.randint(0, 2), op())
    extra = rng.random() < 0.5
    t2 = ("static void *t2(void *p) { " + " ".join(op() for _ in range(rng.randint(1, 2))) + " return p; }\n"
          if extra else "")
    return ("#include <pthread.h>\n#include <stdatomic.h>\natomic_int x, y, z;\n" + t1 + t2 +
            "int main(void) {\n  pthread_t a" + (", b" if extra else "") + ";\n  pthread_create(&a, 0, t1, 0);\n" +
            ("  pthread_create(&b, 0, t2, 0);\n" if extra else "") +
            "  " + "\n  ".join(main_ops) + "\n  pthread_join(a, 0);\n" +
            ("  pthread_join(b, 0);\n" if extra else "") + "  return 0;\n}\n")


#: (sched_await, sched_closure): the default await under today's relation and the closure, and
#: blocked iterations under both
MODES = (("1", "0"), ("1", "1"), ("-2", "0"), ("-2", "1"))


def random_wide(seed: int, count: int, tmp_path: Path, pyrsan_cli, pyrsan_env,
                modes: tuple[tuple[str, str], ...] = MODES) -> tuple[int, int]:
    """wide_program's random programs: (compared, with reports). Each mode's exploration is
    complete with no thread spinning to max_steps and, where every interleaving fits the brute
    force's 20,000, has their verdict and groups and no other report."""
    rng = random.Random(seed)
    compared = reported = 0
    for k in range(count):
        text = wide_program(rng)
        (tmp_path / f"p{k}").mkdir()
        exe = build(pyrsan_cli, pyrsan_env, text, tmp_path / f"p{k}", "p")
        try:
            brute = every_interleaving(str(exe), tmp_path / f"b{k}", max_runs=20000, await_loops=False)
        except TooManyInterleavings:
            brute = None
        for flag, closure in modes:
            complete, *explored = explored_groups(exe, tmp_path / f"e{k}_{flag}_{closure}", flag, closure)
            assert complete, (flag, closure, text)
            if brute is not None:
                wrong = disagreements(brute, complete, *explored[:2])
                assert not wrong, (flag, closure, wrong, text)
        if brute is not None:
            compared += 1
            reported += bool(brute.keys)
    return compared, reported


def test_wide_iterations_on_random_waiting_programs(tmp_path, pyrsan_cli, pyrsan_env):
    """Mutant: the 16-read cap (every program's waiter spins to max_steps)."""
    compared, _ = random_wide(1, 2, tmp_path, pyrsan_cli, pyrsan_env)
    assert compared >= 1


@pytest.mark.slow
def test_wide_iterations_on_more_random_waiting_programs(tmp_path, pyrsan_cli, pyrsan_env):
    compared, reported = random_wide(2, 12, tmp_path, pyrsan_cli, pyrsan_env)
    assert compared >= 6 and reported >= 1
