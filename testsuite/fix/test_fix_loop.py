"""fix.fix_program's decisions with a stand-in checker (no build, no run): which repairs it
adds round by round, which it drops when minimising, when it switches to sc_accesses=ra, and
when it gives up."""

from __future__ import annotations

import pyrsan.fix as fix
from pyrsan.checker import CheckMethod, CheckOutcome, Program, Repair, SiteInfo, model_for
from pyrsan.passes import Frame
from pyrsan.reports import Report

SITES = tuple(SiteInfo(id=0x10 + i, module="sb.c", index=i, kind=kind, order=order, order_fail="",
                       frames=(Frame("sb.c", 5 + i, 3, "t"),))
              for i, (kind, order) in enumerate([("store", "release"), ("load", "acquire"),
                                                 ("store", "release"), ("load", "acquire")]))


def _report(with_earlier_access: bool = True) -> Report:
    ids = {s.index: "0x%016x" % s.id for s in SITES}
    fields = {"kind": "robustness", "type": "read", "key": "k",
              "access": {"site": ids[3], "thread": 2}, "previous": {"initial": True},
              "forced": {"site": ids[0], "thread": 1}}
    fields["repair"] = ({"kind": "fence", "after": {"site": ids[2]}, "before": {"site": ids[3]}}
                        if with_earlier_access else {"kind": "order", "accesses": [{"site": ids[3]}]})
    return Report.from_json(fields)


def _install(monkeypatch, robust_when, report=_report):
    """check_program answers: robust iff robust_when(repairs, model)."""
    calls = []

    def fake_check(program, repairs, method, work_dir, sc_accesses=None):
        model = sc_accesses or model_for(repairs)
        calls.append((tuple(repairs), model))
        reports = () if robust_when(set(repairs), model) else (report(),)
        return CheckOutcome(reports, 1, model, method, SITES)

    monkeypatch.setattr(fix, "check_program", fake_check)
    return calls


def _fence(index, position="after"):
    return Repair("fence", "sb.c", index, position)


def _run(tmp_path, max_rounds=10):
    options = fix.FixOptions(method=CheckMethod(runs=1), max_rounds=max_rounds, root=str(tmp_path),
                             verify_patch=False)
    return fix.fix_program(Program(("sb.c",)), options, str(tmp_path))


def test_sb_shape_gets_a_fence_in_each_thread_and_nothing_more(monkeypatch, tmp_path):
    _install(monkeypatch, lambda repairs, model: {_fence(2), _fence(0)} <= repairs)
    result = _run(tmp_path)
    assert result.status == "fixed"
    assert [r.added for r in result.rounds] == [(_fence(2),), (_fence(0),)]
    assert set(result.repairs) == {_fence(0), _fence(2)}
    assert all(removal.needed for removal in result.removals)
    assert (result.cost.fences, result.cost.orders, result.cost.all_seq_cst) == (2, 0, 4)


def test_repairs_that_turn_out_unneeded_are_dropped(monkeypatch, tmp_path):
    # only the fence right before the access (3rd candidate) matters
    _install(monkeypatch, lambda repairs, model: _fence(3, "before") in repairs)
    result = _run(tmp_path)
    assert result.status == "fixed" and result.repairs == (_fence(3, "before"),)
    assert sorted((r.repair.index, r.needed) for r in result.removals) == [(0, False), (2, False), (3, True)]
    assert result.final.sc_accesses == "fenced"


def test_a_proved_repair_is_not_dropped_on_a_sample_of_schedules(monkeypatch, tmp_path):
    """The two fences the rounds add make a complete exploration clean. While minimising,
    each exploration without one of them hits its bound with nothing found: a sample, no
    proof, so both fences stay."""
    proved = []

    def fake_check(program, repairs, method, work_dir, sc_accesses=None):
        model = sc_accesses or model_for(repairs)
        if {r.index for r in repairs} == {0, 2}:
            proved.append(True)
            return CheckOutcome((), 1, model, method, SITES, complete=True)
        if proved:  # minimising: the bound is hit with nothing found
            return CheckOutcome((), 500, model, method, SITES, complete=False)
        return CheckOutcome((_report(),), 1, model, method, SITES)

    monkeypatch.setattr(fix, "check_program", fake_check)
    result = _run(tmp_path)
    assert result.status == "fixed" and {r.index for r in result.repairs} == {0, 2}
    assert result.final.complete
    assert len(result.removals) == 2
    assert all(r.needed and r.outcome.clean for r in result.removals)
    text = fix.render_fix_text(result, None, [])
    assert text.count("no violation in a sample of schedules, but no proof") == 2


def test_a_fix_decided_on_a_sample_is_confirmed_wider_and_a_violation_then_goes_back_to_the_rounds(
        monkeypatch, tmp_path):
    """With the first fence alone the exploration hits its bound with nothing found; only an
    exploration CONFIRM_FACTOR times wider finds the violation that the second fence repairs."""
    calls = []

    def fake_check(program, repairs, method, work_dir, sc_accesses=None):
        model = sc_accesses or model_for(repairs)
        calls.append(method.max_schedules)
        indexes = {r.index for r in repairs}
        if indexes == {0, 2}:
            return CheckOutcome((), 40, model, method, SITES, complete=True, explored=40)
        if indexes == {2} and method.max_schedules == 500:   # a sample: nothing found
            return CheckOutcome((), 560, model, method, SITES, explored=500)
        return CheckOutcome((_report(),), 1, model, method, SITES, explored=1)

    monkeypatch.setattr(fix, "check_program", fake_check)
    options = fix.FixOptions(method=CheckMethod(max_schedules=500), root=str(tmp_path), verify_patch=False)
    result = fix.fix_program(Program(("sb.c",)), options, str(tmp_path))
    assert result.status == "fixed" and {r.index for r in result.repairs} == {0, 2}
    assert result.final.complete
    assert [c.method.max_schedules for c in result.confirmations] == [500 * fix.CONFIRM_FACTOR]
    assert result.confirmations[0].violations
    assert 500 * fix.CONFIRM_FACTOR in calls
    assert "back to the rounds" in fix.render_fix_text(result, None, [])
    document = fix.fix_json_document(result, None, [])
    assert [c["max_schedules"] for c in document["confirmations"]] == [5000]


def test_a_failed_confirmation_brings_back_what_samples_removed_and_widens_every_later_check(
        monkeypatch, tmp_path):
    """Fences 0 and 2 are both needed, but once the rounds are over a 500-schedule sample
    without fence 0 finds nothing: minimisation drops it. The wider confirmation finds the
    violation; fence 0 comes back, and every later check is as wide as the confirmation."""
    seen = set()

    def fake_check(program, repairs, method, work_dir, sc_accesses=None):
        model = sc_accesses or model_for(repairs)
        indexes = frozenset(r.index for r in repairs)
        first = indexes not in seen
        seen.add(indexes)
        if {0, 2} <= indexes or (indexes == {2} and method.max_schedules == 500 and not first):
            return CheckOutcome((), 560, model, method, SITES, explored=500)   # a clean sample
        return CheckOutcome((_report(),), 1, model, method, SITES, explored=1)

    monkeypatch.setattr(fix, "check_program", fake_check)
    options = fix.FixOptions(method=CheckMethod(max_schedules=500), root=str(tmp_path), verify_patch=False)
    result = fix.fix_program(Program(("sb.c",)), options, str(tmp_path))
    assert result.status == "fixed" and {0, 2} <= {r.index for r in result.repairs}
    assert [bool(c.violations) for c in result.confirmations] == [True]
    assert all(r.outcome.method.max_schedules == 5000 for r in result.rounds[2:])
    assert result.final.method.max_schedules == 5000
    # fence 0 came back with the confirmation, not as a round's candidate
    assert len(result.rounds) == 3 and all(r.index != 0 for r in result.rounds[2].added)
    document = fix.fix_json_document(result, None, [])
    assert all(r["site"]["index"] != 0 for r in document["removed"])


def test_order_repairs_are_checked_with_sc_accesses_ra(monkeypatch, tmp_path):
    order = Repair("order", "sb.c", 3)
    calls = _install(monkeypatch, lambda repairs, model: order in repairs and model == "ra",
                     report=lambda: _report(with_earlier_access=False))
    result = _run(tmp_path)
    assert result.status == "fixed" and result.repairs == (order,)
    assert result.final.sc_accesses == "ra"
    assert all(model == "ra" for repairs, model in calls if order in repairs)
    assert (result.cost.fences, result.cost.orders) == (0, 1)


def test_giving_up_after_max_rounds_keeps_the_remaining_violations(monkeypatch, tmp_path):
    _install(monkeypatch, lambda repairs, model: False)
    result = _run(tmp_path, max_rounds=2)
    assert result.status == "not_fixed" and "2 rounds" in result.reason
    assert result.final.violations and result.repairs == ()


def test_running_out_of_candidates_is_not_fixed(monkeypatch, tmp_path):
    _install(monkeypatch, lambda repairs, model: False)
    result = _run(tmp_path, max_rounds=50)
    assert result.status == "not_fixed" and result.reason.startswith("no candidate repair is left")


def test_a_cycle_through_a_thread_no_report_names_gets_a_last_round_of_fences_everywhere(monkeypatch, tmp_path):
    """Only a fence after site 1 (in no candidate of the report: it names sites 0, 2, 3)
    makes the program robust: the last round fences every access, and minimisation keeps
    that one fence alone."""
    _install(monkeypatch, lambda repairs, model: _fence(1) in repairs)
    result = _run(tmp_path)
    assert result.status == "fixed"
    assert result.rounds[-1].added == tuple(_fence(i) for i in range(4) if _fence(i) not in
                                            {r for rnd in result.rounds[:-1] for r in rnd.added})
    assert _fence(1) in result.rounds[-1].added
    assert result.repairs == (_fence(1),)


def test_a_clean_program_is_checked_once(monkeypatch, tmp_path):
    calls = _install(monkeypatch, lambda repairs, model: True)
    result = _run(tmp_path)
    assert result.status == "robust" and len(calls) == 1 and result.plan is None


def _session(**run_fields):
    from pyrsan.reports import RunResult
    from pyrsan.runner import SessionResult
    fields = dict(index=1, returncode=0, signal=None, timed_out=False, reports=())
    fields.update(run_fields)
    return SessionResult(runs=(RunResult(**fields),), reports=())


def test_a_run_that_deadlocks_or_reaches_max_steps_is_a_failed_check_not_a_clean_one():
    from pyrsan.checker import _failure
    deadlock = Report.from_json({"kind": "deadlock", "key": "deadlock", "text": "deadlock\n"})
    method = CheckMethod()
    assert _failure(_session(), method) is None
    assert "deadlocked in run 1" in _failure(_session(reports=(deadlock,)), method)
    assert "max_steps" in _failure(_session(reached_bound=True), method)
    assert "crashed with SIGSEGV" in _failure(_session(signal="SIGSEGV"), method)
    assert "timed out" in _failure(_session(timed_out=True, returncode=None), method)
    outcome = CheckOutcome((), 1, "fenced", method, SITES, failure=_failure(_session(reports=(deadlock,)), method))
    assert not outcome.clean
