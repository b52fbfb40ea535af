"""A robustness check that fails again with the same dedup key is dropped early, from the
thread's repeat cache (report_robustness.c, docs/design/clocks.md §12): the reports, their
counts and their keys must be those of the dedup table alone. A repeat is counted once; a
stale write from another source, or the initial value of another object, is a new report."""
from __future__ import annotations

from harness import line_of
from test_report_sources import _stale_read_of_x as _stale_read


def _threads(rt, n):
    rs = rt.rsan
    main = rs.test_new_thread(rt.ffi.NULL)
    rs.test_set_current(main)
    return [rs.test_new_thread(main) for _ in range(n)]


def _robustness(rt):
    return [r for r in rt.reports() if r["kind"] == "robustness"]


def test_a_repeated_report_is_counted_once_by_the_same_thread(rt):
    """The same reader thread, the same read site, the same stale write site, ten objects: one
    key, one report, one count (the first fills the cache; the nine others are repeats)."""
    w, r = _threads(rt, 2)
    read_site = rt.site("ld", line_of(2, 1), "reader")
    wsite = rt.site("st", line_of(1, 0), "writer")
    for i in range(10):
        _stale_read(rt, r, w, rt.var(f"x{i}"), rt.var(f"y{i}"), read_site, wsite)
    reports = [x for x in _robustness(rt) if x["access"]["line"] == line_of(2, 1)]
    assert len(reports) == 1, [x["key"] for x in reports]
    assert reports[0]["previous"]["line"] == line_of(1, 0)
    assert rt.rsan.test_report_count() == len(_robustness(rt))


def test_another_stale_source_after_repeats_is_a_new_report(rt):
    """After repeats of (read site, stale write at wsite), the same thread and read site with
    the stale write at another site, then with the initial value of two other globals: three
    new reports, each key new; repeating each of them adds nothing."""
    w, r = _threads(rt, 2)
    read_site = rt.site("ld", line_of(2, 1), "reader")
    sites = [rt.site("st", line_of(1, 0), "writer"), rt.site("st", line_of(1, 1), "writer")]
    n = 0
    for rep in range(3):
        for k, wsite in enumerate(sites):
            _stale_read(rt, r, w, rt.var(f"x{n}"), rt.var(f"y{n}"), read_site, wsite)
            n += 1
    ga, gb = rt.var("ga"), rt.var("gb")
    _stale_read(rt, r, w, ga, rt.var("ya"), read_site, sites[0], known_first=False)
    _stale_read(rt, r, w, gb, rt.var("yb"), read_site, sites[0], known_first=False)
    # the same objects again, from fresh readers (the reader above now knows ga and gb)
    for g in (ga, gb):
        (r2,) = _threads(rt, 1)
        _stale_read(rt, r2, w, g, rt.var(f"z{n}"), read_site, sites[0], known_first=False)
        n += 1
    reports = [x for x in _robustness(rt) if x["access"]["line"] == line_of(2, 1)]
    keys = [x["key"] for x in reports]
    assert len(keys) == len(set(keys)) == 4, keys
    prevs = sorted(str(x["previous"].get("line", x["previous"]["description"])) for x in reports)
    assert prevs[:2] == [str(line_of(1, 0)), str(line_of(1, 1))], prevs
    initial = [x["previous"]["description"] for x in reports if x["previous"]["initial"]]
    assert sorted(initial) == ["the initial value of global 'ga' (value 0)",
                               "the initial value of global 'gb' (value 0)"]
    assert rt.rsan.test_report_count() == len(_robustness(rt))


def test_repeats_after_a_reset_are_reported_again(rt):
    """A reset empties the dedup table: the same thread pattern reports again (the repeat
    cache's epoch changed with the table)."""
    for _ in range(2):
        w, r = _threads(rt, 2)
        read_site = rt.site("ld", line_of(2, 1), "reader")
        wsite = rt.site("st", line_of(1, 0), "writer")
        for i in range(3):
            _stale_read(rt, r, w, rt.var(f"x{i}"), rt.var(f"y{i}"), read_site, wsite)
        assert len([x for x in _robustness(rt) if x["access"]["line"] == line_of(2, 1)]) == 1
        rt.reset(reuse_module=True)
