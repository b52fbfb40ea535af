"""Session 15's QA corpus (testsuite/corpus/qa/): litmus shapes with mixed orders and fences
(2+2W, LB, CoRR/CoWR/CoRW, R, S, 3.SB, W+RWC, Z6.3, WRC, MP, SB through RMWs on a third
location) generated from rc20.py op lists, whose header verdicts are the reference model's, and
real-code patterns (hazard pointers, QSBR, MCS/CLH locks, a CAS reader-writer lock, Vyukov's
MPMC queue, an SPSC ring with cached indices, Chase-Lev, call_once, a COW string, atomic_flag
wait/notify, the generic stdatomic.h functions, __sync builtins, _Atomic structs, volatile with
compiler barriers, C11 threads), whose verdicts are argued in their headers.

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
DEFAULT = ["hazard_ptr_relacq.c", "spsc_cached.c", "qsbr_fenced.c", "z6_relacq.c", "sb_rmw_ar_third.c"]


@pytest.mark.parametrize("name", DEFAULT)
def test_qa_default_run(run_pyrsan, name, tmp_path):
    _check(run_pyrsan, HERE / name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_qa_each_level(run_pyrsan, path, opt, tmp_path):
    _check(run_pyrsan, path, tmp_path, opt)


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_qa_explore(run_pyrsan, path, tmp_path):
    _check(run_pyrsan, path, tmp_path, "--explore", "--keep-going", "--max-schedules", 2000)


NOT_ROBUST = [p for p in PROGRAMS if not parse_program(p).robust]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOT_ROBUST, ids=[p.name for p in NOT_ROBUST])
def test_qa_fix_makes_it_robust(run_pyrsan, path, tmp_path):
    program = parse_program(path)
    src = tmp_path / path.name
    shutil.copy(path, src)
    fix = run_pyrsan("fix", *program.options, "--in-place", src.name, cwd=tmp_path, timeout=900)
    assert "Traceback" not in fix.stderr, fix.stderr[-3000:]
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
