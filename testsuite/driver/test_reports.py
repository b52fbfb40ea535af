"""Report model, deduplication, verdicts, exit codes and renderers, on synthetic JSON lines
(no compiler, no runtime needed)."""

from __future__ import annotations

import json

import pytest

from pyrsan.render import json_document, render_text, summary_line
from pyrsan.reports import Report, RunResult, deduplicate, read_report_dir, read_report_file
from pyrsan.runner import SessionResult


def report_obj(access_site="0xa00000001", previous_site="0xa00000002", rtype="read", **extra):
    obj = {
        "kind": "robustness", "type": rtype, "pid": 4242,
        "model": "RC20 (sc_accesses=fenced)",
        "location": {"address": "0x1000", "name": "y"},
        "access": {"site": access_site, "thread": 1, "operation": "load", "order": "acquire",
                   "size": 4, "file": "/abs/sb.c", "line": 14, "column": 9, "function": "t1",
                   "stack": [{"file": "/abs/sb.c", "line": 14, "column": 9, "function": "t1"}]},
        "previous": {"site": previous_site, "thread": 2, "operation": "store", "order": "release",
                     "size": 4, "file": "/abs/sb.c", "line": 20, "column": 5, "function": "t2",
                     "stack": [], "value": 1, "initial": False, "description": "x"},
        "timestamps": {"hb": 0, "sc": 1},
        "suggestion": "insert a fence",
        "key": f"{access_site}/{previous_site}/{rtype}",
        "text": f"==================\nWARNING: pyrsan: robustness violation ({rtype}) {access_site}\n"
                "==================\n",
    }
    obj.update(extra)
    return obj


def run(index, reports=(), signal=None, timed_out=False):
    return RunResult(index=index, returncode=None if timed_out else 0, signal=signal,
                     timed_out=timed_out, reports=tuple(Report.from_json(r) for r in reports))


def test_truncated_last_line_is_skipped_and_the_complete_lines_kept(tmp_path):
    path = tmp_path / "reports.123.jsonl"
    good = json.dumps(report_obj())
    path.write_text(good + "\n" + good[: len(good) // 2])
    reports = read_report_file(path)
    assert [r.key for r in reports] == ["0xa00000001/0xa00000002/read"]


def test_report_dir_reads_every_process_file(tmp_path):
    (tmp_path / "reports.1.jsonl").write_text(json.dumps(report_obj("0x1")) + "\n")
    (tmp_path / "reports.2.jsonl").write_text(json.dumps(report_obj("0x2")) + "\n")
    assert sorted(r.key.split("/")[0] for r in read_report_dir(tmp_path)) == ["0x1", "0x2"]


def test_deduplication_by_key_counts_the_runs_each_report_was_seen_in():
    a, b = report_obj("0x1"), report_obj("0x2")
    runs = [run(1, [a, a]), run(2, [a, b]), run(3, [])]
    distinct = deduplicate(runs)
    assert [(d.report.key.split("/")[0], d.runs_seen) for d in distinct] == [("0x1", 2), ("0x2", 1)]


def test_text_prints_each_distinct_report_once_then_the_summary():
    a = report_obj("0x1")
    runs = (run(1, [a]), run(2, [a]))
    text = render_text(SessionResult(runs, deduplicate(runs)))
    assert text.count("WARNING: pyrsan: robustness violation (read) 0x1") == 1
    assert text.rstrip().splitlines()[-1] == "pyrsan: 1 robustness violation in 2 runs"


def test_summary_of_a_clean_session():
    runs = (run(1), run(2), run(3))
    assert summary_line(SessionResult(runs, ())) == "pyrsan: no robustness violation found in 3 runs"


def test_json_document_drops_runtime_only_fields_and_adds_runs_seen():
    runs = (run(1, [report_obj(extra_field="kept")]),)
    doc = json.loads(json.dumps(json_document(SessionResult(runs, deduplicate(runs)))))
    assert doc["verdict"] == "violations" and doc["runs"] == 1
    (rep,) = doc["reports"]
    assert "text" not in rep and "pid" not in rep
    assert rep["runs_seen"] == 1 and rep["extra_field"] == "kept"
    assert rep["access"]["thread"] == 1 and rep["timestamps"] == {"hb": 0, "sc": 1}
    assert doc["crashes"] == [] and doc["timeouts"] == []


def test_missing_key_is_derived_from_the_two_sites_and_the_type():
    obj = report_obj("0x7", "0x3", "write")
    del obj["key"]
    assert Report.from_json(obj).key == "0x7/0x3/write"
    with pytest.raises(ValueError):
        Report.from_json({"key": "k"})


def test_exit_code_is_66_with_reports_even_after_a_crash():
    runs = (run(1, [report_obj()], signal="SIGSEGV"),)
    result = SessionResult(runs, deduplicate(runs))
    assert (result.exit_code, result.verdict) == (66, "violations")
    assert "pyrsan: the program crashed with SIGSEGV in run 1" in render_text(result)


def test_exit_code_is_3_when_the_program_crashed_or_hung_without_reports():
    crashed = SessionResult((run(1), run(2, signal="SIGABRT")), ())
    assert (crashed.exit_code, crashed.verdict) == (3, "error")
    hung = SessionResult((run(1, timed_out=True),), (), timeout=1.0)
    assert hung.exit_code == 3
    assert "pyrsan: the program timed out after 1 s in run 1" in render_text(hung)
    doc = json_document(hung)
    assert doc["timeouts"] == [{"run": 1, "seconds": 1.0}]


def test_exit_code_is_0_for_a_clean_session():
    result = SessionResult((run(1),), ())
    assert (result.exit_code, result.verdict) == (0, "clean")


def test_lines_that_are_not_reports_are_ignored(tmp_path):
    path = tmp_path / "reports.9.jsonl"
    path.write_text('[1, 2]\n{"no_kind": 1}\nnot json\n' + json.dumps(report_obj()) + "\n")
    assert len(read_report_file(path)) == 1
