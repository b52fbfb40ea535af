"""Inline clocks (runtime/src/rsan_internal.h, docs/design/clocks.md §17): up to
RSAN_CLK_INLINE (6) thread slots a clock's entries live in its own cache line, and a join or
copy of two such clocks is two vector operations (entries 0-3 and 4-5) instead of a loop. A
join must raise exactly the entries where the source is above, and give the destination a new
version exactly when one was raised: a version names one content (docs/design/clocks.md §8),
so a join that changed only entry 4 or 5 and kept its version would make a later copy or join
of that version skip work it must do. Programs of 5 threads beside the main thread fill all six
slots; every thread clock at every location and every report must be test_model.py's
transcription's (the engine is the debug build, harness.py). Run in bursts (a thread runs a
few operations in a row), so that versions meet again."""
import random

from harness import Program
from test_clock_memo import random_bursts_exact, run_both


def test_joins_of_all_six_inline_entries_keep_every_clock_and_report(rt):
    rnd = random.Random(1712)
    exact, reported = random_bursts_exact(rt, rnd, 60, [1, 2, 3], lambda: 5)
    assert exact >= 40 and reported >= 20, (exact, reported)


def test_a_join_that_raises_only_entry_5_gives_a_new_version(rt):
    """t5 releases a, stores b relaxed and releases x. t1 acquires a (so it knows all t5 knew
    then), reads x relaxed, releases y, and releases its Tc into Tr by a fence (Tr takes Tc's
    version). It then acquires x again without a new fact (a re-read of the same write):
    Tc ⊔= W(x) raises only t5's entry, slot 5, in the second vector, and so covers t5's store
    of b. t1's next release fence copies Tc into Tr again, which is skipped if Tc kept its
    version: then Tr, and the relaxed store of z that carries it, would lack t5's store of b,
    and t2, which acquires z and then reads b, would not know it (its clocks at b, and its
    report, would differ from the transcription's)."""
    prog = Program(
        [("ld", "a", "acq"), ("ld", "x", "rlx"), ("st", "y", 2, "rel"), ("fence", "rel"), ("ld", "x", "acq"),
         ("fence", "rel"), ("st", "z", 3, "rlx")],
        [("ld", "z", "acq"), ("ld", "b", "rlx")],
        [("ld", "w", "rlx")],
        [("ld", "w", "rlx")],
        [("st", "a", 5, "rel"), ("st", "b", 6, "rlx"), ("st", "x", 1, "rel")],
    )
    sched = [2, 3, 4, 4, 4] + [0] * 7 + [1, 1]
    for mode in ("fenced", "ra"):
        got, want, inexact = run_both(rt, prog, sched, mode)
        assert not inexact
        assert got == want, mode
