"""The interceptors (runtime/src/intercept_*.c): threads, synchronisation, free.

Each C program in intercept_programs/ is uninstrumented and calls the ABI by hand
(``__rsan_load_4`` / ``__rsan_store_4``, relaxed, tagged with the source line); it forces the
order of its threads with __atomic builtins that the runtime never sees, so every
happens-before edge the runtime knows of comes from an intercepted function. Every program
has a mode with the synchronisation under test ("no report") and a sibling mode with the same
setup but without it ("the report appears"), so these tests fail if an edge is missing, and
also if an edge is modelled where there is none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import intercept_build as ib

CC = ib.find_compiler("clang-22")
CXX = ib.find_compiler("clang++-22")
pytestmark = pytest.mark.skipif(CC is None, reason="clang-22 not installed")

DEFAULT_EXITCODE = 66  # docs/interfaces.md §2, option exitcode


@pytest.fixture(scope="session")
def runtime_archive(tmp_path_factory) -> Path:
    return ib.build_runtime(CC, tmp_path_factory.mktemp("intercept-rt"))


@pytest.fixture(scope="session")
def programs(runtime_archive, tmp_path_factory):
    """program name -> executable, built on first use."""
    out = tmp_path_factory.mktemp("intercept-bin")
    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            source = ib.PROGRAMS / name
            compiler = CXX if source.suffix == ".cpp" else CC
            if compiler is None:
                pytest.skip(f"no compiler for {name}")
            built[name] = ib.build_program(compiler, source, runtime_archive, out)
        return built[name]

    return get


def run(programs, tmp_path, name: str, mode: str) -> ib.RunResult:
    return ib.run_program(programs(name), [mode], tmp_path)


def assert_clean(result: ib.RunResult) -> None:
    assert result.reports == (), result.describe()
    assert result.returncode == 0, result.describe()


def assert_reported(result: ib.RunResult, source: str, marker: str, kind: str,
                    thread: int | None) -> None:
    """A robustness report of type `kind` whose access is the line marked `marker`, made by
    `thread` (None: any thread), against a write of another thread; exit status 66."""
    line = ib.marker_line(ib.PROGRAMS / source, marker)
    robustness = result.robustness()
    matching = [r for r in robustness
                if r.get("type") == kind and r.get("access", {}).get("line") == line]
    assert matching, f"no {kind} report at {source}:{line}\n{result.describe()}"
    for report in matching:
        access = report["access"]
        assert isinstance(access.get("thread"), int), report
        if thread is not None:
            assert access["thread"] == thread, result.describe()
        previous = report.get("previous", {})
        if "thread" in previous:
            assert previous["thread"] != access["thread"], report
    assert result.returncode == DEFAULT_EXITCODE, result.describe()


# (program, mode) that must run clean.
CLEAN = [
    ("mutex_mp.c", "sync"),
    ("mutex_sb.c", "sync"),
    ("mutex_sb.c", "trylock"),
    ("mutex_sb.c", "timedlock"),
    ("cond_handoff.c", "sync"),
    ("cond_handoff.c", "signal_only"),
    ("cond_handoff.c", "broadcast"),
    ("cond_handoff.c", "clockwait"),
    ("rwlock.c", "sync"),
    ("rwlock.c", "try"),
    ("rwlock.c", "timed"),
    ("rwlock.c", "clock"),
    ("barrier.c", "sync"),
    ("semaphore.c", "sync"),
    ("semaphore.c", "try"),
    ("spinlock.c", "sync"),
    ("spinlock.c", "trylock"),
    ("once.c", "sync"),
    ("once.c", "c11"),
    ("once.c", "callers_only"),
    ("once.c", "c11_callers_only"),
    ("c11_threads.c", "mtx"),
    ("c11_threads.c", "mtx_try"),
    ("c11_threads.c", "mtx_timed"),
    ("c11_threads.c", "cnd"),
    ("c11_threads.c", "join"),
    ("c11_threads.c", "join_exit"),
    ("c11_threads.c", "create"),
    ("create_join.c", "create"),
    ("create_join.c", "join"),
    ("create_join.c", "join_exit"),
    ("create_join.c", "tryjoin"),
    ("create_join.c", "timedjoin"),
    ("create_join.c", "cancel"),
    ("create_join.c", "reuse"),
    ("many_threads.c", "sync"),
    ("free_reuse.c", "free"),
    ("free_reuse.c", "realloc"),
    ("free_reuse.c", "shrink"),
    ("before_main.c", "sync"),
    ("std_thread.cpp", "sync"),
    ("std_thread.cpp", "mutex"),
    ("std_thread.cpp", "condvar"),
]

# (program, mode, marker of the reported access, report type, reporting thread id) for the
# siblings without the synchronisation. Thread ids: main is 0, then creation order.
REPORTED = [
    ("mutex_mp.c", "nosync", "load_x", "read", 2),
    ("mutex_mp.c", "tryfail", "load_x", "read", 2),
    ("mutex_sb.c", "nosync", "load_x", "read", 2),
    ("cond_handoff.c", "nosync", "load_x", "read", 1),
    ("cond_handoff.c", "signal_other", "load_x", "read", 1),
    ("rwlock.c", "nosync", "load_x", "read", 3),
    ("barrier.c", "nosync", "load_x", "read", 2),
    ("semaphore.c", "nosync", "load_x", "read", 2),
    ("spinlock.c", "nosync", "load_x", "read", 2),
    ("once.c", "nosync", "load_x", "read", 2),
    ("once.c", "c11_nosync", "load_x", "read", 2),
    ("c11_threads.c", "mtx_nosync", "load_x_mtx", "read", 2),
    ("c11_threads.c", "cnd_nosync", "load_x_cnd", "read", 1),
    ("c11_threads.c", "join_nosync", "load_x_main", "read", 0),
    ("c11_threads.c", "create_nosync", "load_x_child", "read", 1),
    ("create_join.c", "create_nosync", "load_x_child", "read", 1),
    ("create_join.c", "join_nosync", "load_x_main", "read", 0),
    ("create_join.c", "reuse_nosync", "load_x_main", "read", 0),
    ("many_threads.c", "nosync", "store_data", "write", None),
    ("free_reuse.c", "nosync", "load_x", "read", 2),
    ("free_reuse.c", "shrink_nosync", "load_x", "read", 2),
    ("before_main.c", "nosync", "load_x", "read", 0),
    ("std_thread.cpp", "nosync", "load_x", "read", 0),
    ("std_thread.cpp", "condvar_nosync", "load_x", "read", 0),
]


@pytest.mark.parametrize(("program", "mode"), CLEAN, ids=[f"{p}:{m}" for p, m in CLEAN])
def test_synchronised_program_has_no_report(programs, tmp_path, program, mode):
    assert_clean(run(programs, tmp_path, program, mode))


@pytest.mark.parametrize(("program", "mode", "marker", "kind", "thread"), REPORTED,
                         ids=[f"{p}:{m}" for p, m, *_ in REPORTED])
def test_same_program_without_synchronisation_is_reported(programs, tmp_path, program, mode,
                                                          marker, kind, thread):
    assert_reported(run(programs, tmp_path, program, mode), program, marker, kind, thread)


def test_every_clean_mode_has_a_reporting_sibling():
    """Guards the test tables: a "no report" program must also be shown to report."""
    reporting = {p for p, *_ in REPORTED}
    assert {p for p, _ in CLEAN} <= reporting


def test_many_threads_report_each_unsynchronised_turn(programs, tmp_path):
    """64 threads in turn without a common lock: the stores of threads 1..63 (thread ids 2..64)
    each violate robustness; with the common lock none does (test above)."""
    result = run(programs, tmp_path, "many_threads.c", "nosync")
    line = ib.marker_line(ib.PROGRAMS / "many_threads.c", "store_data")
    threads = {r["access"]["thread"] for r in result.robustness()
               if r.get("type") == "write" and r["access"].get("line") == line}
    # Reports may be deduplicated by (site, previous site, type); at least one must remain,
    # and never one by the first worker (thread 1), which had nobody before it.
    assert threads, result.describe()
    assert 1 not in threads and threads <= set(range(2, 65)), result.describe()


def test_forked_child_can_use_threads_and_locks(programs, tmp_path):
    """fork while other threads are inside the interceptors; every child creates and joins a
    thread, locks, signals and frees, then exits 0 (no inherited interceptor lock)."""
    exe = programs("fork_child.c")
    result = ib.run_program(exe, [], tmp_path, timeout=120)
    assert result.returncode == 0, result.describe()
    assert result.reports == (), result.describe()


def test_forked_child_finds_no_size_class_locked(programs, tmp_path):
    """fork while another thread holds a size class's lock (runtime/src/alloc.c): the fork
    handler waits for it, and the child's writes get their history rings from that class
    (docs/design/clocks.md §20)."""
    exe = programs("fork_slabs.c")
    # the OS scheduler: under sched=auto's controlled scheduler main would not run while the
    # worker is inside the runtime, so the fork would never meet the lock held
    result = ib.run_program(exe, [], tmp_path, timeout=120, extra_options="sched=os")
    assert result.returncode == 0, result.describe()
    assert result.reports == (), result.describe()


def test_forked_child_finds_no_location_record_locked(programs, tmp_path):
    """fork while other threads make, promote and free location records of every size class:
    every child touches old and new locations and exits 0 (docs/design/clocks.md §19)."""
    exe = programs("fork_locations.c")
    # the child's free of a worker's block races with the worker's accesses (a report would
    # change its exit status): only the locks are under test
    result = ib.run_program(exe, [], tmp_path, timeout=120, extra_options="report_races=0")
    assert result.returncode == 0, result.describe()
    assert result.reports == (), result.describe()
