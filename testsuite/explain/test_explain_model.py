"""The execution graph explain.py rebuilds from an explain log, on small hand-written logs:
C11 happens-before (algorithm.md §5: release/acquire, fences, release sequences, spawn/join)
and the hb_SC edges (rf, mo, fr, SC-fence order). No compiler needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyrsan.explain import ExplainError, Graph, explain_report, read_event_log

X, Y = "0x1000", "0x2000"


def _log(tmp_path: Path, events: list[dict], report: str | None = None, reporter: int = 2) -> Path:
    lines = [{"pyrsan_events": 1, "pid": 7}, {"loc": X, "name": "x", "init": 0}, {"loc": Y, "name": "y", "init": 0}]
    for n, e in enumerate(events):
        lines.append({"e": n, **e})
    if report:
        lines.append({"e": len(events), "tid": reporter, "report": report})
    path = tmp_path / "events.7.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def st(tid, addr, value, order="relaxed", site=None):
    return {"tid": tid, "op": "store", "atomic": True, "order": order, "addr": addr, "written": value,
            "site": site or f"0x{tid}{value}"}


def ld(tid, addr, value, order="relaxed", site=None):
    return {"tid": tid, "op": "load", "atomic": True, "order": order, "addr": addr, "read": value,
            "site": site or f"0x{tid}{value}r"}


def rmw(tid, addr, old, new, order="relaxed"):
    return {"tid": tid, "op": "fetch_add", "atomic": True, "order": order, "addr": addr, "read": old,
            "written": new, "site": "0xaa"}


def fence(tid, order):
    return {"tid": tid, "op": "fence", "order": order, "site": "0xf"}


def graph(tmp_path, events):
    log = read_event_log(_log(tmp_path, events))
    return Graph(log, log.events, sc_fenced=True)


@pytest.mark.parametrize("writer,reader,ordered", [
    ([st(1, X, 1), st(1, Y, 1, "release")], [ld(2, Y, 1, "acquire")], True),
    ([st(1, X, 1), st(1, Y, 1, "relaxed")], [ld(2, Y, 1, "acquire")], False),
    ([st(1, X, 1), st(1, Y, 1, "release")], [ld(2, Y, 1, "relaxed")], False),
    ([st(1, X, 1), fence(1, "release"), st(1, Y, 1)], [ld(2, Y, 1), fence(2, "acquire")], True),
    ([st(1, X, 1), fence(1, "release"), st(1, Y, 1)], [ld(2, Y, 1)], False),
    ([st(1, X, 1), fence(1, "seq_cst"), st(1, Y, 1)], [ld(2, Y, 1), fence(2, "seq_cst")], True),
])
def test_happens_before_follows_release_acquire_and_fences(tmp_path, writer, reader, ordered):
    g = graph(tmp_path, writer + reader + [ld(2, X, 1)])
    assert g.hb(0, len(writer) + len(reader)) is ordered


def test_release_sequence_runs_through_rmws_and_breaks_at_a_plain_store(tmp_path):
    through = graph(tmp_path, [st(1, X, 1), st(1, Y, 1, "release"), rmw(3, Y, 1, 2), ld(2, Y, 2, "acquire")])
    assert through.hb(0, 3)
    broken = graph(tmp_path, [st(1, X, 1), st(1, Y, 1, "release"), st(3, Y, 2), ld(2, Y, 2, "acquire")])
    assert not broken.hb(0, 3)


def test_spawn_and_join_order_the_threads(tmp_path):
    g = graph(tmp_path, [st(0, X, 1), {"tid": 0, "op": "spawn", "other": 1}, ld(1, X, 1), st(1, Y, 1),
                         {"tid": 0, "op": "join", "other": 1}, ld(0, Y, 1)])
    assert g.hb(0, 2) and g.hb(3, 5)
    assert ("spawn" in {k for _, k in g.out[1]}) and ("join" in {k for _, k in g.out[3]})


def test_sc_edges_fr_and_mo(tmp_path):
    g = graph(tmp_path, [ld(1, X, 0), st(2, X, 1), st(2, X, 2), fence(1, "seq_cst"), fence(2, "seq_cst")])
    kinds = {(a, b, k) for a, outs in g.out.items() for b, k in outs}
    assert (0, 1, "fr") in kinds and (1, 2, "mo") in kinds and (3, 4, "sc") in kinds
    assert (g.init_ids[X], 0, "rf") in kinds


def _sb_report(tid, ts_sc=1, forced_value=1):
    return {"kind": "robustness", "type": "read", "key": "K", "model": "RC20 (sc_accesses=fenced)",
            "location": {"address": X}, "access": {"site": "0x20r", "thread": tid, "operation": "load"},
            "previous": {"initial": True}, "forced": {"site": "0x11", "thread": 1, "value": forced_value},
            "timestamps": {"hb": 0, "sc": ts_sc}}


SB = [st(1, X, 1), ld(1, Y, 0), st(2, Y, 1), ld(2, X, 1, site="0x20r")]


def test_sb_cycle_from_a_hand_written_log(tmp_path):
    ex = explain_report(_sb_report(2), read_event_log(_log(tmp_path, SB, "K")))
    assert ex["cycle"] == [3, 0, 1, 2, 3] and ex["cycle_kinds"] == ["fr", "po", "fr", "po"]
    assert "T2 may read the initial value (x = 0)" in ex["outcome"] and "already wrote x = 1" in ex["outcome"]


def test_forced_write_found_by_description_when_timestamps_restarted(tmp_path):
    # the report's timestamp 1 names the write of its location record; the log's first write to
    # the address is older (another record, since retired): the description picks the right one
    events = [st(3, X, 9, site="0x39"), *SB]
    log = read_event_log(_log(tmp_path, events, "K"))
    ex = explain_report(_sb_report(2, ts_sc=1), log)
    assert ex["cycle"][1] == 1


def test_no_marker_is_a_clear_error(tmp_path):
    with pytest.raises(ExplainError, match="no marker"):
        explain_report(_sb_report(2), read_event_log(_log(tmp_path, SB)))
