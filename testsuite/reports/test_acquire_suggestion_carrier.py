"""The acquire suggestion of an MP-shaped report (docs/reports.md §5, "acquire"): the thread's
pending-acquire view Ta already holds the write SC requires, and an acquire on the read that
brought it, or an acquire fence before the access, makes the access see it. The runtime keeps
no per-read view, so "make the load ... acquire" may name the thread's latest read of another
location only when that read's site is the only one whose reads without acquire can have brought
the write (the thread's recent ring holds its whole life, every other read there acquires);
otherwise the acquire fence is the suggestion.

carrier/mp_carrier_then_other.c: the flag read brings the write, then an unrelated relaxed read
comes last: an acquire on the unrelated read fixes nothing (the suggestion named it before).
carrier/mp_carrier_last.c: the flag read is the latest: acquiring it is the suggestion."""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent / "carrier"


def robustness_reports(run_pyrsan, path: Path, tmp_path: Path) -> list[dict]:
    out = tmp_path / (path.name + ".json")
    proc = run_pyrsan("run", "--explore", "--keep-going", "--json", out, path, timeout=600)
    assert out.exists(), proc.stderr[-3000:]
    reports = [r for r in json.loads(out.read_text())["reports"] if r["kind"] == "robustness"]
    assert reports, proc.stderr[-3000:]
    return reports


def test_an_unrelated_latest_read_is_not_named_the_acquire_fence_is(run_pyrsan, tmp_path):
    for r in robustness_reports(run_pyrsan, HERE / "mp_carrier_then_other.c", tmp_path):
        assert r["access"]["line"] == 22, r["access"]
        repair = r["repair"]
        assert repair["kind"] == "fence" and repair["order"] == "acquire", repair
        assert repair["before"]["line"] == 22, repair
        assert "insert atomic_thread_fence(memory_order_acquire)" in r["suggestion"], r["suggestion"]
        assert "other at" not in r["suggestion"], r["suggestion"]


def test_the_acquire_fence_suggested_is_a_repair(run_pyrsan, tmp_path):
    src = tmp_path / "fenced.c"
    lines = (HERE / "mp_carrier_then_other.c").read_text().splitlines(keepends=True)
    lines.insert(21, "  atomic_thread_fence(memory_order_acquire);\n")   # before line 22
    src.write_text("".join(lines))
    out = tmp_path / "fenced.json"
    proc = run_pyrsan("run", "--explore", "--json", out, src, timeout=600)
    document = json.loads(out.read_text())
    assert document["verdict"] == "robust", proc.stderr[-3000:]


def test_the_read_that_brought_the_write_is_named_when_it_is_the_latest(run_pyrsan, tmp_path):
    for r in robustness_reports(run_pyrsan, HERE / "mp_carrier_last.c", tmp_path):
        repair = r["repair"]
        assert repair["kind"] == "order" and repair["order"] == "acquire", repair
        assert [a["line"] for a in repair["accesses"]] == [20], repair
        assert r["suggestion"].startswith("make the load from flag at mp_carrier_last.c:20 memory_order_acquire")
