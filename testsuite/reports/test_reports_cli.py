"""Reports a maintainer acts on (issue 19), end to end through `pyrsan run` on programs in the
style of an allocator: CAS retry loops as RMWs, failed-CAS-only reports, the stale write of
heap memory named, the cheapest repair suggested, the caller of a header helper named."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
RUN = ("run", "--sched", "random", "--seed", "1")


def _run(run_pyrsan, tmp_path, source, *flags, runs=5, env=None):
    out = tmp_path / "out.json"
    r = run_pyrsan(*RUN, "--runs", runs, "--json", out, *flags, HERE / source, cwd=tmp_path,
                   env={"PYRSAN_NO_SPIN_LOOPS": "", **(env or {})}, timeout=600)
    assert r.returncode in (0, 66), r.stderr[-3000:]
    return r, json.loads(out.read_text())


def _lines(doc, line):
    return [rep for rep in doc["reports"] if rep.get("access", {}).get("line") == line]


FIRST_READ = 24   # page_flags.c: `old = atomic_load_explicit(&pg->flags, relaxed)`


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_the_first_read_of_a_cas_loop_is_not_reported(run_pyrsan, tmp_path, opt):
    r, doc = _run(run_pyrsan, tmp_path, "page_flags.c", "-v", opt)
    assert "CAS retry loop at page_flags.c:31 (read-modify-write of" in r.stderr
    assert not _lines(doc, FIRST_READ), r.stderr[-3000:]


def test_the_first_read_is_reported_when_the_loop_has_an_effect_or_recognition_is_off(run_pyrsan, tmp_path):
    _, doc = _run(run_pyrsan, tmp_path, "page_flags.c", "-O1", "-DPAGE_TRACE")
    assert _lines(doc, FIRST_READ) and doc["verdict"] == "violations"
    _, doc = _run(run_pyrsan, tmp_path, "page_flags.c", "-O1", env={"PYRSAN_NO_SPIN_LOOPS": "1"})
    assert _lines(doc, FIRST_READ)


def test_a_cas_failure_that_only_feeds_a_retry_is_counted_not_shown(run_pyrsan, tmp_path):
    r, doc = _run(run_pyrsan, tmp_path, "optimistic_flags.c", runs=10)
    assert r.returncode == 0 and doc["verdict"] == "clean" and doc["reports"] == []
    assert doc["benign"] >= 1
    assert "with a benign consequence not shown" in r.stderr
    r, doc = _run(run_pyrsan, tmp_path, "optimistic_flags.c", "--all", runs=10)
    assert r.returncode == 66
    cas = _lines(doc, 22)
    assert cas and all(rep["consequence"] == "failed-cas" and rep["only_failure"] for rep in cas)
    assert all(rep["repair"]["kind"] == "none" and "no change is needed" in rep["suggestion"] for rep in cas)
    assert "Consequence: failed-cas" in r.stderr
    assert "Only a failing compare_exchange can read the stale value" in r.stderr


def test_a_cas_failure_whose_value_flows_on_is_a_value_report(run_pyrsan, tmp_path):
    r, doc = _run(run_pyrsan, tmp_path, "optimistic_flags.c", "-DSPAN_LOG_CONFLICTS", runs=10)
    assert r.returncode == 66
    cas = _lines(doc, 22)
    assert cas and all(rep["consequence"] == "value" and rep["only_failure"] for rep in cas)


def test_the_reclaim_race_names_the_allocation_and_suggests_an_acquiring_cas(run_pyrsan, tmp_path):
    r, doc = _run(run_pyrsan, tmp_path, "reclaim_free.c", runs=20)
    (rep,) = [rep for rep in doc["reports"] if rep["access"]["function"] == "page_heap"]
    prev = rep["previous"]
    assert prev["initial"] is True and prev["object"] == "heap" and prev["allocated_by"] == 0
    assert re.search(r"the value at allocation \(value 0\) of offset \d+ of heap block allocated at "
                     r"reclaim_free\.c:47$", prev["description"]), prev["description"]
    # the cheapest repair: the freeing CAS acquires (it read the flag released after the heap)
    repair = rep["repair"]
    assert repair["kind"] == "order" and repair["order"] == "acq_rel" and repair["order_fail"] == "acquire"
    assert repair["accesses"][0]["line"] == 33 and repair["cost"] == {"fences": 0, "orders": 1}
    assert "memory_order_acq_rel with failure order memory_order_acquire" in rep["suggestion"]
    # the headline names the caller, the stack keeps the helper
    assert rep["access"]["caller"]["function"] == "free_block" and rep["access"]["caller"]["line"] == 36
    assert rep["access"]["stack"][0]["function"] == "page_heap"
    assert "SUMMARY: pyrsan: robustness violation" in r.stderr and "reclaim_free.c:36 in free_block" in r.stderr
    # and the repair works
    r, doc = _run(run_pyrsan, tmp_path, "reclaim_free.c", "-DFREE_ACQUIRE", runs=20)
    assert r.returncode == 0 and doc["reports"] == []


def test_pyrsan_fix_finds_the_suggested_acquire_first(run_pyrsan, tmp_path):
    """The report's cheapest repair (the freeing CAS acq_rel, failure acquire) is what
    `pyrsan fix` tries first and keeps: 1 order, no fence, checked by a complete exploration."""
    for name in ("reclaim_free.c", "page_internal.h"):
        (tmp_path / name).write_text((HERE / name).read_text())
    out = tmp_path / "fix.json"
    r = run_pyrsan("fix", "--check", "explore", "--json", out, "reclaim_free.c", cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "fixed" and doc["check"]["complete"] is True
    assert [(rep["kind"], rep["order"], rep["line"], rep["was"]) for rep in doc["repairs"]] == [
        ("order", "acq_rel", 33, "release")]
    assert doc["cost"]["fences"] == 0 and doc["cost"]["orders"] == 1


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_a_yielding_wait_for_a_ticket_is_a_wait(run_pyrsan, tmp_path, opt):
    """`while (turn.load(acquire) != ticket) sched_yield();` inside the round loop: recognised
    (a wait for a value fixed before the loop; the innermost loop, not the round loop; at -O1
    the peeled first read too), and the program runs unchanged under the spin loads."""
    r, doc = _run(run_pyrsan, tmp_path, "ticket_turns.c", "-v", opt, runs=5)
    assert "spin loop at ticket_turns.c:16 (wait for turn == a value fixed before the loop)" in r.stderr
    assert r.returncode == 0 and doc["reports"] == [], r.stderr[-3000:]
    assert r.stdout.count("steps 10 10 10") == 5


def test_an_instrumented_binary_prints_one_block_per_access_listing_its_stale_writes(
        run_pyrsan, tmp_path):
    """An access whose stale writes differ only by cell (each cell's initial value) is one text
    report in a binary run alone (no driver to group them); every key keeps its JSON line."""
    import os
    import subprocess

    exe = tmp_path / "array_sb"
    proc = run_pyrsan("build", "-o", exe, HERE / "array_sb.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for seed in range(1, 6):
        log = tmp_path / f"r{seed}.jsonl"
        env = dict(os.environ, PYRSAN_OPTIONS=f"sched=pct:seed={seed}:json_path={log}")
        run = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
        lines = [json.loads(ln) for ln in log.read_text().splitlines()] if log.exists() else []
        reports = [r for r in lines if r.get("kind") == "robustness"]
        if len(reports) < 2:
            continue
        groups = {r["group"] for r in reports}
        assert len(reports) > len(groups)       # several stale writes of one access
        assert run.stderr.count("WARNING: pyrsan: robustness violation") == len(groups)
        assert f"{len(reports) - len(groups)} of them listed inside a report above" in run.stderr
        # each group's block lists its other stale writes: the initial value of each other cell
        blocks = run.stderr.split("WARNING: pyrsan: robustness violation")[1:]
        # (cells named as written since session 18: x[3], not x+12)
        listed = sum(len(re.findall(r"^    - [xy]\[\d\] \(T\d+, hb \d+, sc \d+\): the initial value of global",
                                    b, re.M)) for b in blocks)
        assert listed == len(reports) - len(groups), run.stderr
        for b in blocks:
            other = re.search(r"other stale writes in this run \((\d+)\)", b)
            n = len(re.findall(r"^    - ", b, re.M))
            assert (int(other.group(1)) if other else 0) == n
        return
    pytest.fail("no run reported two stale writes of one access")


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_the_headline_names_the_first_frame_outside_shared_headers(run_pyrsan, tmp_path, opt):
    """Item 6: a C++ access two header helpers deep (ring.hpp's peek calls slots.h's
    load_slot, itself in <atomic>): the headline and SUMMARY name consumer.cpp:11, the caller
    the maintainer changes, inlined (-O2) or called (-O0); the stack keeps every helper."""
    r, doc = _run(run_pyrsan, tmp_path, "headline/consumer.cpp", opt, runs=20)
    (rep,) = [rep for rep in doc["reports"] if rep["type"] == "read"]
    caller = rep["access"]["caller"]
    assert (Path(caller["file"]).name, caller["line"], caller["function"]) == ("consumer.cpp", 11, "consumer")
    assert [f["function"] for f in rep["access"]["stack"][1:4]] == ["load_slot", "peek", "consumer"]
    assert "by thread T2 in consumer at consumer.cpp:11 (via load_slot):" in r.stderr
    assert re.search(r"SUMMARY: pyrsan: robustness violation \S*consumer\.cpp:11 in consumer\n", r.stderr)


@pytest.mark.parametrize("variant, consequence", [
    ((), "write-only"), (("-DREAD_IT",), "value"), (("-DGLOBAL",), "value"),
    (("-DSC_STORE",), "value"), (("-DESCAPE",), "value")])
def test_a_store_to_a_global_nothing_reads_is_write_only(run_pyrsan, tmp_path, variant, consequence):
    """passes/writeonly.py: a static global whose address is only ever stored to; -O0 (at -O1
    LLVM deletes the stores to such a global, and with them the report)."""
    r, doc = _run(run_pyrsan, tmp_path, "write_only_stats.c", "--all", "-O0", *variant, runs=30)
    (rep,) = [rep for rep in doc["reports"] if rep["type"] == "write"]
    assert rep["location"]["name"] == "last_owner" and rep["consequence"] == consequence
    if consequence == "write-only":
        assert rep["repair"]["kind"] == "none" and "no code of the program reads this global" in rep["suggestion"]
        r, doc = _run(run_pyrsan, tmp_path, "write_only_stats.c", "-O0", runs=30)
        assert r.returncode == 0 and doc["reports"] == [] and doc["benign"] >= 1


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_loops_with_back_off_are_listed_and_their_attempts_not_reported(run_pyrsan, tmp_path, opt):
    """backoff_loops.c: a TTAS lock's wait with an exponential nanosleep back-off kept across
    attempts, a CAS counter that yields after 4 failures, a start flag waited for with a spin
    counter: `-v` lists the three; no report names a read of their loops."""
    r, doc = _run(run_pyrsan, tmp_path, "backoff_loops.c", "-v", opt, runs=10)
    listed = sorted(line.split(" at ")[1] for line in r.stderr.splitlines() if " loop at " in line)
    assert listed == ["backoff_loops.c:23 (wait for lock_word == 0)",
                      "backoff_loops.c:36 (read-modify-write of hits)",
                      "backoff_loops.c:44 (wait for start == 1)"], r.stderr[-2000:]
    assert not [rep for rep in doc["reports"] if rep["type"] == "read"], r.stderr[-3000:]
    assert "ok 60 60" in r.stdout      # the program runs unchanged under the loops' hooks


def test_the_text_blocks_are_printed_when_the_run_ends_in_a_deadlock(run_pyrsan, tmp_path):
    import os
    import subprocess

    exe = tmp_path / "sb_then_deadlock"
    proc = run_pyrsan("build", "-o", exe, HERE / "sb_then_deadlock.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for seed in range(1, 9):
        log = tmp_path / f"r{seed}.jsonl"
        env = dict(os.environ, PYRSAN_OPTIONS=f"sched=random:seed={seed}:json_path={log}")
        run = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
        assert run.returncode == 87, run.stderr
        lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        reports = [r for r in lines if r.get("kind") == "robustness"]
        assert run.stderr.count("WARNING: pyrsan: robustness violation") == len(reports)
        if reports:
            assert "WARNING: pyrsan: deadlock" in run.stderr
            return
    pytest.fail("no run reported the store buffering")


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_the_cpp_librarys_own_accesses_are_library(run_pyrsan, tmp_path, opt):
    """docs/reports.md §2 `library`: std::barrier's phase word is compared and exchanged inside
    <barrier> (atomic_base.h called by the barrier's _M_arrive): its stale reads are the
    library's, reported with consequence "library" and not shown; store buffering through the
    program's own std::atomic members (atomic_base.h called from the program's lambdas, under
    std::function) stays "value"."""
    r, doc = _run(run_pyrsan, tmp_path, "library_barrier.cpp", "-std=c++20", "--all", opt, runs=60)
    library = [rep for rep in doc["reports"] if rep.get("consequence") == "library"]
    assert library and not [rep for rep in doc["reports"] if rep.get("consequence") == "value"], r.stderr[-3000:]
    for rep in library:
        assert Path(rep["access"]["stack"][0]["file"]).parts[:3] == ("/", "usr", "lib"), rep["access"]
        assert rep["repair"]["kind"] == "none" and "a library's own" in rep["suggestion"]
    r, doc = _run(run_pyrsan, tmp_path, "library_barrier.cpp", "-std=c++20", opt, runs=60)
    assert r.returncode == 0 and doc["reports"] == [] and doc["benign"] >= 1, r.stderr[-3000:]
    r, doc = _run(run_pyrsan, tmp_path, "library_barrier.cpp", "-std=c++20", "-DUSER_SB", opt, runs=20)
    user = [rep for rep in doc["reports"] if rep["access"]["function"] == "operator()"]
    assert r.returncode == 66 and user, r.stderr[-3000:]
    assert all(rep["consequence"] == "value" and Path(rep["access"]["file"]).name == "library_barrier.cpp"
               for rep in doc["reports"]), doc["reports"]


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_atomic_primitives_of_a_system_header_are_the_programs_own(run_pyrsan, tmp_path, opt):
    """docs/reports.md §2 `library`: a function of a system header whose only memory operations
    are atomics on one address (libatomic_ops' AO_load_acquire, CK's ck_pr_load_int, a CAS-loop
    fetch_max) is an atomic operation: store buffering through such functions is the program's
    ("value", shown, exit 66). The same accesses made by a library object (flags_sb touches two
    locations) stay "library"."""
    for variant in ("-DINLINED", "-DCALLS"):   # CALLS: wrappers of wrappers, called
        r, doc = _run(run_pyrsan, tmp_path, "library_primitives.c", variant, opt, runs=20)
        assert r.returncode == 66 and doc["reports"], r.stderr[-3000:]
        assert all(rep["consequence"] == "value" and rep["access"]["file"].endswith("library_primitives.c")
                   for rep in doc["reports"]), doc["reports"]
    r, doc = _run(run_pyrsan, tmp_path, "library_primitives.c", "-DOBJECT", opt, runs=20)
    assert r.returncode == 0 and doc["reports"] == [] and doc["benign"] >= 1, r.stderr[-3000:]
    # a complete exploration that met only benign reports is no proof of robustness
    r = run_pyrsan("run", "--explore", "-DOBJECT", opt, HERE / "library_primitives.c", cwd=tmp_path, timeout=600)
    assert r.returncode == 0 and "exploration complete" in r.stderr, r.stderr[-3000:]
    assert "the only violations are" in r.stderr and "Thm 3.1" not in r.stderr, r.stderr[-3000:]
