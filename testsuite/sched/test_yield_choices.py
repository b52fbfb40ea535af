"""Yielding threads as choices (docs/scheduling.md, "Yielding threads in an exploration").

A thread that read one location three times with the same result *yields*: the scheduler runs
it only when nothing else can, unless a schedule names it. The brute force with ``yields=True``
names it too, so it enumerates the interleavings where the yielding thread's next operations run
between two steps of another thread; ``--explore`` must find every report of those."""

from __future__ import annotations

import pytest

import random

from .brute import TooManyInterleavings, compare, counted, yield_programs, yield_source
from .test_brute_force import build

HEAD = "#include <pthread.h>\n#include <stdatomic.h>\natomic_int x, y, d;\n"
RLX = "memory_order_relaxed"

#: main's (or T2's) stores: only a read of y between the two stores of y (value 1) leads T1 to
#: the relaxed read of d that is a message-passing violation (d=1 is not in T1's view).
STORES = f"""  atomic_store_explicit(&d, 1, {RLX});
  atomic_store_explicit(&y, 1, {RLX});
  atomic_store_explicit(&y, 2, {RLX});
"""
#: T1 re-reads x (nobody writes it) three times, so it yields, then reads y
READ_THEN_Y = f"""static void *t1(void *p) {{
  for (int i = 0; i < 3; i++) (void)atomic_load_explicit(&x, {RLX});
  if (atomic_load_explicit(&y, {RLX}) == 1) (void)atomic_load_explicit(&d, {RLX});
  return p;
}}
"""
#: the same with a bounded waiting loop that also reads y (a counter: not an await loop)
BOUNDED_WAIT = f"""static void *t1(void *p) {{
  int seen = 0;
  for (int i = 0; i < 5 && !atomic_load_explicit(&x, {RLX}); i++)
    if (i >= 3) seen = atomic_load_explicit(&y, {RLX});
  if (seen == 1) (void)atomic_load_explicit(&d, {RLX});
  return p;
}}
"""
#: main runs T1 and does the stores itself
MAIN_STORES = f"""int main(void) {{
  pthread_t a;
  pthread_create(&a, 0, t1, 0);
{STORES}  pthread_join(a, 0);
  return 0;
}}
"""
#: the stores in a thread of their own: the waiter yields before they run, and the reversal of
#: its read of y with the store of 2 (the read is news) runs it between them
THREAD_STORES = f"""static void *t2(void *p) {{
{STORES}  return p;
}}
int main(void) {{
  pthread_t a, b;
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}}
"""
#: name -> (source, robust)
PROGRAMS = {
    "yield_then_read_between": (HEAD + READ_THEN_Y + MAIN_STORES, False),
    "bounded_wait_reads_between": (HEAD + BOUNDED_WAIT + MAIN_STORES, False),
    "bounded_wait_third_thread": (HEAD + BOUNDED_WAIT + THREAD_STORES, False),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_explore_finds_the_reports_of_yielding_interleavings(name, tmp_path, pyrsan_cli, pyrsan_env):
    text, robust = PROGRAMS[name]
    exe = build(pyrsan_cli, pyrsan_env, text, tmp_path, name)
    result = compare(str(exe), tmp_path / "w", modes=("1", "0"), max_runs=5000, brute_yields=True)
    assert bool(result.brute_keys) == (not robust)
    assert all(complete for _, complete, *_ in result.explored.values())
    assert not result.disagreements(), result.disagreements()


#: A wait bounded by a counter whose exit by exhaustion (five reads of x = 0 before main's store)
#: is the only way to the violation: the yielding thread must re-read x, reading the same write,
#: while main can run. Its loop is marked (passes/awaitloops.py) and its header state (i) never
#: comes back, so the runtime lists it as *counting* and the explorer reverses its repeats
#: (docs/scheduling.md, "Yielding threads in an exploration"). Mutant: a repeat of a counting
#: thread treated as any repeat (explore.py `_reverse_race` without `node.counting`) misses it.
COUNTED_WAIT = HEAD + f"""
static void *t1(void *p) {{
  int i;
  for (i = 0; i < 5 && !atomic_load_explicit(&x, {RLX}); i++) ;
  if (i == 5 && atomic_load_explicit(&y, {RLX})) (void)atomic_load_explicit(&d, {RLX});
  return p;
}}
int main(void) {{
  pthread_t a;
  pthread_create(&a, 0, t1, 0);
  atomic_store_explicit(&d, 1, {RLX});
  atomic_store_explicit(&y, 1, {RLX});
"""
COUNTED_EXIT = COUNTED_WAIT + f"""  atomic_store_explicit(&x, 1, {RLX});
  pthread_join(a, 0);
  return 0;
}}
"""


def test_a_wait_that_ends_by_its_count_while_others_run(tmp_path, pyrsan_cli, pyrsan_env):
    exe = build(pyrsan_cli, pyrsan_env, COUNTED_EXIT, tmp_path, "counted")
    result = compare(str(exe), tmp_path / "w", modes=("1",), max_runs=20000, brute_yields=True)
    assert result.brute_keys
    assert not result.disagreements(), result.disagreements()


#: The same counted wait, and main returns without joining and without storing x: the only run
#: with the report gives the yielding (counting) thread its repeats before the process ends.
#: Mutant: no turn for yielding threads before `exit_process` (explore.py) misses it.
COUNTED_AT_EXIT = COUNTED_WAIT + """  return 0;
}
"""

#: An unmarked spin loop (it writes a plain global; bounded, so that the brute force ends),
#: yielding on x, whose pending read of y at main's return is news: main stored y since. (The
#: reversal of its earlier reads of y with main's store finds the report too: a loop whose state
#: comes back needs no turn at the exit, docs/scheduling.md.)
NEWS_AT_EXIT = HEAD + f"""
int spins;
static void *t1(void *p) {{
  for (int k = 0; k < 6 && !atomic_load_explicit(&x, {RLX}); k++) {{
    if (atomic_load_explicit(&y, {RLX})) {{
      (void)atomic_load_explicit(&d, {RLX});
      break;
    }}
    spins++;
  }}
  return p;
}}
int main(void) {{
  pthread_t a;
  pthread_create(&a, 0, t1, 0);
  atomic_store_explicit(&d, 1, {RLX});
  atomic_store_explicit(&y, 1, {RLX});
  return 0;
}}
"""


@pytest.mark.parametrize("name", ["counted_at_exit", "news_at_exit"])
def test_yielding_threads_get_their_turn_before_the_process_ends(name, tmp_path, pyrsan_cli, pyrsan_env):
    text = {"counted_at_exit": COUNTED_AT_EXIT, "news_at_exit": NEWS_AT_EXIT}[name]
    exe = build(pyrsan_cli, pyrsan_env, text, tmp_path, name)
    result = compare(str(exe), tmp_path / "w", modes=("1",), max_runs=20000, brute_yields=True)
    assert result.brute_keys
    assert all(complete for _, complete, *_ in result.explored.values())
    assert not result.disagreements(), result.disagreements()


def _steps(rows):
    """Steps from (tid, kind, addr, writes, yielding {tid: (kind, addr)}) rows."""
    from pyrsan.schedule import Op, Step
    out = []
    for tid, kind, addr, writes, yielding in rows:
        out.append(Step(tid, {tid: Op(kind, addr, writes)},
                        {t: Op(k, a, False) for t, (k, a) in yielding.items()}))
    return tuple(out)


def test_a_yielding_thread_has_news_when_a_word_its_spin_read_was_written():
    """explore.py `_yield_news`: T1 spins on x and y; main writes y after T1's last read of y;
    at the exit T1's pending operation is a re-read of x (a repeat), its read of y to come is
    news. Mutants: only the pending operation looked at, or every write counted (also one
    before T1's last read of y, or of a word T1 does not read)."""
    from pyrsan.explore import _yield_news

    spin = {1: ("load", "0x10")}
    base = [(1, "load", "0x10", False, {}), (1, "load", "0x18", False, {}), (1, "load", "0x10", False, {})]
    news = _steps(base + [(0, "store", "0x18", True, spin), (0, "exit_process", "0x0", False, spin)])
    assert _yield_news(1, 4, news)
    before = _steps([(0, "store", "0x18", True, {})] + base + [(0, "exit_process", "0x0", False, spin)])
    assert not _yield_news(1, 4, before)
    other = _steps(base + [(0, "store", "0x20", True, spin), (0, "exit_process", "0x0", False, spin)])
    assert not _yield_news(1, 4, other)
    # the pending read itself is news
    pending = _steps(base + [(0, "store", "0x18", True, {1: ("load", "0x18")}),
                             (0, "exit_process", "0x0", False, {1: ("load", "0x18")})])
    assert _yield_news(1, 4, pending)


def bounded_wait_differential(seed: int, count: int, max_interleavings: int, work, pyrsan_cli, pyrsan_env,
                              threads: int = 2) -> tuple[int, int]:
    """Random programs whose waits are bounded by a counter (brute.py `yield_programs`), each
    with main joining its threads and returning without joining, against the brute force with
    yielding threads as choices: (programs compared, programs with reports)."""
    compared = with_reports = 0
    for n, threads_ops in enumerate(yield_programs(random.Random(seed), count, max_interleavings, threads)):
        for join in (True, False):
            name = f"p{n}{'j' if join else 'n'}"
            exe = build(pyrsan_cli, pyrsan_env, yield_source(threads_ops, join=join), work, name)
            try:
                result = compare(str(exe), work / f"w{name}", modes=("1", "0"), max_runs=6000, brute_yields=True)
            except TooManyInterleavings:
                continue
            assert all(complete for _, complete, *_ in result.explored.values()), name
            assert not result.disagreements(), (name, result.disagreements())
            compared += 1
            with_reports += bool(result.brute_keys)
    return compared, with_reports


def test_bounded_waits_against_every_interleaving(tmp_path, pyrsan_cli, pyrsan_env):
    compared, with_reports = bounded_wait_differential(11, 2, 400, tmp_path, pyrsan_cli, pyrsan_env)
    assert compared == 4 and with_reports >= 2


@pytest.mark.slow
@pytest.mark.parametrize("seed,threads,max_interleavings", [(11, 2, 400), (12, 3, 800), (2, 2, 400)])
def test_more_bounded_waits_against_every_interleaving(seed, threads, max_interleavings, tmp_path, pyrsan_cli,
                                                        pyrsan_env):
    compared, _ = bounded_wait_differential(seed, 8 if threads == 2 else 4, max_interleavings, tmp_path,
                                            pyrsan_cli, pyrsan_env, threads)
    assert compared >= 8


#: A spin nested in a marked loop that counts (Lamport's fast mutex waits so for every b[j]): the
#: marked loop is the outer one, whose header (j) does not come back, but the thread spins in the
#: inner loop, which never passes that header; its repeats are repeats (the inner loop's state comes
#: back), and reversing them would not end until the backstop. The runtime lists a thread as
#: counting only when the re-read that made it yield came after an arrival at the marked header.
#: Mutant: `rsan_await_counting` without `yield_through_head` (the exploration meets yield-runs=64).
NESTED_SPIN = HEAD + f"""
atomic_int b[2];
static void *t1(void *p) {{
  for (int j = 0; j < 2; j++)
    while ((atomic_thread_fence(memory_order_seq_cst), atomic_load_explicit(&b[j], memory_order_acquire)) != 0)
      ;
  return p;
}}
static void *t2(void *p) {{
  atomic_store_explicit(&b[0], 0, memory_order_release);
  atomic_store_explicit(&b[1], 0, memory_order_release);
  return p;
}}
int main(void) {{
  pthread_t a, c;
  atomic_store_explicit(&b[0], 1, {RLX});
  atomic_store_explicit(&b[1], 1, {RLX});
  pthread_create(&a, 0, t1, 0);
  pthread_create(&c, 0, t2, 0);
  pthread_join(a, 0);
  pthread_join(c, 0);
  return 0;
}}
"""


def test_a_spin_inside_a_counting_loop_is_not_counting(tmp_path, pyrsan_cli, pyrsan_env):
    """No brute force here: the spin is a choice for ever under ``yields=True``."""
    from pyrsan.runner import ExploreOptions, RunOptions, explore_program

    exe = build(pyrsan_cli, pyrsan_env, NESTED_SPIN, tmp_path, "nested")
    options = RunOptions(work_dir=str(tmp_path / "w"), quiet=True, timeout=60, keep_going=True)
    result = explore_program(str(exe), [], options, ExploreOptions(max_schedules=2000, jobs=1))
    assert result.exploration is not None
    assert result.exploration.complete, result.exploration
    assert not [r for run in result.runs for r in run.reports if counted(r)]
