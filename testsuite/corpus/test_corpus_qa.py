"""Session 15's QA corpus (testsuite/corpus/qa/): litmus shapes with mixed orders and fences
(2+2W, LB, CoRR/CoWR/CoRW, R, S, 3.SB, W+RWC, Z6.3, WRC, MP, SB through RMWs on a third
location) generated from rc20.py op lists, whose header verdicts are the reference model's, and
real-code patterns (hazard pointers, QSBR, MCS/CLH locks, a CAS reader-writer lock, Vyukov's
MPMC queue, an SPSC ring with cached indices, Chase-Lev, call_once, a COW string, atomic_flag
wait/notify, the generic stdatomic.h functions, __sync builtins, _Atomic structs, volatile with
compiler barriers, C11 threads), whose verdicts are argued in their headers.

Session 16 added 43 programs written as a new user would (benchmarks/README.md "Session 16: QA"):
signal vs thread fences, consume, release sequences through other threads' RMWs, R/Z6/WWC/LB
shapes with RMWs, a tagged Treiber stack, a Michael-Scott queue, ticket locks, once-init by CAS,
atomics through function pointers, unions, arrays of structs, C++ templates and lambdas, 16-byte
atomics, fork / posix_spawn / signals / exit / quick_exit while threads run, thread-local storage
and its destructors, deep recursion, huge stacks, 256-300 threads, vectorised -O3 loops, and a
program of three translation units (qa_multi_tu/).

Session 17 added 39 (benchmarks/README.md "Session 17: qa"): SC fences and seq_cst accesses
mixed with weaker orders, RMWs as reads, C++20 release sequences (all checked against rc20.py),
RCU grace periods, a TTAS lock for 16 threads, a seqlock with plain data, a generation barrier,
std::barrier, a thread pool, exceptions and lock_guard unwinding across threads, magic statics,
pthread barriers, pthread_cancel in a condition wait, mmap memory, 64 threads of fenced SB, a
linear-probing hash table.

Session 18 added 31 (benchmarks/README.md "Session 18: qa"): MCS and ticket locks as C++
templates with thread_local nodes, double-checked locking, hazard pointers whose relaxed protect
store breaks the C++20 release sequence (a race TSan misses), a seqlock over atomic words,
condition-variable buffers (timed waits too), call_once, thread_local counters, an intrusive MPSC
queue, epoch-based reclamation, heap result slots, a 24-byte std::atomic through libatomic,
__atomic builtins on plain ints, a 65,536-bin atomic histogram, libc I/O on shared buffers
(snprintf, read, write), a race in an inlined helper, members of a global struct.

Default suite: a handful of them with `pyrsan run` at its defaults (the added time stays small).
Slow (-m slow): every program at -O0, -O1 and -O2, under --explore, and for every non-robust
one `pyrsan fix` whose output must explore robust.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from litmus_header import parse_program
from test_corpus import _check, races_expected

HERE = Path(__file__).resolve().parent / "qa"
PROGRAMS = sorted([*HERE.glob("*.c"), *HERE.glob("*.cpp")])
DEFAULT = ["hazard_ptr_relacq.c", "spsc_cached.c", "qsbr_fenced.c", "z6_relacq.c", "sb_rmw_ar_third.c",
           # session 16: each the regression test of a fix (benchmarks/README.md "Session 16: QA")
           "ticket_lock.c",            # a wait on a member of a global (passes/spinloops.py)
           "c11_tss_detach.c",         # tss_t destructors before the thread finishes (intercept_tsd.c)
           "thread_local_dtor_signals.cpp",  # C++ thread_local destructors, the same
           "fork_child_writes_thread_data.c",  # the fork child joins the threads it lost (intercept_fork.c)
           "sb_signal_fence.c", "exit_while_spinning.c", "r_xchg_rel_sc.c",
           "signal_to_waiting_thread.c",  # a deferred handler in a parked thread (signal_defer.c)
           # session 18: each the regression test of a fix (benchmarks/README.md "Session 18: qa")
           "libc_io_buffers_race.c",   # snprintf / read(2) writes, write(2) reads (passes/libcio.py)
           "atomic_big_struct_relaxed_race.cpp",  # the same through std::string, with libatomic
           "member_names_sb.c",        # reports name ctl.side[0].want (passes/debuginfo.py)
           # session 21: waits of real lock-free code (passes/spinloops.py, docs/toolchain.md §5)
           "status_bits_wait.c",       # a wait on some bits of a word: a masked spin load
           "asm_ttas_lock.c"]          # a TTAS lock of x86 asm loads, merged with its exchange

# Programs whose verdict pyrsan gets wrong for a cause outside this corpus's owner (strict: the
# day the cause is fixed, the test says so). Each reason names the command and what goes wrong.
XFAIL: dict[str, str] = {}


def _xfail(path):
    reason = XFAIL.get(path.name)
    return pytest.param(path, id=path.name, marks=pytest.mark.xfail(strict=True, reason=reason)) if reason \
        else pytest.param(path, id=path.name)


@pytest.mark.parametrize("name", DEFAULT)
def test_qa_default_run(run_pyrsan, name, tmp_path):
    _check(run_pyrsan, HERE / name, tmp_path)


@pytest.mark.parametrize("path", [_xfail(HERE / name) for name in sorted(XFAIL)])
def test_qa_known_wrong_verdicts(run_pyrsan, path, tmp_path):
    _check(run_pyrsan, path, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("path", [_xfail(p) for p in PROGRAMS])
def test_qa_each_level(run_pyrsan, path, opt, tmp_path):
    _check(run_pyrsan, path, tmp_path, opt)


@pytest.mark.slow
@pytest.mark.parametrize("path", [_xfail(p) for p in PROGRAMS])
def test_qa_explore(run_pyrsan, path, tmp_path):
    if path.name in EXPLORE_SKIP:
        pytest.skip(EXPLORE_SKIP[path.name])
    bound = EXPLORE_BOUND.get(path.name, 2000)
    _check(run_pyrsan, path, tmp_path, "--explore", "--keep-going", "--max-schedules", bound)


# programs whose schedules are long (hundreds of threads, a ring of many steps): fewer schedules,
# so that one exploration stays within the test's 600 s on a loaded machine
EXPLORE_BOUND = {"spsc_template_lambda.cpp": 200}
# measured in session 16 (load ~40 on 2 cores): `pyrsan run --explore --max-schedules 1
# many_threads_token_ring.c` took 570 s of wall time (62 s of the driver's CPU, 32,640 schedules
# queued after the one run): the explorer's analysis of a 256-thread trace, not the program
EXPLORE_SKIP = {
    "many_threads_token_ring.c": "one explored schedule of 256 threads takes minutes (explore.py's trace analysis)",
    "many_threads_waves_race.c": "one explored schedule of 300 threads takes minutes (explore.py's trace analysis)",
    # session 17 (load ~50): `--explore --keep-going --max-schedules 2000` did not end in 600 s
    "many_pairs_sb_fenced.c": "64 threads: 2000 explored schedules take more than the test's 600 s",
}


NOT_ROBUST = [p for p in PROGRAMS if not parse_program(p).robust and p.name not in XFAIL]
# non-robust programs whose repair pyrsan fix checks but can only print as a manual step
# (session 17: a fence inside a one-line body `{ ...; }`, an order on a line with two atomic
# operations and a fence after a CAS in a one-line if's condition are patched now:
# sb_fnptr_ops.c, mp_sc_store_rlx_load.cpp, treiber_tagged.c, pyrsan/patch.py)
FIX_MANUAL: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("path", NOT_ROBUST, ids=[p.name for p in NOT_ROBUST])
def test_qa_fix_makes_it_robust(run_pyrsan, path, tmp_path):
    program = parse_program(path)
    src = tmp_path / path.name
    shutil.copy(path, src)
    fix = run_pyrsan("fix", *program.options, "--in-place", src.name, cwd=tmp_path, timeout=900)
    assert "Traceback" not in fix.stderr, fix.stderr[-3000:]
    if path.name in FIX_MANUAL:
        # the checked repair cannot be written into the source: pyrsan fix says what to do
        assert fix.returncode == 0 and "manual: " in fix.stdout + fix.stderr, (fix.stdout + fix.stderr)[-3000:]
        return
    assert src.read_text() != path.read_text(), fix.stderr[-3000:]
    out = tmp_path / "r.json"
    races = ("--no-races",) if races_expected(path) else ()
    run = run_pyrsan("run", "--explore", "--keep-going", "--max-schedules", 2000, *races, "--json", out,
                     *program.options, src.name, cwd=tmp_path, timeout=900)
    document = json.loads(out.read_text())
    assert not [r for r in document["reports"] if r["kind"] == "robustness"], run.stderr[-3000:]


# The generated litmus shapes as reference-model programs (rc20.py op tuples): the header
# verdict must be the model's. Two-thread shapes by default; the three/four-thread ones are
# slow in the brute-force model (-m slow).
SHAPES = {
    "2p2w_rel_sc_mix.c": [
        [('st', 'x', 1, 'rel'), ('st', 'y', 2, 'sc')],
        [('st', 'y', 1, 'rel'), ('st', 'x', 2, 'sc')],
    ],
    "2p2w_sc_all.c": [
        [('st', 'x', 1, 'sc'), ('st', 'y', 2, 'sc')],
        [('st', 'y', 1, 'sc'), ('st', 'x', 2, 'sc')],
    ],
    "2p2w_fence_one_side.c": [
        [('st', 'x', 1, 'rlx'), ('fence', 'sc'), ('st', 'y', 2, 'rlx')],
        [('st', 'y', 1, 'rlx'), ('st', 'x', 2, 'rlx')],
    ],
    "2p2w_fence_both_rlx.c": [
        [('st', 'x', 1, 'rlx'), ('fence', 'sc'), ('st', 'y', 2, 'rlx')],
        [('st', 'y', 1, 'rlx'), ('fence', 'sc'), ('st', 'x', 2, 'rlx')],
    ],
    "lb_rlx.c": [
        [('ld', 'x', 'rlx'), ('st', 'y', 1, 'rlx')],
        [('ld', 'y', 'rlx'), ('st', 'x', 1, 'rlx')],
    ],
    "lb_acq_rel.c": [
        [('ld', 'x', 'acq'), ('st', 'y', 1, 'rel')],
        [('ld', 'y', 'acq'), ('st', 'x', 1, 'rel')],
    ],
    "cowr_rlx.c": [
        [('st', 'x', 1, 'rlx'), ('ld', 'x', 'rlx')],
        [('st', 'x', 2, 'rlx')],
    ],
    "corw_rmw.c": [
        [('ld', 'x', 'rlx'), ('st', 'x', 1, 'rlx')],
        [('rmw', 'x', 'add', 2, 'rlx')],
    ],
    "r_sc_all.c": [
        [('st', 'x', 1, 'sc'), ('st', 'y', 1, 'sc')],
        [('st', 'y', 2, 'sc'), ('ld', 'x', 'sc')],
    ],
    "r_fence_reader_only.c": [
        [('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'rel')],
        [('st', 'y', 2, 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
    "r_sc_store_fence.c": [
        [('st', 'x', 1, 'rlx'), ('fence', 'sc'), ('st', 'y', 1, 'rlx')],
        [('st', 'y', 2, 'sc'), ('ld', 'x', 'sc')],
    ],
    "s_fences_both.c": [
        [('st', 'x', 2, 'rlx'), ('fence', 'sc'), ('st', 'y', 1, 'rlx')],
        [('ld', 'y', 'rlx'), ('fence', 'sc'), ('st', 'x', 1, 'rlx')],
    ],
    "s_rel_rlx.c": [
        [('st', 'x', 2, 'rlx'), ('st', 'y', 1, 'rel')],
        [('ld', 'y', 'rlx'), ('st', 'x', 1, 'rlx')],
    ],
    "s_sc_all.c": [
        [('st', 'x', 2, 'sc'), ('st', 'y', 1, 'sc')],
        [('ld', 'y', 'sc'), ('st', 'x', 1, 'sc')],
    ],
    "mp_fences_relacq.c": [
        [('st', 'x', 1, 'rlx'), ('fence', 'rel'), ('st', 'y', 1, 'rlx')],
        [('ld', 'y', 'rlx'), ('fence', 'acq'), ('ld', 'x', 'rlx')],
    ],
    "mp_acq_fence_only.c": [
        [('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'rlx')],
        [('ld', 'y', 'rlx'), ('fence', 'acq'), ('ld', 'x', 'rlx')],
    ],
    "sb_rmw_rlx_third.c": [
        [('st', 'x', 1, 'rlx'), ('rmw', 'z', 'add', 1, 'rlx'), ('ld', 'y', 'rlx')],
        [('st', 'y', 1, 'rlx'), ('rmw', 'z', 'add', 1, 'rlx'), ('ld', 'x', 'rlx')],
    ],
    "sb_rmw_ar_third.c": [
        [('st', 'x', 1, 'rlx'), ('rmw', 'z', 'add', 1, 'ar'), ('ld', 'y', 'rlx')],
        [('st', 'y', 1, 'rlx'), ('rmw', 'z', 'add', 1, 'ar'), ('ld', 'x', 'rlx')],
    ],
    "sb_xchg_sc_rlxload.c": [
        [('rmw', 'x', 'xchg', 1, 'sc'), ('ld', 'y', 'rlx')],
        [('rmw', 'y', 'xchg', 1, 'sc'), ('ld', 'x', 'rlx')],
    ],
    # session 16 (a signal fence is no fence between threads: SB relaxed)
    "sb_signal_fence.c": [[('st', 'x', 1, 'rlx'), ('ld', 'y', 'rlx')], [('st', 'y', 1, 'rlx'), ('ld', 'x', 'rlx')]],
    "sb_acqrel_fences_cpp.cpp": [[('st', 'x', 1, 'rlx'), ('fence', 'ar'), ('ld', 'y', 'rlx')],
                                 [('st', 'y', 1, 'rlx'), ('fence', 'ar'), ('ld', 'x', 'rlx')]],
    "sb_sc_vs_fence.c": [[('st', 'x', 1, 'sc'), ('ld', 'y', 'sc')],
                         [('st', 'y', 1, 'rel'), ('fence', 'sc'), ('ld', 'x', 'acq')]],
    "sb_cas_acqrel.c": [[('cas', 'x', 0, 1, 'ar', 'acq', False), ('ld', 'y', 'acq')],
                        [('cas', 'y', 0, 1, 'ar', 'acq', False), ('ld', 'x', 'acq')]],
    "r_xchg_rel_sc.c": [[('st', 'x', 1, 'rlx'), ('rmw', 'y', 'xchg', 1, 'rel')],
                        [('st', 'y', 2, 'sc'), ('ld', 'x', 'sc')]],
    "lb_rmw_rlx.c": [[('rmw', 'x', 'add', 1, 'rlx'), ('st', 'y', 1, 'rlx')],
                     [('rmw', 'y', 'add', 1, 'rlx'), ('st', 'x', 1, 'rlx')]],
    "twoplustwow_xchg_sc.cpp": [[('rmw', 'x', 'xchg', 1, 'sc'), ('rmw', 'y', 'xchg', 2, 'sc')],
                                [('rmw', 'y', 'xchg', 1, 'sc'), ('rmw', 'x', 'xchg', 2, 'sc')]],
    "mp_consume_ptr.c": [[('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'rel')], [('ld', 'y', 'con'), ('ld', 'x', 'rlx')]],
    "mp_sc_store_rlx_load.cpp": [[('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'sc')],
                                 [('ld', 'y', 'rlx'), ('ld', 'x', 'rlx')]],
    # session 17 (SC fences and seq_cst accesses mixed with weaker ones, RMWs as reads, C++20
    # release sequences)
    "sb_sc_store_vs_fence_rlx.c": [
        [('st', 'x', 1, 'sc'), ('ld', 'y', 'rlx')],
        [('st', 'y', 1, 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
    "sb_rmw_reads_rlx.c": [
        [('st', 'x', 1, 'rlx'), ('rmw', 'y', 'add', 0, 'rlx')],
        [('st', 'y', 1, 'rlx'), ('rmw', 'x', 'add', 0, 'rlx')],
    ],
    "sb_rmw_reads_sc.c": [
        [('st', 'x', 1, 'rlx'), ('rmw', 'y', 'add', 0, 'sc')],
        [('st', 'y', 1, 'rlx'), ('rmw', 'x', 'add', 0, 'sc')],
    ],
    "mp_sc_stores_fenced_reader.c": [
        [('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'sc')],
        [('ld', 'y', 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
    "mp_relseq_same_thread_store.c": [
        [('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'rel'), ('st', 'y', 2, 'rlx')],
        [('ld', 'y', 'acq'), ('ld', 'x', 'rlx')],
    ],
    "mp_relseq_same_thread_rmw.c": [
        [('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'rel'), ('rmw', 'y', 'add', 1, 'rlx')],
        [('ld', 'y', 'acq'), ('ld', 'x', 'rlx')],
    ],
    "sb_failed_cas_sc.c": [
        [('st', 'x', 1, 'rlx'), ('cas', 'z', 5, 6, 'sc', 'sc', False), ('ld', 'y', 'rlx')],
        [('st', 'y', 1, 'rlx'), ('cas', 'z', 5, 6, 'sc', 'sc', False), ('ld', 'x', 'rlx')],
    ],
    "sb_cas_rel_acq_fence.c": [
        [('cas', 'x', 0, 1, 'rel', 'rlx', False), ('fence', 'sc'), ('ld', 'y', 'rlx')],
        [('cas', 'y', 0, 1, 'rel', 'rlx', False), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
    "2p2w_sc_fence_rel.c": [
        [('st', 'x', 1, 'rel'), ('fence', 'sc'), ('st', 'y', 2, 'rel')],
        [('st', 'y', 1, 'rel'), ('fence', 'sc'), ('st', 'x', 2, 'rel')],
    ],
    "lb_sc_all.c": [[('ld', 'x', 'sc'), ('st', 'y', 1, 'sc')], [('ld', 'y', 'sc'), ('st', 'x', 1, 'sc')]],
    "sb_fence_acq_rel_mix.c": [
        [('st', 'x', 1, 'rel'), ('fence', 'ar'), ('ld', 'y', 'acq')],
        [('st', 'y', 1, 'rel'), ('fence', 'sc'), ('ld', 'x', 'acq')],
    ],
    "r_rmw_sc_both.c": [
        [('st', 'x', 1, 'rlx'), ('rmw', 'y', 'xchg', 1, 'sc')],
        [('rmw', 'y', 'xchg', 2, 'sc'), ('ld', 'x', 'rlx')],
    ],
    "s_sc_fence_writer_only.c": [
        [('st', 'x', 2, 'rlx'), ('fence', 'sc'), ('st', 'y', 1, 'rlx')],
        [('ld', 'y', 'rlx'), ('st', 'x', 1, 'rlx')],
    ],
    "2p2w_rmw_one_side.c": [
        [('rmw', 'x', 'add', 1, 'rlx'), ('st', 'y', 2, 'rlx')],
        [('st', 'y', 1, 'rlx'), ('st', 'x', 2, 'rlx')],
    ],
    "corr_rmw_two_readers.c": [[('rmw', 'x', 'add', 1, 'rlx')], [('ld', 'x', 'rlx'), ('ld', 'x', 'rlx')]],
}
SLOW_SHAPES = {
    "corr_two_writers.c": [
        [('st', 'x', 1, 'rlx')],
        [('st', 'x', 2, 'rlx')],
        [('ld', 'x', 'rlx'), ('ld', 'x', 'rlx')],
        [('ld', 'x', 'rlx'), ('ld', 'x', 'rlx')],
    ],
    "sb3_sc_all.c": [
        [('st', 'x', 1, 'sc'), ('ld', 'y', 'sc')],
        [('st', 'y', 1, 'sc'), ('ld', 'z', 'sc')],
        [('st', 'z', 1, 'sc'), ('ld', 'x', 'sc')],
    ],
    "sb3_fences_all.c": [
        [('st', 'x', 1, 'rlx'), ('fence', 'sc'), ('ld', 'y', 'rlx')],
        [('st', 'y', 1, 'rlx'), ('fence', 'sc'), ('ld', 'z', 'rlx')],
        [('st', 'z', 1, 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
    "sb3_relacq.c": [
        [('st', 'x', 1, 'rel'), ('ld', 'y', 'acq')],
        [('st', 'y', 1, 'rel'), ('ld', 'z', 'acq')],
        [('st', 'z', 1, 'rel'), ('ld', 'x', 'acq')],
    ],
    "wrwc_fence_one.c": [
        [('st', 'x', 1, 'rlx')],
        [('ld', 'x', 'acq'), ('ld', 'y', 'rlx')],
        [('st', 'y', 1, 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
    "wrwc_fences.c": [
        [('st', 'x', 1, 'rlx')],
        [('ld', 'x', 'acq'), ('fence', 'sc'), ('ld', 'y', 'rlx')],
        [('st', 'y', 1, 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
    "wrwc_sc.c": [
        [('st', 'x', 1, 'sc')],
        [('ld', 'x', 'sc'), ('ld', 'y', 'sc')],
        [('st', 'y', 1, 'sc'), ('ld', 'x', 'sc')],
    ],
    "z6_relacq.c": [
        [('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'rel')],
        [('st', 'y', 2, 'rlx'), ('st', 'z', 1, 'rel')],
        [('ld', 'z', 'acq'), ('ld', 'x', 'rlx')],
    ],
    "z6_fences.c": [
        [('st', 'x', 1, 'rlx'), ('fence', 'sc'), ('st', 'y', 1, 'rlx')],
        [('st', 'y', 2, 'rlx'), ('fence', 'sc'), ('st', 'z', 1, 'rlx')],
        [('ld', 'z', 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
    "wrc_relacq.c": [
        [('st', 'x', 1, 'rlx')],
        [('ld', 'x', 'rlx'), ('st', 'y', 1, 'rel')],
        [('ld', 'y', 'acq'), ('ld', 'x', 'rlx')],
    ],
    "wrc_acq_chain.c": [
        [('st', 'x', 1, 'rel')],
        [('ld', 'x', 'acq'), ('st', 'y', 1, 'rel')],
        [('ld', 'y', 'acq'), ('ld', 'x', 'acq')],
    ],
    # session 16
    "z6_rmw_fence.c": [[('st', 'x', 1, 'rlx'), ('st', 'y', 1, 'rel')],
                       [('rmw', 'y', 'add', 1, 'ar'), ('st', 'z', 1, 'rel')],
                       [('st', 'z', 2, 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')]],
    "wwc_relacq.c": [[('st', 'x', 2, 'rlx')], [('ld', 'x', 'acq'), ('st', 'y', 1, 'rel')],
                     [('ld', 'y', 'acq'), ('st', 'x', 1, 'rlx')]],
    "mp_fence_relseq_rmw.c": [[('st', 'x', 1, 'rlx'), ('fence', 'rel'), ('st', 'y', 1, 'rlx')],
                              [('rmw', 'y', 'add', 1, 'rlx')],
                              [('ld', 'y', 'rlx'), ('fence', 'acq'), ('ld', 'x', 'rlx')]],
    # session 17
    "iriw_sc_writes_acq_reads.c": [
        [('st', 'x', 1, 'sc')],
        [('st', 'y', 1, 'sc')],
        [('ld', 'x', 'acq'), ('ld', 'y', 'acq')],
        [('ld', 'y', 'acq'), ('ld', 'x', 'acq')],
    ],
    "rwc_fence_reader_sc_writer.c": [
        [('st', 'x', 1, 'rlx')],
        [('ld', 'x', 'rlx'), ('fence', 'sc'), ('ld', 'y', 'rlx')],
        [('st', 'y', 1, 'sc'), ('ld', 'x', 'sc')],
    ],
    "wrc_sc_fences.c": [
        [('st', 'x', 1, 'rlx')],
        [('ld', 'x', 'rlx'), ('fence', 'sc'), ('st', 'y', 1, 'rlx')],
        [('ld', 'y', 'rlx'), ('fence', 'sc'), ('ld', 'x', 'rlx')],
    ],
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_qa_shapes_agree_with_the_reference_model(name):
    from rc20 import robust
    assert robust(SHAPES[name]) == parse_program(HERE / name).robust


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW_SHAPES))
def test_qa_three_thread_shapes_agree_with_the_reference_model(name):
    from rc20 import robust
    assert robust(SLOW_SHAPES[name]) == parse_program(HERE / name).robust


MULTI_TU = HERE.parent / "qa_multi_tu"


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_qa_multi_tu_message_passing(run_pyrsan, tmp_path, opt):
    """qa_multi_tu/: MP with relaxed accesses in helpers of channel.c, called from main.c and
    producer.c, the channel a global of channel.c declared extern in channel.h (robust: no, race:
    no). The report names the helper's load (channel.c:12) called from main.c's consumer, the
    stale write channel.c:6 called from producer.c, and fences in channel.c."""
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "--seed", 1, opt, "--json", out, "main.c", "producer.c", "channel.c",
                      cwd=MULTI_TU, timeout=600)
    document = json.loads(out.read_text())
    assert proc.returncode == 66 and document["verdict"] == "violations", proc.stderr[-3000:]
    reports = document["reports"]
    assert reports and all(r["kind"] == "robustness" for r in reports), reports
    for r in reports:
        stack = [(Path(f["file"]).name, f["line"]) for f in r["access"]["stack"]]
        assert stack[0] == ("channel.c", 12) and stack[-1][0] == "main.c", stack
        assert r["previous"].get("initial") or r["previous"]["line"] == 6, r["previous"]
        assert "channel.c:" in r["suggestion"], r["suggestion"]
