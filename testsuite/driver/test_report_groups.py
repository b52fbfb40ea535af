"""The driver's side of issue 19: reports of one access and type merge into one listing every
stale write; benign consequences are counted, shown only when asked (pyrsan report --all)."""
from __future__ import annotations

import json

from pyrsan.reports import merge_logs
from pyrsan.render import merged_json_document, merged_summary_line, render_merged_text
from pyrsan.sarif import sarif_document


def _line(key, group, consequence="value", prev="a store at a.c:3", site="0x1", line=10, pid=1):
    text = ("==================\nWARNING: pyrsan: robustness violation (read) (pid=1)\n"
            f"  Consequence: {consequence}\nSUMMARY: pyrsan: robustness violation a.c:{line} in f\n"
            "==================\n")
    return json.dumps({
        "kind": "robustness", "type": "read", "consequence": consequence, "pid": pid,
        "access": {"site": site, "thread": 1, "operation": "load", "file": "/src/a.c", "line": line,
                   "function": "f"},
        "previous": {"description": prev, "file": "/src/a.c", "line": 3, "site": "0x9" + key[-1]},
        "stale_writes": [{"site": "0x9" + key[-1], "description": prev, "timestamp": 1}],
        "key": key, "group": group, "suggestion": "s", "text": text})


def test_one_access_with_several_stale_writes_is_one_report(tmp_path):
    log = tmp_path / "r.jsonl"
    log.write_text("\n".join([
        _line("0xa/0x1/read", "0xa/read", prev="a store at a.c:3"),
        _line("0xa/0x2/read", "0xa/read", prev="a store at a.c:5", pid=2),
        _line("0xb/0x1/read", "0xb/read", line=20),
    ]) + "\n")
    merged = merge_logs([log])
    assert len(merged.reports) == 2
    first = merged.reports[0]
    fields = first.public_fields()
    assert fields["merged_keys"] == ["0xa/0x1/read", "0xa/0x2/read"]
    assert [w["description"] for w in fields["stale_writes"]] == ["a store at a.c:3", "a store at a.c:5"]
    assert first.runs_seen == 2
    text = render_merged_text(merged)
    assert "Also reported with other stale writes (merged): a store at a.c:5" in text


def test_benign_reports_are_counted_and_shown_on_request(tmp_path):
    log = tmp_path / "r.jsonl"
    log.write_text("\n".join([
        _line("0xa/0x1/read", "0xa/read"),
        _line("0xc/0x1/read", "0xc/read", consequence="failed-cas", line=30),
    ]) + "\n")
    merged = merge_logs([log])
    assert [r.report.key for r in merged.reports] == ["0xa/0x1/read"] and merged.benign == 1
    assert "1 report with a benign consequence not shown" in merged_summary_line(merged)
    assert merged_json_document(merged)["benign"] == 1
    everything = merge_logs([log], include_benign=True)
    assert len(everything.reports) == 2 and everything.benign == 0
    results = sarif_document(everything.reports)["runs"][0]["results"]
    assert [r["level"] for r in results] == ["warning", "note"]
    assert results[1]["properties"]["consequence"] == "failed-cas"
