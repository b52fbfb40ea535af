"""Runtime options (PYRSAN_OPTIONS) and suppressions files, on an instrumented binary run
without the driver: values, errors at start-up (exit 86, one line), log_path, and the README
table and help=1 checked against the runtime's one option table (runtime/src/rsan_flags.inc)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from pyrsan import abi

from .project import REPO_ROOT, clean_env, violation_line, write_project, write_wrappers

EXIT_BAD_OPTIONS = 86
SPIN_LINE = violation_line("lib/spin.c")


def flag_table() -> dict[str, str]:
    """name -> default, from the runtime's option table as the driver reads it."""
    return {name: option.default for name, option in abi.runtime_options(REPO_ROOT / "runtime").items()}


def readme_table() -> dict[str, str]:
    text = (REPO_ROOT / "README.md").read_text()
    section = text.split("### Runtime options (`PYRSAN_OPTIONS`)", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+?) \|", section, flags=re.MULTILINE)
    return {name: ("" if default == "empty" else default) for name, default in rows}


def test_readme_lists_exactly_the_runtime_options_with_their_defaults():
    flags = flag_table()
    assert {"halt_on_error", "exitcode", "log_path", "json_path", "report_races", "report_robustness",
            "sc_accesses", "suppressions", "sched", "seed", "verbosity"} <= set(flags)
    assert readme_table() == flags


@pytest.fixture(scope="module")
def spin_binary(tmp_path_factory) -> Path:
    """lib/spin.c (a deterministic violation in `second`) and a main, built with pyrsan-cc."""
    root = write_project(tmp_path_factory.mktemp("opts"))
    wrappers = write_wrappers(root / "bin")
    (root / "main.c").write_text('#include "spin.h"\nint main(void) { return lib_handoff() * 0; }\n')
    proc = subprocess.run([wrappers["pyrsan-cc"], "-O1", "-Ilib", "main.c", "lib/spin.c", "-o", "spin"],
                          cwd=root, capture_output=True, text=True, env=clean_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return root / "spin"


def test_help_prints_the_table_the_driver_reads(spin_binary):
    proc = run_binary(spin_binary, "help=1")
    printed = re.findall(r"^pyrsan option (\w+) \(default '([^']*)'\): (.*)$", proc.stderr, flags=re.MULTILINE)
    table = abi.runtime_options(REPO_ROOT / "runtime")
    assert printed == [(o.name, o.default, o.help) for o in table.values()]
    assert len(printed) > 20


def run_binary(binary: Path, options: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(binary)], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=clean_env({"PYRSAN_OPTIONS": options}))


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("options, message", [
    ("halt_on_eror=1", "unknown option 'halt_on_eror'"),
    ("verbosity", "option 'verbosity' in PYRSAN_OPTIONS needs a value"),
    ("halt_on_error=2", "option 'halt_on_error' in PYRSAN_OPTIONS has a bad value '2'"),
    ("exitcode=abc", "option 'exitcode' in PYRSAN_OPTIONS has a bad value 'abc'"),
    ("seed=-1", "option 'seed' in PYRSAN_OPTIONS has a bad value '-1'"),
    ("seed=99999999999999999999", "has a bad value"),
    ("max_steps=ten", "option 'max_steps' in PYRSAN_OPTIONS has a bad value 'ten'"),
    ("sched=fifo", "option 'sched' in PYRSAN_OPTIONS has a bad value 'fifo'"),
    ("sc_accesses=weak", "bad value 'weak'"),
])
def test_bad_options_stop_at_start_up_with_their_own_exit_status(spin_binary, options, message):
    proc = run_binary(spin_binary, options)
    assert proc.returncode == EXIT_BAD_OPTIONS
    assert message in one_line(proc.stderr)


def test_good_values_are_accepted_and_exitcode_is_used(spin_binary):
    proc = run_binary(spin_binary, "sched=os seed=18446744073709551615:exitcode=7 halt_on_error=0")
    assert proc.returncode == 7, proc.stderr
    assert "robustness violation (read)" in proc.stderr


def test_report_robustness_off_reports_nothing(spin_binary):
    proc = run_binary(spin_binary, "report_robustness=0")
    assert proc.returncode == 0 and "WARNING" not in proc.stderr


def test_log_path_writes_one_file_per_process_instead_of_stderr(spin_binary, tmp_path):
    proc = run_binary(spin_binary, f"log_path={tmp_path}/rsan.log")
    assert proc.returncode == 66
    assert "WARNING" not in proc.stderr
    logs = list(tmp_path.glob("rsan.log.*"))
    assert len(logs) == 1 and logs[0].suffix.lstrip(".").isdigit()
    text = logs[0].read_text()
    assert "WARNING: pyrsan: robustness violation (read)" in text and f"spin.c:{SPIN_LINE}" in text


# --- suppressions -------------------------------------------------------------------------


def run_with_suppressions(binary: Path, tmp_path: Path, text: str, extra: str = ""):
    supp = tmp_path / "supp.txt"
    supp.write_text(text)
    json_path = tmp_path / "out.jsonl"
    proc = run_binary(binary, f"suppressions={supp}:json_path={json_path}{extra}")
    lines = [json.loads(ln) for ln in json_path.read_text().splitlines()] if json_path.exists() else []
    return proc, lines


@pytest.mark.parametrize("pattern", [
    "second",                    # function, anywhere
    "^second$",                  # function, anchored
    "sec*d",                     # wildcard
    "lib/spin.c",                # file
    f"spin.c:{SPIN_LINE}$",      # file:line of the access
    "first",                     # function of the write SC forces it to see
])
def test_matching_suppression_silences_and_counts_the_report(spin_binary, tmp_path, pattern):
    proc, lines = run_with_suppressions(spin_binary, tmp_path, f"# reviewed\n\nrobustness:{pattern}\n",
                                        ":verbosity=1")
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr
    assert "1 report(s) suppressed" in proc.stderr and f"1 robustness:{pattern}" in proc.stderr
    assert [ln["kind"] for ln in lines] == ["suppressed"]
    assert lines[0]["suppression"] == f"robustness:{pattern}" and lines[0]["type"] == "read"


@pytest.mark.parametrize("text", ["robustness:^secon$\n", "race:second\n", "robustness:spin.c:1$\n",
                                  "# robustness:second\n"])
def test_non_matching_suppression_leaves_the_report(spin_binary, tmp_path, text):
    proc, lines = run_with_suppressions(spin_binary, tmp_path, text)
    assert proc.returncode == 66
    assert "WARNING: pyrsan: robustness violation" in proc.stderr
    assert [ln["kind"] for ln in lines] == ["robustness"]


@pytest.mark.parametrize("text, message", [
    ("robustnes:second\n", "line 1: expected 'robustness:PATTERN' or 'race:PATTERN', got 'robustnes:second'"),
    ("# ok\nrobustness:\n", "line 2: expected"),
    ("second\n", "line 1: expected"),
])
def test_malformed_suppressions_file_stops_at_start_up(spin_binary, tmp_path, text, message):
    proc, _ = run_with_suppressions(spin_binary, tmp_path, text)
    assert proc.returncode == EXIT_BAD_OPTIONS
    assert message in one_line(proc.stderr)


def test_missing_suppressions_file_stops_at_start_up(spin_binary, tmp_path):
    proc = run_binary(spin_binary, f"suppressions={tmp_path}/none.txt")
    assert proc.returncode == EXIT_BAD_OPTIONS
    assert "cannot read the suppressions file" in one_line(proc.stderr)


def test_pyrsan_run_passes_suppressions_and_counts_them(run_pyrsan, tmp_path):
    root = write_project(tmp_path / "p")
    (root / "main.c").write_text('#include "spin.h"\nint main(void) { return lib_handoff() * 0; }\n')
    supp = tmp_path / "s.txt"
    supp.write_text("robustness:second\n")
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "--runs", "3", "--suppressions", supp, "--json", out, "-I", root / "lib",
                      root / "main.c", root / "lib/spin.c")
    assert proc.returncode == 0, proc.stderr
    # a run whose only reports were suppressed does not stop the runs early
    assert proc.stderr.strip().endswith("pyrsan: no robustness violation found in 3 runs (1 suppressed)")
    document = json.loads(out.read_text())
    assert document["verdict"] == "clean" and document["suppressed"] == 1 and document["reports"] == []
    assert document["runs"] == 3
    supp.write_text("robustnes:second\n")
    proc = run_pyrsan("run", "--suppressions", supp, "-I", root / "lib", root / "main.c", root / "lib/spin.c")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "line 1: expected" in proc.stderr
