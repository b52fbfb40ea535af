"""The header convention of the litmus and C++ test programs, and its parser.

A test program starts with `//` comment lines:

    // robust: yes|no                 expected verdict under the default options (required)
    // race: yes|no                   data races on plain memory (docs/architecture.md "Testing"); every program here
                                      is race-free and any race report fails its test
    // options: --sc-accesses ra      extra `pyrsan run` flags (optional)
    // runs: N                        executions to make (optional; default: pyrsan run's own)
    // reason: ...                    why the verdict holds (RC20 / the algorithm)
    // functions: f g                 source functions a report's access may name (optional)
    // One line describing the test.

and marks, with trailing comments, the source lines a report may name:
`// pyrsan: violation` on an access that may be reported, `// pyrsan: stale` on a write that
may be named as the stale (hb-aware) previous write. A robust program has no markers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

#: Seed of every test run: `pyrsan run`'s default scheduler (sched=auto), made reproducible.
TEST_SEED = 1

# `// robust: no`
_HEADER_LINE = re.compile(r"^//\s*([a-z]+)\s*:\s*(.*?)\s*$")
# `  r1 = atomic_load_explicit(&x, memory_order_acquire); // pyrsan: violation, pyrsan: stale`
_MARKER = re.compile(r"//.*?\bpyrsan:\s*(violation|stale)\b")
_MARKER_ANY = re.compile(r"\bpyrsan:\s*(violation|stale)\b")
_KNOWN_KEYS = {"robust", "options", "runs", "reason", "race", "functions"}


class HeaderError(ValueError):
    """A test program whose header does not follow the convention."""


@dataclass(frozen=True)
class LitmusProgram:
    path: Path
    robust: bool
    options: tuple[str, ...]
    runs: int | None
    reason: str
    description: str
    violation_lines: frozenset[int]
    stale_lines: frozenset[int]
    functions: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.path.name


def parse_program(path: Path) -> LitmusProgram:
    """Parse the header and the markers of one test program; HeaderError when malformed."""
    lines = path.read_text(encoding="utf-8").splitlines()
    fields: dict[str, str] = {}
    description = ""
    for line in lines:
        if not line.startswith("//"):
            break
        match = _HEADER_LINE.match(line)
        if match and match.group(1) in _KNOWN_KEYS:
            key, value = match.groups()
            if key in fields:
                raise HeaderError(f"{path.name}: duplicate header field '{key}'")
            fields[key] = value
        elif not description:
            description = line[2:].strip()
    if "robust" not in fields:
        raise HeaderError(f"{path.name}: no '// robust: yes|no' verdict in the header")
    if fields["robust"] not in ("yes", "no"):
        raise HeaderError(f"{path.name}: verdict must be 'yes' or 'no', not '{fields['robust']}'")
    if fields.get("race", "no") not in ("yes", "no"):
        raise HeaderError(f"{path.name}: 'race' must be 'yes' or 'no'")
    runs = None
    if "runs" in fields:
        if not fields["runs"].isdigit() or int(fields["runs"]) < 1:
            raise HeaderError(f"{path.name}: 'runs' must be a positive integer")
        runs = int(fields["runs"])
    if not description:
        raise HeaderError(f"{path.name}: no one-line description in the header")
    violation: set[int] = set()
    stale: set[int] = set()
    for number, line in enumerate(lines, start=1):
        comment = line.find("//")
        if comment < 0 or not _MARKER.search(line):
            continue
        for kind in _MARKER_ANY.findall(line[comment:]):
            (violation if kind == "violation" else stale).add(number)
    robust = fields["robust"] == "yes"
    if robust and (violation or stale):
        raise HeaderError(f"{path.name}: a robust program must not carry pyrsan markers")
    if not robust and not violation:
        raise HeaderError(f"{path.name}: a non-robust program needs a '// pyrsan: violation' marker")
    return LitmusProgram(
        path=path, robust=robust, options=tuple(fields.get("options", "").split()), runs=runs,
        reason=fields.get("reason", ""), description=description,
        violation_lines=frozenset(violation), stale_lines=frozenset(stale),
        functions=frozenset(fields.get("functions", "").split()),
    )


def run_through_cli(run_pyrsan: Callable, program: LitmusProgram, out: Path,
                    run_timeout: float = 20) -> tuple[int, dict, str]:
    """`pyrsan run --seed 1 --timeout S --json OUT [--runs N] [options] FILE` (testsuite/conftest.py's
    run_pyrsan) -> (exit status, the --json document, stderr). The defaults of `pyrsan run` choose
    the scheduler and the number of runs (issue 12: they must find these violations unaided);
    only the seed is fixed, so that a failure replays."""
    runs = ("--runs", program.runs) if program.runs is not None else ()
    seed = () if "--sched" in program.options and "auto" not in program.options else ("--seed", TEST_SEED)
    proc = run_pyrsan("run", *runs, *seed, "--timeout", run_timeout, "--json", out,
                      *program.options, program.path, timeout=600)
    if not out.exists():
        raise AssertionError(f"{program.name}: no --json output (exit {proc.returncode}); "
                             f"stderr:\n{proc.stderr[-3000:]}")
    return proc.returncode, json.loads(out.read_text(encoding="utf-8")), proc.stderr


def check_result(program: LitmusProgram, returncode: int, document: dict) -> list[str]:
    """Compare a `pyrsan run --json` result with the program's expectations.

    Returns the list of problems (empty when the result is as expected)."""
    problems: list[str] = []
    reports = document.get("reports", [])
    # a robust program is "clean", or "robust" when the default's exploration of a small program
    # (or --explore) completed
    expected_code, expected_verdicts = (0, ("clean", "robust")) if program.robust else (66, ("violations",))
    if returncode != expected_code:
        problems.append(f"exit status {returncode}, expected {expected_code}")
    if document.get("verdict") not in expected_verdicts:
        problems.append(f"verdict {document.get('verdict')!r}, expected {' or '.join(map(repr, expected_verdicts))}")
    if program.robust and reports:
        problems.append(f"robust program reported {len(reports)} time(s)")
    source = program.path.resolve()
    for report in reports:
        access = report.get("access", {})
        where = f"{Path(access.get('file', '?')).name}:{access.get('line')}"
        if report.get("kind") != "robustness":
            problems.append(f"report of kind {report.get('kind')!r} at {where}")
            continue
        if not _same_file(access.get("file"), source):
            problems.append(f"access reported in {access.get('file')!r}, not in {source}")
        elif access.get("line") not in program.violation_lines:
            problems.append(f"access reported at unmarked line {where} "
                            f"(marked: {sorted(program.violation_lines)})")
        if program.functions and access.get("function") not in program.functions:
            problems.append(f"access at {where} reported in function {access.get('function')!r}, "
                            f"expected one of {sorted(program.functions)}")
        previous = report.get("previous", {})
        if previous.get("initial") or "line" not in previous:
            continue  # the initial value or an older write: no source line to check
        if not _same_file(previous.get("file"), source):
            problems.append(f"stale write reported in {previous.get('file')!r}, not in {source}")
        elif previous.get("line") not in program.stale_lines:
            problems.append(f"stale write reported at unmarked line {previous.get('line')} "
                            f"(marked: {sorted(program.stale_lines)})")
    if "--sc-accesses" in program.options:
        mode = program.options[program.options.index("--sc-accesses") + 1]
        for report in reports:
            if f"sc_accesses={mode}" not in report.get("model", ""):
                problems.append(f"report model {report.get('model')!r} does not name sc_accesses={mode}")
    return problems


def _same_file(reported: str | None, source: Path) -> bool:
    if not reported:
        return False
    try:
        return Path(reported).resolve() == source
    except OSError:
        return False
