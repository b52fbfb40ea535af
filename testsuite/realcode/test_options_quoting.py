"""PYRSAN_OPTIONS quoting (issue 14): every path valid for the OS works — spaces, ':' and '='
in TMPDIR, --replay, --suppressions, --schedule-dir and json_path. The rule is written once
for Python (pyrsan/options.py) and once in C (runtime/src/flags.c); these tests hold them
to the same strings."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pyrsan.options import OptionSyntaxError, format_options, parse_options, quote_value

PROGRAMS = Path(__file__).parent / "programs"
ODD = "d ir:with=odd \"chars\" \\ x"


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40))
def test_quote_value_round_trips(value):
    assert parse_options(format_options([("json_path", value)])) == [("json_path", value)]


@pytest.mark.parametrize("text, items", [
    ("a=1:b=2 c=3", [("a", "1"), ("b", "2"), ("c", "3")]),
    ('json_path="/t/a b:c=d/r.%p.jsonl":x=1', [("json_path", "/t/a b:c=d/r.%p.jsonl"), ("x", "1")]),
    ('p="q\\"r\\\\s"', [("p", 'q"r\\s')]),
    ("p=a=b", [("p", "a=b")]),
    ("flag", [("flag", None)]),
])
def test_parse_options(text, items):
    assert parse_options(text) == items


@pytest.mark.parametrize("text", ['a="open', 'a="x"y', 'a="\\"'])
def test_parse_options_rejects_malformed_quotes(text):
    with pytest.raises(OptionSyntaxError):
        parse_options(text)


def test_quote_value_leaves_plain_values_bare():
    assert quote_value("/tmp/x.jsonl") == "/tmp/x.jsonl"
    assert quote_value("a b") == '"a b"'


@pytest.fixture(scope="module")
def sb_exe(build_program):
    return build_program("asm_sb_mfence.c", "-DNO_BARRIER")


def _env(options: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYRSAN_OPTIONS"}
    env["PYRSAN_OPTIONS"] = options
    return env


def test_runtime_reads_a_quoted_json_path(sb_exe, tmp_path):
    odd = tmp_path / ODD
    odd.mkdir()
    opts = format_options([("json_path", str(odd / "r.%p.jsonl")), ("print_reports", "0"),
                           ("sched", "random"), ("seed", "1")])
    for seed in range(1, 30):
        opts = format_options([("json_path", str(odd / "r.%p.jsonl")), ("print_reports", "0"),
                               ("sched", "random"), ("seed", str(seed))])
        proc = subprocess.run([str(sb_exe)], env=_env(opts), capture_output=True, text=True, timeout=60)
        if proc.returncode == 66:
            break
    assert proc.returncode == 66, proc.stderr
    files = list(odd.glob("r.*.jsonl"))
    assert len(files) == 1 and json.loads(files[0].read_text().splitlines()[0])["kind"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.sampled_from(list('ab=:" \\\tx_9pjson')), max_size=30))
def test_fuzzed_option_strings_never_crash_the_runtime(sb_exe, text):
    """Any string: the runtime runs (exit 0/66) or refuses it with one line and exit 86, and
    accepts exactly what the driver's parser accepts as syntax."""
    proc = subprocess.run([str(sb_exe)], env=_env(text), capture_output=True, text=True, timeout=60)
    assert proc.returncode in (0, 66, 86), (text, proc.returncode, proc.stderr)
    if proc.returncode == 86:
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("pyrsan: ")
    try:
        parse_options(text)
    except OptionSyntaxError:
        assert proc.returncode == 86


def test_pyrsan_run_with_odd_paths_everywhere(tmp_path, run_pyrsan):
    """TMPDIR, --suppressions, --schedule-dir and then --replay, all under a directory whose
    name has spaces, ':' and '='."""
    odd = tmp_path / "a b:c=d"
    tmpdir = odd / "tmp"
    tmpdir.mkdir(parents=True)
    supp = odd / "my supp:1=2.txt"
    supp.write_text("# nothing suppressed\nrace:no_such_function\n")
    sched_dir = odd / "sched dir"
    env = {"TMPDIR": str(tmpdir)}
    proc = run_pyrsan("run", "--sched", "random", "--seed", "1", "--runs", "30", "--suppressions", supp,
                      "--schedule-dir", sched_dir, "-DNO_BARRIER", PROGRAMS / "asm_sb_mfence.c",
                      cwd=tmp_path, env=env)
    assert proc.returncode == 66, proc.stderr[-3000:]
    saved = sorted(sched_dir.glob("*.sched"))
    assert saved, proc.stderr[-2000:]
    replay = run_pyrsan("run", "--replay", saved[0], "-DNO_BARRIER", PROGRAMS / "asm_sb_mfence.c",
                        cwd=tmp_path, env=env)
    assert replay.returncode == 66, replay.stderr[-3000:]
