"""C++ programs (std::atomic, std::thread, lambdas, classes, std::mutex), run through `pyrsan run`.

Same header convention as the litmus programs (testsuite/litmus/litmus_header.py). Reports must
name the user's source line, not a libstdc++ header: `access.file` is the .cpp file and
`function` the user's function (the `// functions:` header field).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from litmus_header import check_result, parse_program, run_through_cli
from pyrsan.abi import SYSTEM_PREFIXES

HERE = Path(__file__).resolve().parent
PROGRAMS = sorted(HERE.glob("*.cpp"))


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_cpp_verdict_and_reported_lines(path, run_pyrsan, tmp_path):
    program = parse_program(path)
    code, document, stderr = run_through_cli(run_pyrsan, program, tmp_path / "result.json")
    problems = check_result(program, code, document)
    for report in document.get("reports", []):
        access = report.get("access", {})
        if str(access.get("file", "")).startswith(SYSTEM_PREFIXES):
            problems.append(f"access attributed to a system header: {access.get('file')}")
        if not access.get("function"):
            problems.append("access without a function name")
        frames = access.get("stack", [])
        if not any(Path(f.get("file", "")).resolve() == path.resolve() for f in frames):
            problems.append("the user's frame is missing from the access stack")
    assert not problems, (
        f"{program.name} ({program.description}; expected robust: "
        f"{'yes' if program.robust else 'no'} because {program.reason}):\n  "
        + "\n  ".join(problems) + f"\nstderr (tail):\n{stderr[-3000:]}")


def test_cpp_suite_has_reported_and_clean_programs():
    programs = [parse_program(p) for p in PROGRAMS]
    assert any(not p.robust for p in programs) and any(p.robust for p in programs)
    sb = parse_program(HERE / "sb_cpp.cpp")
    assert not sb.robust and sb.functions == {"thread1", "thread2"}
