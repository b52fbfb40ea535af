"""The DPOR core (pyrsan/explore.py) against a simulated program: it must run every
Mazurkiewicz trace class that brute-force enumeration of all interleavings finds."""

from __future__ import annotations

import contextlib

from hypothesis import assume, given, settings, strategies as st

from pyrsan.explore import dependent, explore

from .program_model import all_classes, simulate, trace_class, with_main_exiting, with_main_thread


def dpor_classes(program, sleep_aware=False, **options):
    classes = set()

    def on_run(prefix, trace, payload):
        assert trace.diverged is None, "the explorer asked for a prefix the program cannot follow"
        classes.add(trace_class(trace))
        return False

    if sleep_aware:
        result = explore(lambda prefix, sleep: (simulate(program, prefix, sleep), None), on_run=on_run,
                         sleep_aware=True, **options)
    else:
        result = explore(lambda prefix: (simulate(program, prefix), None), on_run=on_run, **options)
    return classes, result


@contextlib.contextmanager
def source_dpor():
    """The search with backtrack sets (source-DPOR), as with jobs > 1 or a preemption bound."""
    from pyrsan import explore as ex

    ex._Search.wakeup_trees = False
    try:
        yield
    finally:
        ex._Search.wakeup_trees = True


def store(addr):
    return ("store", addr, True)


def load(addr):
    return ("load", addr, False)


def test_two_threads_storing_to_distinct_variables_need_one_schedule():
    classes, result = dpor_classes(((store("x"),), (store("y"),)))
    assert result.complete and result.schedules == 1 and len(classes) == 1


def test_two_threads_storing_to_the_same_variable_need_two_schedules():
    classes, result = dpor_classes(((store("x"),), (store("x"),)))
    assert result.complete and result.schedules == 2 and len(classes) == 2


def test_store_buffering_has_three_sc_classes_and_each_runs():
    sb = ((store("x"), load("y")), (store("y"), load("x")))
    expected, _ = all_classes(sb)
    classes, result = dpor_classes(sb)
    assert len(expected) == 3  # both loads reading 0 is not SC
    assert classes == expected and result.complete


def test_lock_acquisition_order_is_explored_both_ways():
    critical = (("lock", "m", True), store("x"), ("unlock", "m", True))
    program = (critical, critical)
    expected, _ = all_classes(program)
    classes, result = dpor_classes(program)
    assert len(expected) == 2 and classes == expected and result.schedules == 2


def test_threads_spawned_and_joined_by_main_storing_to_one_variable_need_two_schedules():
    program = with_main_thread(((store("x"),), (store("x"),)))
    expected, _ = all_classes(program)
    classes, result = dpor_classes(program)
    assert len(expected) == 2 and classes == expected and result.schedules == 2


def test_sc_fences_are_ordered_and_plain_fences_are_not():
    program = ((("fence_sc", "0x0", False), ("fence", "0x0", False)),
               (("fence_sc", "0x0", False), ("fence", "0x0", False)))
    classes, result = dpor_classes(program)
    assert len(classes) == 2 and result.schedules == 2


def test_max_schedules_stops_the_search_and_says_so():
    program = tuple((store("x"), store("x")) for _ in range(3))
    _, result = dpor_classes(program, max_schedules=3)
    assert not result.complete and result.schedules == 3 and result.bound == "max-schedules=3"
    # coverage is reported honestly: schedules known to remain (issue 15)
    classes, _ = all_classes(program)
    assert 0 < result.pending <= len(classes) - 3
    _, complete = dpor_classes(program)
    assert complete.complete and complete.pending == 0


def test_preemption_bound_zero_runs_threads_to_completion_only():
    program = ((store("x"), store("x")), (store("x"), store("x")))
    _, unbounded = dpor_classes(program)
    classes, bounded = dpor_classes(program, preemption_bound=0)
    assert unbounded.complete and unbounded.schedules == 6
    assert not bounded.complete and bounded.bound == "preemption-bound=0"
    assert bounded.schedules == 2 and len(classes) == 2


def test_stopping_at_the_first_run_a_caller_rejects():
    program = ((store("x"),), (store("x"),), (store("x"),))
    runs = []
    result = explore(lambda prefix: (simulate(program, prefix), None),
                     on_run=lambda prefix, trace, payload: runs.append(prefix) or len(runs) == 2)
    assert result.stopped and not result.complete and result.schedules == 2


OPS = st.one_of(
    st.tuples(st.just("load"), st.sampled_from(["x", "y"]), st.just(False)),
    st.tuples(st.sampled_from(["store", "rmw"]), st.sampled_from(["x", "y"]), st.just(True)),
    st.tuples(st.just("fence_sc"), st.just("0x0"), st.just(False)),
)


@st.composite
def programs(draw):
    """2-3 threads of 1-3 operations; some threads wrap one operation in a critical section."""
    threads = []
    for _ in range(draw(st.integers(2, 3))):
        ops = draw(st.lists(OPS, min_size=1, max_size=3))
        if draw(st.booleans()):
            mutex = draw(st.sampled_from(["m", "n"]))
            where = draw(st.integers(0, len(ops) - 1))
            ops = ops[:where] + [("lock", mutex, True), ops[where], ("unlock", mutex, True)] + ops[where + 1:]
        threads.append(tuple(ops))
    shape = draw(st.sampled_from(["plain", "main", "main_exits"]))
    if shape == "main":
        return with_main_thread(tuple(threads[:2]), tuple(draw(st.lists(OPS, max_size=1))))
    if shape == "main_exits":   # main returns while its threads may still run (issue 15)
        return with_main_exiting(tuple(threads[:2]), tuple(draw(st.lists(OPS, max_size=1))))
    return tuple(threads)


@settings(max_examples=120, deadline=None, database=None)
@given(programs(), st.sampled_from([1, 2]))
def test_dpor_runs_every_trace_class_of_random_programs(program, jobs):
    assume(sum(map(len, program)) <= 11)   # brute force stays fast
    expected, interleavings = all_classes(program)
    classes, result = dpor_classes(program, jobs=jobs)
    assert result.complete
    assert classes == expected
    assert result.schedules <= interleavings


@settings(max_examples=120, deadline=None, database=None)
@given(programs(), st.sampled_from([1, 2]))
def test_sleep_aware_continuation_runs_every_class_and_wastes_no_more_runs(program, jobs):
    """The sleep set passed to the run (issue 15): same classes as brute force, never more runs
    or sleep-blocked cuts than the explorer with a sleep-blind continuation."""
    assume(sum(map(len, program)) <= 11)
    expected, interleavings = all_classes(program)
    classes, result = dpor_classes(program, sleep_aware=True, jobs=jobs)
    assert result.complete and classes == expected
    _, blind = dpor_classes(program, jobs=1)
    if jobs == 1:
        assert result.sleep_blocked <= blind.sleep_blocked
        assert result.schedules <= blind.schedules


def test_sleep_aware_continuation_cuts_fewer_runs_on_three_fenced_stores():
    """Under source-DPOR (backtrack sets, the search with jobs > 1 or a preemption bound); with
    wakeup trees no run is cut at all (test_wakeup_trees_*)."""
    counter = tuple((("fence_sc", "0x0", False), ("store", "c", True), ("fence_sc", "0x0", False)) for _ in range(3))
    expected, _ = all_classes(counter)
    with source_dpor():
        classes, aware = dpor_classes(counter, sleep_aware=True)
        _, blind = dpor_classes(counter)
    assert classes == expected and aware.complete
    assert aware.sleep_blocked < blind.sleep_blocked and aware.schedules < blind.schedules, (aware, blind)
    classes, optimal = dpor_classes(counter, sleep_aware=True)
    assert classes == expected and optimal.complete
    assert optimal.sleep_blocked == 0 and optimal.schedules == len(expected) < aware.schedules


def test_process_exit_is_interleaved_with_the_threads_still_running():
    """main spawns a thread storing twice and returns without joining it: the exit may come
    before the thread's first store, between its stores, or after them (and its exit step)."""
    program = with_main_exiting(((store("x"), store("x")),))
    expected, _ = all_classes(program)
    classes, result = dpor_classes(program)
    assert result.complete and classes == expected and len(expected) == 4


def test_a_run_that_deadlocks_reverses_the_races_of_its_blocked_acquisitions():
    """Two threads take two mutexes in opposite orders, the second one with more between its
    locks. The first run (thread 0 first) sees thread 1's acquisitions after thread 0's
    unlocks; reversing its first lock gives a run that deadlocks, where thread 1's lock of n
    never runs. Only that blocked lock races with thread 0's lock of n at the start, which
    gives the class where thread 1 runs first: without it, that class is never run."""
    t0 = (("lock", "n", True), ("lock", "m", True), ("fence_sc", "0x0", False), ("unlock", "n", True),
          ("unlock", "m", True))
    t1 = (("lock", "m", True), ("lock", "n", True), ("unlock", "n", True), load("y"), ("unlock", "m", True))
    for sleep_aware in (False, True):
        expected, _ = all_classes((t0, t1))
        classes, result = dpor_classes((t0, t1), sleep_aware=sleep_aware)
        assert result.complete and classes == expected and len(expected) == 3



def test_a_lock_whose_thread_waits_for_another_lock_before_the_race_is_still_reversed():
    """Thread 0 waits for n (held by thread 2) at the state where thread 1 takes m, and takes
    m after n. Its lock of m races with thread 1's: reversing it needs thread 2 to go first
    there (so that n is released), although thread 0 is not enabled at that state. Dropping
    the race because thread 0 waits there missed the class in which thread 2's store of y
    comes between the two RMWs of y and thread 0 takes m first."""
    program = (
        (("rmw", "y", True), ("lock", "n", True), ("lock", "m", True), ("unlock", "n", True),
         ("unlock", "m", True)),
        (("rmw", "y", True), ("lock", "m", True), ("rmw", "x", True), ("unlock", "m", True)),
        (("lock", "n", True), store("y"), ("unlock", "n", True)),
    )
    expected, _ = all_classes(program)
    for sleep_aware in (False, True):
        classes, result = dpor_classes(program, sleep_aware=sleep_aware)
        assert result.complete and classes == expected and len(expected) == 17

def test_a_run_cut_where_it_became_sleep_blocked_keeps_the_races_of_its_waiting_threads():
    """Threads 1 and 2 take m and n in opposite orders. After thread 0's RMW of x and thread
    1's load of x, thread 0's store of y sleeps (it ran first from the state before). The
    reversal of the two locks of n reaches a state where thread 1 holds m and thread 2 holds n,
    and thread 0's store, the one step left, is sleep-blocked there. The run is cut, but the
    waits of threads 1 and 2 are still this run's races: thread 2's lock of m against thread
    1's gives the class where thread 2's whole critical section and its load of y come before
    thread 0's store. Dropping them missed that class."""
    program = (
        (("rmw", "x", True), store("y")),
        (load("x"), ("lock", "m", True), ("lock", "n", True), ("unlock", "m", True), ("unlock", "n", True)),
        (("lock", "n", True), ("lock", "m", True), ("unlock", "n", True), ("unlock", "m", True), load("y")),
    )
    expected, _ = all_classes(program)
    for sleep_aware in (False, True):
        classes, result = dpor_classes(program, sleep_aware=sleep_aware)
        assert result.complete and classes == expected and len(expected) == 10


def test_a_thread_blocked_at_the_process_exit_still_gets_its_turn_first():
    """main locks the mutex its thread waits for and ends the process: the runs where the
    thread locks first (before main's lock, or before main's exit) are classes of their own."""
    program = with_main_exiting(((("lock", "m", True), store("x"), ("unlock", "m", True)),),
                                (("lock", "m", True),))
    expected, _ = all_classes(program)
    classes, result = dpor_classes(program, sleep_aware=True)
    assert result.complete and classes == expected and len(expected) > 1


@st.composite
def nested_lock_programs(draw):
    """2-3 threads whose operations sit inside up to two nested critical sections, in any
    order of the mutexes (so runs may deadlock), or main ending the process while they wait."""
    threads = []
    for _ in range(draw(st.integers(2, 3))):
        ops = draw(st.lists(OPS, min_size=1, max_size=2))
        for mutex in draw(st.permutations(["m", "n"]))[:draw(st.integers(0, 2))]:
            start = draw(st.integers(0, len(ops)))
            end = draw(st.integers(start, len(ops)))
            ops = ops[:start] + [("lock", mutex, True)] + ops[start:end] + [("unlock", mutex, True)] + ops[end:]
        threads.append(tuple(ops))
    shape = draw(st.sampled_from(["plain", "main_exits"]))
    if shape == "main_exits":
        return with_main_exiting(tuple(threads[:2]), (("lock", draw(st.sampled_from(["m", "n"])), True),))
    return tuple(threads)


@settings(max_examples=80, deadline=None, database=None)
@given(nested_lock_programs(), st.booleans())
def test_dpor_runs_every_class_of_programs_that_may_deadlock(program, sleep_aware):
    assume(sum(map(len, program)) <= 12)
    expected, _ = all_classes(program)
    classes, result = dpor_classes(program, sleep_aware=sleep_aware)
    assert result.complete and classes == expected


@settings(max_examples=150, deadline=None, database=None)
@given(programs(), st.sampled_from([False, True]))
def test_every_run_not_cut_as_sleep_blocked_is_a_class_of_its_own(program, sleep_aware):
    """Sleep sets (FG'05): two runs the search does not cut are never in one class, so the
    schedules an exploration makes are its classes plus its sleep-blocked runs, and nothing
    else (docs/design/exploration.md §17: the schedules per class of peterson,3)."""
    assume(sum(map(len, program)) <= 11)
    expected, _ = all_classes(program)
    classes, result = dpor_classes(program, sleep_aware=sleep_aware)
    assert result.complete and classes == expected
    assert result.schedules - result.sleep_blocked == len(expected)


def explored_runs(program, **options):
    """The prefixes and sleep sets an exploration hands its runs, in order."""
    runs = []

    def run(prefix, sleep):
        runs.append((tuple(prefix), tuple(sorted((t, o.kind, o.addr) for t, o in sleep.items()))))
        return simulate(program, prefix, sleep), None

    result = explore(run, sleep_aware=True, **options)
    return runs, result


@settings(max_examples=150, deadline=None, database=None)
@given(nested_lock_programs() | programs())
def test_the_race_scan_kept_at_the_states_where_runs_start_makes_the_same_runs(program):
    """add_race_backtracks starts a run's scan from the tables a state kept
    (docs/design/exploration.md §18) instead of scanning the run's prefix from the root: the
    same runs, in the same order, with the same sleep sets."""
    from pyrsan import explore as ex

    assume(sum(map(len, program)) <= 12)
    kept, result = explored_runs(program)
    try:
        ex._Search.keep_scans = False
        scanned, again = explored_runs(program)
    finally:
        ex._Search.keep_scans = True
    assert kept == scanned and result == again


def test_a_sleeping_thread_independent_of_a_reversal_does_not_make_the_reversal_redundant():
    """Source-DPOR picks one initial of a reversal's sequence v, and the run goes on from there
    by its own continuation. Skipping a reversal because a thread in the sleep set (or done) at
    its state is independent of all of v (a weak initial: optimal DPOR's test, Abdulla et al.
    JACM 2017) is only sound when the run follows v (wakeup trees): here it loses the class
    where thread 1's load comes between thread 2's load and store, and thread 0's after them
    (docs/design/exploration.md §18)."""
    program = ((load("x"),), (load("x"),), (load("x"), store("x")))
    expected, _ = all_classes(program)
    for sleep_aware in (False, True):
        classes, result = dpor_classes(program, sleep_aware=sleep_aware)
        assert result.complete and classes == expected and len(expected) == 4


@settings(max_examples=200, deadline=None, database=None)
@given(nested_lock_programs() | programs())
def test_wakeup_trees_run_every_class_once_and_cut_no_run(program):
    """Optimal DPOR (wakeup trees, docs/design/exploration.md §21): every class of brute force,
    each once, and no run cut as sleep-blocked: a reversal's sequence runs whole, and one whose
    weak initials hold a thread asleep or done at its state is not inserted."""
    assume(sum(map(len, program)) <= 12)
    expected, _ = all_classes(program)
    classes, result = dpor_classes(program, sleep_aware=True)
    assert result.complete and classes == expected
    assert result.sleep_blocked == 0 and result.schedules == len(expected), result


def test_a_reversed_operation_is_an_initial_of_its_sequence_by_its_own_dependences():
    """Threads 0 and 2 lock m around an SC fence; thread 1 makes an SC fence and a load. In the
    run (2, 1, 1, 2, 2, 0, ...) thread 0's lock races with thread 2's; its clock there holds
    thread 1's fence through thread 2's fence and unlock, which are not in the reversal's
    sequence (1, 1, 0). In that sequence thread 0's lock depends on nothing before it: it is an
    initial, and thread 0 (done at the first state) is a weak initial, so the sequence is not
    inserted. Taken from its clock, it was inserted, and its run met thread 0 asleep twice."""
    critical = (("lock", "m", True), ("fence_sc", "0x0", False), ("unlock", "m", True))
    program = (critical, (("fence_sc", "0x0", False), load("x")), critical)
    expected, _ = all_classes(program)
    classes, result = dpor_classes(program, sleep_aware=True)
    assert result.complete and classes == expected and len(expected) == 6
    assert result.sleep_blocked == 0 and result.schedules == 6, result


def test_a_wakeup_tree_branch_runs_its_whole_sequence():
    """Each run of a wakeup-tree branch follows the branch's sequence, not only its first thread:
    the prefixes the explorer hands its runs are longer than one decision past a state, and
    the runs never diverge from them (dpor_classes checks it)."""
    program = ((load("x"),), (load("x"),), (load("x"), store("x")))
    runs, result = explored_runs(program)
    assert result.complete and result.sleep_blocked == 0
    expected, _ = all_classes(program)
    assert result.schedules == len(expected) == 4
    depth = {prefix: len(prefix) for prefix, _ in runs}
    assert max(depth.values()) >= 3, runs


def run_reporting_sleep_choice(program):
    """A run as the runtime makes it under the closure: its end line names the first step after
    the prefix where the continuation chose a thread of its own sleep set (every candidate
    asleep). The explorer checks that it cut the run there too (absorb: else bound "closure")."""
    from dataclasses import replace

    def run(prefix, sleep):
        trace = simulate(program, prefix, sleep)
        asleep = dict(sleep)
        chosen = None
        for index in range(len(prefix), len(trace.steps)):
            step = trace.steps[index]
            if step.tid in asleep:
                chosen = index
                break
            asleep = {t: o for t, o in asleep.items() if not dependent(t, o, step.tid, step.op)}
        return replace(trace, closure={"sleep_blocked": chosen}), None

    return run


@settings(max_examples=150, deadline=None, database=None)
@given(nested_lock_programs() | programs())
def test_the_sleep_set_a_run_gets_is_the_one_at_the_end_of_its_sequence(program):
    """A wakeup-tree branch's run follows several decisions; the sleep set it gets is the one at
    their end (explore.py `sleep_after`), where the explorer's own sleep set stands: a thread
    woken along the sequence is not asleep for the runtime's continuation. With the sleep set of
    the branch's first state instead, the continuation takes a thread asleep in its own set where
    the explorer's is awake, and the exploration ends bounded ("closure")."""
    assume(sum(map(len, program)) <= 12)
    expected, _ = all_classes(program)
    classes = set()

    def on_run(prefix, trace, payload):
        classes.add(trace_class(trace))
        return False

    result = explore(run_reporting_sleep_choice(program), on_run=on_run, sleep_aware=True)
    assert result.complete and classes == expected, result
