"""A user's corpus: litmus shapes and small real-code patterns written for session 14's QA,
none a copy of testsuite/litmus or benchmarks/, run through `pyrsan run` as a user would.

Each program states its verdicts in its header (testsuite/litmus/litmus_header.py's convention):
`// robust: yes|no` under RC20 (checked against testsuite/reference/rc20.py for the straight-line
shapes: test_corpus_shapes_agree_with_the_reference_model) and `// race: yes|no` under C11
happens-before (ThreadSanitizer agrees where it sees the interleaving). Unlike the litmus suite,
a program may race: a race program must get a race report, a race-free one none. Marked lines
(`// pyrsan: violation`, `// pyrsan: stale`) are the only lines a robustness report may name.

The default test runs `pyrsan run` with its defaults (seed fixed); the slow one `--explore`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from litmus_header import TEST_SEED, LitmusProgram, parse_program

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted([*HERE.glob("*.c"), *HERE.glob("*.cpp")])


def races_expected(path: Path) -> bool:
    m = re.search(r"^// race: (yes|no)\s*$", path.read_text(encoding="utf-8"), re.M)
    assert m, f"{path.name}: no '// race: yes|no' header line"
    return m.group(1) == "yes"


def problems_of(program: LitmusProgram, racy: bool, code: int, document: dict) -> list[str]:
    problems: list[str] = []
    reports = document.get("reports", [])
    robustness = [r for r in reports if r.get("kind") == "robustness"]
    races = [r for r in reports if r.get("kind") == "race"]
    other = [r.get("kind") for r in reports if r.get("kind") not in ("robustness", "race")]
    reporting = racy or not program.robust
    if other:
        problems.append(f"reports of unexpected kinds {other}")
    if code != (66 if reporting else 0):
        problems.append(f"exit status {code}, expected {66 if reporting else 0}")
    verdicts = ("violations",) if reporting else ("clean", "robust")
    if document.get("verdict") not in verdicts:
        problems.append(f"verdict {document.get('verdict')!r}, expected one of {verdicts}")
    if program.robust and robustness:
        problems.append("false robustness report(s) at lines "
                        f"{sorted(r['access'].get('line') for r in robustness)}")
    if not program.robust and not robustness:
        problems.append("missed robustness violation")
    if racy and not races:
        problems.append("missed data race")
    if not racy and races:
        problems.append("false race report(s) at "
                        f"{[(r['access'].get('line'), r.get('previous', {}).get('line')) for r in races]}")
    source = program.path.resolve()
    for r in robustness:
        access, previous = r.get("access", {}), r.get("previous", {})
        if Path(access.get("file", "")).resolve() != source or access.get("line") not in program.violation_lines:
            problems.append(f"robustness access reported at {access.get('file')}:{access.get('line')}, "
                            f"marked: {sorted(program.violation_lines)}")
        if not previous.get("initial") and "line" in previous and previous["line"] not in program.stale_lines:
            problems.append(f"stale write reported at line {previous['line']}, marked: {sorted(program.stale_lines)}")
    return problems


def run(run_pyrsan, program: LitmusProgram, out: Path, *extra) -> tuple[int, dict, str]:
    runs = ("--runs", program.runs) if program.runs is not None else ()
    seed = () if "--explore" in extra else ("--seed", TEST_SEED)
    proc = run_pyrsan("run", *runs, *seed, "--timeout", 20, "--json", out, *program.options, *extra,
                      program.path, timeout=600)
    assert out.exists(), f"{program.name}: no --json output (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, json.loads(out.read_text(encoding="utf-8")), proc.stderr


def _check(run_pyrsan, path: Path, tmp_path: Path, *extra) -> None:
    program = parse_program(path)
    racy = races_expected(path)
    code, document, stderr = run(run_pyrsan, program, tmp_path / "result.json", *extra)
    problems = problems_of(program, racy, code, document)
    assert not problems, (f"{program.name} ({program.description}; robust: "
                          f"{'yes' if program.robust else 'no'}, race: {'yes' if racy else 'no'}; "
                          f"{program.reason}):\n  " + "\n  ".join(problems) + f"\nstderr:\n{stderr[-3000:]}")


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_corpus_default_run(run_pyrsan, path, tmp_path):
    _check(run_pyrsan, path, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_corpus_explore(run_pyrsan, path, tmp_path):
    _check(run_pyrsan, path, tmp_path, "--explore", "--keep-going", "--max-schedules", 3000)


def test_corpus_is_not_vacuous():
    programs = [parse_program(p) for p in PROGRAMS]
    racy = [p for p in PROGRAMS if races_expected(p)]
    assert len(programs) >= 40
    assert sum(not p.robust for p in programs) >= 12 and sum(p.robust for p in programs) >= 20
    assert len(racy) >= 4 and len(racy) < len(programs) // 2
    assert sum(p.suffix == ".cpp" for p in PROGRAMS) >= 12


# The straight-line shapes of the corpus as reference-model programs (rc20.py op tuples): the
# header verdicts must be the model's (both sc_accesses modes where the program depends on it).
R, A, REL, AR, SC = "rlx", "acq", "rel", "ar", "sc"
SHAPES = {
    "r_relacq_heap16.c": [[("st", "x", 1, R), ("st", "y", 1, REL)], [("st", "y", 2, REL), ("ld", "x", A)]],
    "r_fences_both_stack64.c": [[("st", "x", 1, R), ("fence", SC), ("st", "y", 1, R)],
                                [("st", "y", 2, R), ("fence", SC), ("ld", "x", R)]],
    "s_relacq_8bit.c": [[("st", "x", 2, R), ("st", "y", 1, REL)], [("ld", "y", A), ("st", "x", 1, R)]],
    "s_rlx_array.c": [[("st", "x", 2, R), ("st", "y", 1, R)], [("ld", "y", R), ("st", "x", 1, R)]],
    "isa2_mid_rlx_race.c": [[("st", "x", 1, R), ("st", "y", 1, REL)], [("ld", "y", R), ("st", "z", 1, REL)],
                            [("ld", "z", A), ("ld", "x", R)]],
    "relseq_store_breaks.c": [[("st", "x", 1, R), ("st", "y", 1, REL)], [("st", "y", 2, R)],
                              [("ld", "y", A), ("ld", "x", R)]],
    "sb_sc_rmw_as_fence.c": [[("st", "x", 1, R), ("rmw", "z", "add", 0, SC), ("ld", "y", R)],
                             [("st", "y", 1, R), ("rmw", "z", "add", 0, SC), ("ld", "x", R)]],
    "sb_xchg_acqrel.c": [[("rmw", "x", "xchg", 1, AR), ("ld", "y", A)], [("rmw", "y", "xchg", 1, AR), ("ld", "x", A)]],
    "sb_fence_vs_sc_access.c": [[("st", "x", 1, R), ("fence", SC), ("ld", "y", R)],
                                [("st", "y", 1, SC), ("ld", "x", SC)]],
    "mp_fence_rel_only.c": [[("st", "x", 1, R), ("fence", REL), ("st", "y", 1, R)], [("ld", "y", R), ("ld", "x", R)]],
    "sb3_two_fences.c": [[("st", "x", 1, R), ("fence", SC), ("ld", "y", R)],
                         [("st", "y", 1, R), ("fence", SC), ("ld", "z", R)], [("st", "z", 1, R), ("ld", "x", R)]],
    "iriw_acq_fences.c": [[("st", "x", 1, R)], [("st", "y", 1, R)], [("ld", "x", A), ("fence", SC), ("ld", "y", A)],
                          [("ld", "y", A), ("fence", SC), ("ld", "x", A)]],
    "dynamic_order.c": [[("st", "x", 1, REL), ("ld", "y", A)], [("st", "y", 1, REL), ("ld", "x", A)]],
    "dynamic_order_sc.c": [[("st", "x", 1, SC), ("ld", "y", SC)], [("st", "y", 1, SC), ("ld", "x", SC)]],
    "sb_sc_vs_relaxed_cpp.cpp": [[("st", "x", 1, SC), ("ld", "y", SC)], [("st", "y", 1, R), ("ld", "x", R)]],
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_corpus_shapes_agree_with_the_reference_model(name):
    from rc20 import robust
    assert robust(SHAPES[name]) == parse_program(HERE / name).robust


@pytest.mark.parametrize("name", ["trylock_polling.c", "once_sem.c", "lock_polling.c"])
def test_polling_loops_are_explored_to_the_end(run_pyrsan, name, tmp_path):
    """A thread polling a held lock or an empty semaphore with its try-variant, or a flag read
    inside a critical section, must yield to the holder / poster / setter: an exploration
    schedule that ran the poller spun until max_steps ("the program hung", exit 3) before failed
    try-variants and re-acquisitions of a lock no other thread took were noted as reads."""
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "--explore", "--json", out, HERE / name, timeout=600)
    document = json.loads(out.read_text())
    assert proc.returncode == 0 and document["verdict"] == "robust", proc.stderr[-3000:]
    assert document["exploration"]["complete"] and not document.get("timeouts"), document["exploration"]
