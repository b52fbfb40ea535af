"""The paper's examples and the worked verdicts of algorithm.md §7, driven through the real
__rsan_* ABI. "Robust" verdicts run every interleaving and expect no report; "violation"
verdicts show an interleaving that reports it (and where)."""
from harness import Program, line_of, reports_over_all, run


def sb(st="rlx", ld="rlx", fence=False):
    t1 = [("st", "x", 1, st)] + ([("fence", "sc")] if fence else []) + [("ld", "y", ld)]
    t2 = [("st", "y", 1, st)] + ([("fence", "sc")] if fence else []) + [("ld", "x", ld)]
    return Program(t1, t2)


PAPER_RUN = (0, 0, 1, 1)  # Ex. 2.1/3.2: T1 runs x:=1; a:=y, then T2 y:=1; b:=x


def test_sb_paper_run_reports_the_load_of_x_against_the_initial_value(rt):
    res = run(rt, sb(), PAPER_RUN)
    assert len(res.reports) == 1
    r = res.reports[0]
    assert r["kind"] == "robustness" and r["type"] == "read"
    assert r["access"]["thread"] == 2
    assert r["access"]["operation"] == "load"
    assert r["access"]["line"] == line_of(2, 1) and r["access"]["function"] == "t2"
    assert r["location"]["name"] == "x"
    assert r["timestamps"] == {"hb": 0, "sc": 1}
    assert r["previous"]["initial"] is True
    assert r["previous"]["description"] == "the initial value of global 'x' (value 0)"
    # the write SC forces it to see: T1's x := 1
    assert r["forced"]["thread"] == 1 and r["forced"]["line"] == line_of(1, 0)
    assert r["forced"]["value"] == 1
    assert "sc_accesses=fenced" in r["model"]


def test_sb_all_interleavings_never_report_more_than_the_true_violations(rt):
    # every report must be at a load (SB's only non-SC behaviour is both loads reading 0)
    n, bad = reports_over_all(rt, sb(), "")
    assert n == 6
    assert bad, "SB rlx must be reported in some interleaving"
    for _, reps in bad:
        for r in reps:
            assert r["type"] == "read" and r["access"]["operation"] == "load"


def test_sb_relacq_reports_the_load_and_the_stale_store(rt):
    res = run(rt, sb("rel", "acq"), PAPER_RUN)
    assert [r["type"] for r in res.reports] == ["read"]
    assert res.reports[0]["access"]["order"] == "acquire"


def test_ex31_variant_detected_when_t1_runs_to_completion_first(rt):
    prog = Program(
        [("st", "x", 1, "rlx"), ("ld", "y", "rlx"), ("st", "x", 2, "rlx")],
        [("st", "y", 1, "rlx"), ("ld", "x", "rlx"), ("st", "y", 2, "rlx")],
    )
    res = run(rt, prog, prog.sequential())
    reads = res.of_type("read")
    assert len(reads) == 1
    r = reads[0]
    assert r["access"]["thread"] == 2 and r["access"]["line"] == line_of(2, 1)
    assert r["timestamps"] == {"hb": 0, "sc": 1}
    assert res.values[(2, 1)] == 2  # T2 actually read x = 2 in this run: a prediction


def test_sb_with_sc_fences_is_robust_in_every_interleaving(rt):
    n, bad = reports_over_all(rt, sb(fence=True))
    assert n == 20 and bad == []


def mp(w1="rlx", w2="rlx", r1="rlx", r2="rlx", fences=False):
    t1 = [("st", "x", 1, w1)] + ([("fence", "rel")] if fences else []) + [("st", "y", 1, w2)]
    t2 = [("ld", "y", r1)] + ([("fence", "acq")] if fences else []) + [("ld", "x", r2)]
    return Program(t1, t2)


def test_mp_relacq_is_robust_in_every_interleaving(rt):
    n, bad = reports_over_all(rt, mp(w2="rel", r1="acq"))
    assert n == 6 and bad == []


def test_mp_rlx_reports_the_load_of_x(rt):
    prog = mp()
    res = run(rt, prog, prog.sequential())
    assert len(res.reports) == 1
    r = res.reports[0]
    assert r["type"] == "read" and r["location"]["name"] == "x"
    assert r["access"]["line"] == line_of(2, 1)
    assert "between litmus.c:%d (load from y) and litmus.c:%d (load from x)" % (
        line_of(2, 0), line_of(2, 1)) in r["suggestion"]
    # the writer's side of the cycle needs a fence too, right after the store to x
    assert "right after litmus.c:%d (the store to x" % line_of(1, 0) in r["suggestion"]


def test_mp_rlx_with_release_and_acquire_fences_is_robust(rt):
    n, bad = reports_over_all(rt, mp(fences=True))
    assert n == 20 and bad == []


def test_2p2w_with_reads_reports_a_write_violation(rt):
    prog = Program(
        [("st", "x", 1, "rlx"), ("st", "y", 2, "rlx"), ("ld", "y", "rlx")],
        [("st", "y", 1, "rlx"), ("st", "x", 2, "rlx"), ("ld", "x", "rlx")],
    )
    res = run(rt, prog, prog.sequential())
    writes = res.of_type("write")
    assert writes, res.reports
    w = writes[0]
    assert w["access"]["operation"] == "store" and w["access"]["line"] == line_of(2, 1)
    assert w["location"]["name"] == "x"
    assert w["timestamps"] == {"hb": 0, "sc": 1}


def test_three_threads_with_sc_fences_report_the_load_of_x(rt):
    # x=1; z=1 || b=z; F_sc || F_sc; c=x  (all rlx): missed by an hb-only SC fence
    prog = Program(
        [("st", "x", 1, "rlx"), ("st", "z", 1, "rlx")],
        [("ld", "z", "rlx"), ("fence", "sc")],
        [("fence", "sc"), ("ld", "x", "rlx")],
    )
    res = run(rt, prog, (0, 0, 1, 1, 2, 2))
    assert len(res.reports) == 1
    r = res.reports[0]
    assert r["access"]["thread"] == 3 and r["location"]["name"] == "x"
    assert r["timestamps"] == {"hb": 0, "sc": 1}


def test_sb_all_seq_cst_is_robust_when_fenced_and_reported_under_ra(rt):
    prog = sb("sc", "sc")
    n, bad = reports_over_all(rt, prog, "sc_accesses=fenced")
    assert n == 6 and bad == []
    res = run(rt, prog, PAPER_RUN, "sc_accesses=ra")
    assert len(res.reports) == 1
    assert res.reports[0]["model"] == "RC20 (sc_accesses=ra)"
    assert res.reports[0]["access"]["order"] == "seq_cst"


def test_report_robustness_off_reports_nothing(rt):
    res = run(rt, sb(), PAPER_RUN, "report_robustness=0")
    assert res.reports == []
