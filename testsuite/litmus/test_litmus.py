"""Every litmus program in this directory, run through the real CLI (`pyrsan run`).

Each `*.c` carries its expected verdict and the lines a report may name (litmus_header.py).
They run with `pyrsan run`'s defaults (issue 12: seeded auto scheduling, up to 20 runs, stopping
at the first that reports), the seed fixed so that a failure replays.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from litmus_header import HeaderError, check_result, parse_program, run_through_cli

HERE = Path(__file__).resolve().parent


PROGRAMS = sorted(HERE.glob("*.c"))

# The families the suite must cover, each in these variants (file name prefix_variant.c).
FAMILIES = ("sb", "mp", "lb", "iriw", "2p2w", "wrc", "corr", "dekker", "peterson")
VARIANTS = ("relacq", "rlx", "sc", "fenced")


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_litmus_verdict_and_reported_lines(path, run_pyrsan, tmp_path):
    program = parse_program(path)
    code, document, stderr = run_through_cli(run_pyrsan, program, tmp_path / "result.json")
    problems = check_result(program, code, document)
    assert not problems, (
        f"{program.name} ({program.description}; expected robust: "
        f"{'yes' if program.robust else 'no'} because {program.reason}):\n  "
        + "\n  ".join(problems) + f"\nstderr (tail):\n{stderr[-3000:]}")


def test_suite_is_not_vacuous():
    programs = [parse_program(p) for p in PROGRAMS]
    not_robust = [p for p in programs if not p.robust]
    assert len(programs) >= 40
    assert 3 * len(not_robust) >= len(programs), "fewer than a third of the programs are not robust"
    names = {p.path.stem for p in programs}
    missing = [f"{family}_{variant}" for family in FAMILIES for variant in VARIANTS
               if f"{family}_{variant}" not in names]
    assert not missing, f"litmus variants missing: {missing}"
    sb = parse_program(HERE / "sb_relacq.c")
    assert not sb.robust and sb.runs is None
    assert not re.search(r"\b(nano|u)?sleep\s*\(", sb.path.read_text()), "the README's example must not sleep"
    # no program forces a scheduler or a number of runs: the defaults must find every violation
    assert not [p.name for p in programs if p.runs is not None or "--sched" in p.options]


def test_readme_example_is_reported_by_the_first_default_run(run_pyrsan, tmp_path):
    """THE example of the README, with `pyrsan run`'s defaults: SB is reported by every
    interleaving that runs one thread's store and load before the other's store, which the
    default scheduler (PCT priorities) produces in its first run, whatever the seed."""
    sb = parse_program(HERE / "sb_relacq.c")
    for seed in (1, 2, 3):
        out = tmp_path / f"sb{seed}.json"
        proc = run_pyrsan("run", "--seed", seed, "--json", out, sb.path, timeout=300)
        document = json.loads(out.read_text())
        assert proc.returncode == 66 and document["verdict"] == "violations", proc.stderr[-2000:]
        assert document["runs"] == 1, document["runs"]


def test_header_parser_rejects_a_program_without_verdict(tmp_path):
    source = tmp_path / "noverdict.c"
    source.write_text("// Store buffering without a verdict.\nint main(void) { return 0; }\n")
    with pytest.raises(HeaderError, match="verdict"):
        parse_program(source)


def test_header_parser_rejects_a_bad_verdict_and_markers_in_a_robust_program(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("// robust: maybe\n// A test.\nint main(void) { return 0; }\n")
    with pytest.raises(HeaderError, match="yes' or 'no"):
        parse_program(bad)
    marked = tmp_path / "marked.c"
    marked.write_text("// robust: yes\n// A test.\nint x; // pyrsan: violation\n")
    with pytest.raises(HeaderError, match="markers"):
        parse_program(marked)
    unmarked = tmp_path / "unmarked.c"
    unmarked.write_text("// robust: no\n// A test.\nint x;\n")
    with pytest.raises(HeaderError, match="violation"):
        parse_program(unmarked)


def test_header_parser_reads_fields_and_markers(tmp_path):
    source = tmp_path / "t.c"
    source.write_text(
        "// robust: no\n// options: --sc-accesses ra\n// runs: 7\n// reason: SB.\n// SB test.\n"
        "int a; // pyrsan: stale\nint b; // pyrsan: violation\nint c; // pyrsan: violation, pyrsan: stale\n")
    program = parse_program(source)
    assert (program.robust, program.options, program.runs) == (False, ("--sc-accesses", "ra"), 7)
    assert program.description == "SB test."
    assert program.violation_lines == {7, 8} and program.stale_lines == {6, 8}


def test_check_result_catches_wrong_lines_and_verdicts(tmp_path):
    source = tmp_path / "t.c"
    source.write_text("// robust: no\n// A test.\nint x;\nint y; // pyrsan: violation\n")
    program = parse_program(source)
    report = {"kind": "robustness", "model": "RC20 (sc_accesses=fenced)",
              "access": {"file": str(source), "line": 4}, "previous": {"initial": True}}
    assert check_result(program, 66, {"verdict": "violations", "reports": [report]}) == []
    wrong_line = dict(report, access={"file": str(source), "line": 3})
    assert check_result(program, 66, {"verdict": "violations", "reports": [wrong_line]})
    wrong_stale = dict(report, previous={"file": str(source), "line": 3, "initial": False})
    assert check_result(program, 66, {"verdict": "violations", "reports": [wrong_stale]})
    race = dict(report, kind="race")
    assert check_result(program, 66, {"verdict": "violations", "reports": [race]})
    assert check_result(program, 0, {"verdict": "clean", "reports": []})
