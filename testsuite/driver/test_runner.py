"""The run loop with a stand-in program (a shell script that writes report lines where
PYRSAN_OPTIONS tells it to), so counting, crashes and timeouts are tested without the
runtime."""

from __future__ import annotations

import json
import stat
import sys
import textwrap
import time

import pytest

from pyrsan.cli import split_compiler_flags
from pyrsan.errors import UsageError
from pyrsan.runner import RunOptions, parse_options_string, run_program, runtime_options

REPORT = json.dumps({"kind": "robustness", "type": "read", "key": "K1", "text": "T1\n",
                     "access": {"thread": 1}, "location": {"address": "0x1"}}) + "\n"


def script(tmp_path, body: str):
    """A fake instrumented program (Python). In ``body``: ``N`` is the 1-based run number,
    ``report()`` appends REPORT to the json_path of PYRSAN_OPTIONS (``%p`` = pid)."""
    path = tmp_path / "prog.py"
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(f"""\
        import os, signal, subprocess, sys, time
        OPTS = dict(i.partition("=")[::2] for i in os.environ["PYRSAN_OPTIONS"].split(":"))
        def report(text={REPORT!r}):
            with open(OPTS["json_path"].replace("%p", str(os.getpid())), "a") as f:
                f.write(text)
        count = os.path.join(os.path.dirname(os.path.abspath(__file__)), "count")
        N = int(open(count).read()) + 1 if os.path.exists(count) else 1
        open(count, "w").write(str(N))
        """) + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def options(tmp_path, **kw):
    return RunOptions(work_dir=str(tmp_path / "work"), **kw)


def test_clean_program_runs_the_requested_number_of_times(tmp_path):
    prog = script(tmp_path, "sys.exit(0)\n")
    result = run_program(prog, [], options(tmp_path, runs=4))
    assert len(result.runs) == 4 and result.exit_code == 0
    assert (tmp_path / "count").read_text().strip() == "4"


def test_runs_stop_at_the_first_run_with_a_report(tmp_path):
    prog = script(tmp_path, "if N >= 2: report()\n")
    result = run_program(prog, [], options(tmp_path, runs=5))
    assert len(result.runs) == 2 and result.exit_code == 66


def test_keep_going_does_every_run_and_counts_runs_seen(tmp_path):
    prog = script(tmp_path, "if N >= 2: report()\n")
    result = run_program(prog, [], options(tmp_path, runs=5, keep_going=True))
    assert len(result.runs) == 5
    (distinct,) = result.reports
    assert distinct.runs_seen == 4


def test_program_exiting_66_without_reports_is_clean(tmp_path):
    prog = script(tmp_path, "sys.exit(66)\n")
    result = run_program(prog, [], options(tmp_path))
    assert result.exit_code == 0


def test_crash_is_reported_with_the_signal_name(tmp_path):
    prog = script(tmp_path, "os.kill(os.getpid(), signal.SIGSEGV)\n")
    result = run_program(prog, [], options(tmp_path, runs=3))
    assert result.exit_code == 3 and len(result.runs) == 1
    assert result.runs[0].signal == "SIGSEGV"


def test_reports_written_before_a_crash_are_kept(tmp_path):
    prog = script(tmp_path, "report(); report('{\"kind\": \"rob'); os.kill(os.getpid(), signal.SIGABRT)\n")
    result = run_program(prog, [], options(tmp_path))
    assert result.exit_code == 66 and result.runs[0].signal == "SIGABRT"
    assert [d.report.key for d in result.reports] == ["K1"]


def test_timeout_kills_the_whole_process_group(tmp_path):
    marker = tmp_path / "child_alive"
    prog = script(tmp_path, f"subprocess.Popen(['sh', '-c', 'sleep 3; touch {marker}'])\ntime.sleep(30)\n")
    start = time.monotonic()
    result = run_program(prog, [], options(tmp_path, timeout=0.5))
    assert time.monotonic() - start < 10
    assert result.exit_code == 3 and result.runs[0].timed_out
    time.sleep(3.5)
    assert not marker.exists(), "the program's child survived the timeout"


def test_reports_of_child_processes_are_read(tmp_path):
    # the child is a fresh process with its own pid, hence its own reports file
    prog = script(tmp_path, "if sys.argv[1:] == ['child']: report()\n"
                            "else: subprocess.run([sys.executable, __file__, 'child'])\n")
    result = run_program(prog, [], options(tmp_path))
    assert [d.report.key for d in result.reports] == ["K1"]


def test_user_options_are_kept_and_the_drivers_win():
    merged = dict(parse_options_string(runtime_options(
        "halt_on_error=1 json_path=/user print_reports=1", "/drv/reports.%p.jsonl", "ra")))
    assert merged == {"halt_on_error": "1", "json_path": "/drv/reports.%p.jsonl",
                      "print_reports": "0", "sc_accesses": "ra"}


def test_sc_accesses_from_the_user_is_kept_without_the_flag():
    merged = dict(parse_options_string(runtime_options("sc_accesses=ra", "/j", None)))
    assert merged["sc_accesses"] == "ra"


def test_zero_runs_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError):
        run_program("/bin/true", [], options(tmp_path, runs=0))


def test_compiler_flags_are_taken_out_before_click():
    flags, rest, program = split_compiler_flags(
        ["-std=c11", "-I", "inc", "-Iinc2", "-DX=1", "-D", "Y", "-O2", "--runs", "3", "a.c",
         "--", "-DNOT_A_FLAG", "arg"])
    assert flags == ["-std=c11", "-I", "inc", "-Iinc2", "-DX=1", "-D", "Y", "-O2"]
    assert rest == ["--runs", "3", "a.c"]
    assert program == ["-DNOT_A_FLAG", "arg"]


def test_unknown_or_malformed_user_options_are_rejected_before_running():
    from pyrsan.runner import check_user_options

    known = frozenset({"halt_on_error", "json_path"})
    check_user_options("halt_on_error=1 json_path=", known)
    with pytest.raises(UsageError, match="unknown option 'halt_on_eror'"):
        check_user_options("halt_on_eror=1", known)
    with pytest.raises(UsageError, match="needs a value"):
        check_user_options("halt_on_error", known)
    check_user_options("anything=1", None)
