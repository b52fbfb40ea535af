"""Robustness reports name their stale write exactly and merge by source (issue 19 items 3, 4):
reports whose sites have the same frames are one report; a stale write that left the bounded
history is named by the oldest candidate still kept, or by its timestamp, and never shares a
key with the initial value."""
from __future__ import annotations

from harness import line_of


def _threads(rt, n):
    rs = rt.rsan
    main = rs.test_new_thread(rt.ffi.NULL)
    rs.test_set_current(main)
    return [rs.test_new_thread(main) for _ in range(n)]


def _stale_read_of_x(rt, reader, writer, x, y, read_site, write_site, known_first=True):
    """writer: x = 1 || reader: r = x || writer: x = 2; y = 1 || reader: r = y; r = x (all
    relaxed): the last read may still read x = 1 (written at write_site), or, without the
    reader's first read, the initial value."""
    rs = rt.rsan
    rs.test_set_current(writer)
    rt.store(x, 1, "rlx", write_site)
    if known_first:
        rs.test_set_current(reader)
        rt.load(x, "rlx", rt.site("ld", line_of(2, 8), "reader"))
    rs.test_set_current(writer)
    rt.store(x, 2, "rlx", write_site)
    rt.store(y, 1, "rlx", rt.site("st", line_of(1, 9), "t1"))
    rs.test_set_current(reader)
    rt.load(y, "rlx", rt.site("ld", line_of(2, 9), "reader"))
    rt.load(x, "rlx", read_site)


def test_sites_with_the_same_source_give_one_report(rt):
    """Two sites with the same frames (an instruction the compiler duplicated, a helper in
    two translation units) reading the same stale write: one report; a site with other
    frames: its own."""
    x, y, x2, y2, x3, y3 = (rt.var(n) for n in ("x", "y", "x2", "y2", "x3", "y3"))
    w, r1, r2, r3 = _threads(rt, 4)
    wsite = rt.site("st", line_of(1, 0), "writer")
    same = [rt.site("ld", line_of(2, 1), "reader") for _ in range(2)]
    other = rt.site("ld", line_of(2, 2), "reader")
    _stale_read_of_x(rt, r1, w, x, y, same[0], wsite)
    _stale_read_of_x(rt, r2, w, x2, y2, same[1], wsite)
    _stale_read_of_x(rt, r3, w, x3, y3, other, wsite)
    reports = [r for r in rt.reports() if r["kind"] == "robustness"]
    lines = sorted(r["access"]["line"] for r in reports if r["access"]["line"] in (line_of(2, 1), line_of(2, 2)))
    assert lines == [line_of(2, 1), line_of(2, 2)], lines
    reports = [r for r in reports if r["access"]["line"] in (line_of(2, 1), line_of(2, 2))]
    assert len({r["key"] for r in reports}) == 2


def test_a_site_id_means_the_frames_it_has_now(rt):
    """Report keys are computed from a site's frames as registered now: after a reset, the
    same site ids (and the same site records in memory) with other frames give the new
    frames' keys. A cache of keys by site id or record address would give the new site at
    index 0 the old frames' key, which a new site with those frames has too: the two
    reports would merge (test_snapshots' overflow test failed that way after other tests)."""
    x, y = rt.var("x"), rt.var("y")
    w, r = _threads(rt, 2)
    old = rt.site("ld", line_of(2, 1), "reader")  # index 0
    _stale_read_of_x(rt, r, w, x, y, old, rt.site("st", line_of(1, 0), "writer"))
    first = [r["access"]["line"] for r in rt.reports() if r["kind"] == "robustness"]
    assert line_of(2, 1) in first
    rt.reset(reuse_module=True)
    x, y, x2, y2 = (rt.var(n) for n in ("x", "y", "x2", "y2"))
    w, r1, r2 = _threads(rt, 3)
    new = rt.site("ld", line_of(2, 2), "reader")  # index 0 again, other frames
    again = rt.site("ld", line_of(2, 1), "reader")  # the frames index 0 had
    wsite = rt.site("st", line_of(1, 0), "writer")
    _stale_read_of_x(rt, r1, w, x, y, new, wsite)
    _stale_read_of_x(rt, r2, w, x2, y2, again, wsite)
    reports = [r for r in rt.reports() if r["kind"] == "robustness"
               and r["access"]["line"] in (line_of(2, 1), line_of(2, 2))]
    assert sorted(r["access"]["line"] for r in reports) == [line_of(2, 1), line_of(2, 2)]
    assert len({r["key"] for r in reports}) == 2


def test_a_stale_write_out_of_the_history_is_named_by_the_oldest_candidate_kept(rt):
    """reader reads x = 1 (Tc(x) = 1); the writer writes x ten more times, then y; the reader
    reads y and x: the write at Tc(x) left the history, the oldest candidate still kept is
    named (a write the read may really see), flagged as such."""
    x, y = rt.var("x"), rt.var("y")
    w, r = _threads(rt, 2)
    rs = rt.rsan
    rs.test_set_current(w)
    wsite = rt.site("st", line_of(1, 0), "writer")
    rt.store(x, 1, "rlx", wsite)
    rs.test_set_current(r)
    rt.load(x, "rlx", rt.site("ld", line_of(2, 0), "reader"))
    rs.test_set_current(w)
    for v in range(2, 12):
        rt.store(x, v, "rlx", wsite)
    rt.store(y, 1, "rlx", rt.site("st", line_of(1, 1), "writer"))
    rs.test_set_current(r)
    rt.load(y, "rlx", rt.site("ld", line_of(2, 1), "reader"))
    rt.load(x, "rlx", rt.site("ld", line_of(2, 2), "reader"))
    (rep,) = [r for r in rt.reports() if r["kind"] == "robustness"]
    prev = rep["previous"]
    assert prev.get("oldest_retained") is True and prev["line"] == line_of(1, 0)
    assert prev["timestamp"] > rep["timestamps"]["hb"]
    assert rep["stale_writes_complete"] is False
    assert [w["value"] for w in rep["stale_writes"]] == sorted(w["value"] for w in rep["stale_writes"])
    assert "left the history; the oldest candidate still kept" in rep["text"]


def test_a_write_out_of_the_history_with_no_candidate_kept_is_named_by_timestamp(rt):
    """Tc(x) = 1, Tsc(x) = 2, then eight more writes of x by a third thread: the one stale
    candidate (timestamp 1) left the history; the report says so, with a key of its own
    (not the initial value's)."""
    x, y = rt.var("x"), rt.var("y")
    w, r, other = _threads(rt, 3)
    rs = rt.rsan
    rs.test_set_current(w)
    rt.store(x, 1, "rlx", rt.site("st", line_of(1, 0), "writer"))
    rs.test_set_current(r)
    rt.load(x, "rlx", rt.site("ld", line_of(2, 0), "reader"))
    rs.test_set_current(w)
    rt.store(x, 2, "rlx", rt.site("st", line_of(1, 1), "writer"))
    rt.store(y, 1, "rlx", rt.site("st", line_of(1, 2), "writer"))
    rs.test_set_current(other)
    for v in range(3, 12):
        rt.store(x, v, "rlx", rt.site("st", line_of(3, 0), "other"))
    rs.test_set_current(r)
    rt.load(y, "rlx", rt.site("ld", line_of(2, 1), "reader"))
    rt.load(x, "rlx", rt.site("ld", line_of(2, 2), "reader"))
    reports = [r for r in rt.reports() if r["kind"] == "robustness"]
    (rep,) = [r for r in reports if r["access"]["line"] == line_of(2, 2)]
    prev = rep["previous"]
    assert prev["out_of_history"] is True and prev["timestamp"] == 1 and prev["initial"] is False
    assert "beyond the last" in prev["description"]
    initial_key = rep["key"].split("/")[1]
    # the initial value of x has another source key
    x4, y4 = rt.var("x4"), rt.var("y4")
    w2, r2 = _threads(rt, 2)
    _stale_read_of_x(rt, r2, w2, x4, y4, rt.site("ld", line_of(2, 2), "reader"),
                     rt.site("st", line_of(1, 0), "writer"), known_first=False)
    rep2 = [r for r in rt.reports() if r["kind"] == "robustness" and r["previous"].get("initial")]
    assert rep2 and all(r["key"].split("/")[1] != initial_key for r in rep2)


def _sb(rt, same_line: bool):
    """SB (relaxed): t1: x = 1; r = y || t2: y = 1; r = x, t1's two accesses on one line (one
    statement) or on two; t1 runs first, so t2's read of x is the stale one."""
    x, y = rt.var("x"), rt.var("y")
    t1, t2 = _threads(rt, 2)
    rs = rt.rsan
    rs.test_set_current(t1)
    rt.store(x, 1, "rlx", rt.site("st", line_of(1, 0), "t1"))
    rt.load(y, "rlx", rt.site("ld", line_of(1, 1), "t1"))
    rs.test_set_current(t2)
    rt.store(y, 1, "rlx", rt.site("st", line_of(2, 0), "t2", column=5))
    rt.load(x, "rlx", rt.site("ld", line_of(2, 0) if same_line else line_of(2, 1), "t2", column=20))
    (rep,) = [r for r in rt.reports() if r["kind"] == "robustness"]
    return rep


def test_a_fence_is_suggested_between_two_statements(rt):
    rep = _sb(rt, same_line=False)
    assert rep["repair"]["kind"] == "fence" and "between" in rep["suggestion"]
    assert rep["repair"]["cost"] == {"fences": 2, "orders": 0}


def test_no_fence_is_suggested_between_two_points_of_one_statement(rt):
    rep = _sb(rt, same_line=True)
    assert rep["repair"]["kind"] == "order" and "between" not in rep["suggestion"]
    assert "memory_order_seq_cst" in rep["suggestion"]
    # the reason says why no fence: the earlier access is on the same line (it was "the thread
    # has no earlier atomic access to another location", which the report's own thread had)
    assert "same source line" in rep["repair"]["why"] and "same source line" in rep["suggestion"]
    assert "no earlier atomic access" not in rep["suggestion"]
