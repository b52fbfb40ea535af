"""The location record's evicted-fact table (runtime/src/facts.c, docs/design/clocks.md §15):
its bookkeeping lives in the table's allocation, not in the record. Hot locations with many
threads fill a sparse table, drop entries to a bound, and turn it direct-mapped; every report
(both timestamps) must still be test_model.py's transcription of algorithm.md §3."""
import random

from test_model import exact_against_transcription
from test_snapshots import random_big_program


def test_hot_locations_match_the_transcription(rt):
    """10-12 threads on two locations: windows grow to their maximum, sparse tables fill,
    drop their oldest entry, and turn direct; programs whose queries were inexact (a dropped
    entry's bound, docs/design/clocks.md §5) are skipped."""
    rnd = random.Random(15)

    def hot():   # two locations, no fences, loads and stores mostly acquire and release
        return random_big_program(rnd, 2, rnd.randint(10, 12), rnd.randint(50, 80),
                                  kinds=("ld", "ld", "st", "rmw", "cas"), loads=("rlx", "acq", "acq", "sc"),
                                  stores=("rlx", "rel", "rel", "sc"))

    exact, reported = exact_against_transcription(rt, rnd, hot, 12)
    # most programs stay exact (7 of 12, 856 reports): a table that loses an entry's slot or
    # overlaps its first facts makes every query inexact
    assert exact >= 5 and reported >= 200, (exact, reported)
