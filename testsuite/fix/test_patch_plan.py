"""patch.plan_patch on small sources with hand-made site tables (no build): where a fence
or an order goes in the source, and where pyrsan refuses and gives a manual instruction."""

from __future__ import annotations

import subprocess

from pyrsan.checker import Repair, SiteInfo
from pyrsan.passes import Frame
from pyrsan.patch import C_FENCE, CXX_FENCE, plan_patch

C_SOURCE = """\
#include <stdatomic.h>
#define STORE(p, v) atomic_store_explicit(p, v, memory_order_relaxed)
atomic_int x, y;
void f(void) {
  atomic_store_explicit(&x, 1, memory_order_release);
  int r = atomic_load_explicit(&y, memory_order_acquire);
  STORE(&y, r);
  if (atomic_load_explicit(&x, memory_order_relaxed) == atomic_load_explicit(&y, memory_order_relaxed))
    r++;
}
"""


def _site(path, index, line, column, kind="store", order="release", module=None):
    return SiteInfo(id=index, module=module or str(path), index=index, kind=kind, order=order,
                    order_fail="", frames=(Frame(str(path), line, column, "f"),))


def _c_sites(path):
    return (_site(path, 0, 5, 3), _site(path, 1, 6, 11, "load", "acquire"),
            _site(path, 2, 7, 3, "store", "relaxed"), _site(path, 3, 8, 7, "load", "relaxed"),
            _site(path, 4, 8, 57, "load", "relaxed"))


def test_fences_go_on_their_own_line_with_the_statement_indentation(tmp_path):
    path = tmp_path / "a.c"
    path.write_text(C_SOURCE)
    plan = plan_patch((Repair("fence", str(path), 0, "after"), Repair("fence", str(path), 1, "before")),
                      _c_sites(path), str(tmp_path))
    assert not plan.manual
    lines = plan.new_texts[str(path)].split("\n")
    assert lines[4:8] == ["  atomic_store_explicit(&x, 1, memory_order_release);", "  " + C_FENCE,
                          "  " + C_FENCE, "  int r = atomic_load_explicit(&y, memory_order_acquire);"]
    assert plan.diff.startswith("--- a/a.c\n+++ b/a.c\n")
    applied = tmp_path / "copy"
    applied.mkdir()
    (applied / "a.c").write_text(C_SOURCE)
    proc = subprocess.run(["patch", "-p1"], input=plan.diff, cwd=applied, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (applied / "a.c").read_text() == plan.new_texts[str(path)]


def test_order_strengthening_replaces_the_order_token(tmp_path):
    path = tmp_path / "a.c"
    path.write_text(C_SOURCE)
    plan = plan_patch((Repair("order", str(path), 1),), _c_sites(path), str(tmp_path))
    [edit] = plan.edits
    assert edit.text == "  int r = atomic_load_explicit(&y, memory_order_seq_cst);"


def test_macro_expansions_and_lines_with_several_operations_get_manual_instructions(tmp_path):
    path = tmp_path / "a.c"
    path.write_text(C_SOURCE)
    plan = plan_patch((Repair("fence", str(path), 2, "after"), Repair("fence", str(path), 3, "before")),
                      _c_sites(path), str(tmp_path))
    assert not plan.edits and not plan.diff
    reasons = sorted(step.reason for step in plan.manual)
    assert reasons == ["the access is in the expansion of macro STORE", "the line has several atomic operations"]
    assert all(C_FENCE in step.instruction for step in plan.manual)


def test_system_headers_and_files_outside_the_directory_are_not_patched(tmp_path):
    inside = tmp_path / "project"
    inside.mkdir()
    outside = tmp_path / "b.c"
    outside.write_text(C_SOURCE)
    system = SiteInfo(7, str(outside), 7, "load", "acquire", "",
                      (Frame("/usr/include/c++/14/bits/atomic_base.h", 500, 9, "load"),))
    plan = plan_patch((Repair("fence", str(outside), 0, "after"), Repair("fence", str(outside), 7, "before")),
                      _c_sites(outside) + (system,), str(inside))
    assert [step.reason for step in plan.manual] == [
        f"{outside} is outside the current directory", "the access is in a system header"]


def test_stdatomic_include_is_added_and_cxx_gets_std_fences(tmp_path):
    c_path = tmp_path / "c.c"
    c_path.write_text("#include <stdio.h>\nvoid f(_Atomic int *p) {\n  __c11_atomic_store(p, 1, 3);\n}")
    plan = plan_patch((Repair("fence", str(c_path), 0, "after"),),
                      (_site(c_path, 0, 3, 3),), str(tmp_path))
    assert plan.new_texts[str(c_path)].split("\n")[:2] == ["#include <stdio.h>", "#include <stdatomic.h>"]
    assert plan.diff.endswith("\\ No newline at end of file\n")
    cpp = tmp_path / "s.cpp"
    cpp.write_text("#include <atomic>\nstd::atomic<int> x;\nvoid f() {\n  x.store(1, std::memory_order_release);\n}\n")
    plan = plan_patch((Repair("fence", str(cpp), 0, "before"), Repair("order", str(cpp), 0)),
                      (_site(cpp, 0, 4, 5),), str(tmp_path))
    assert plan.new_texts[str(cpp)].split("\n")[3:5] == [
        "  " + CXX_FENCE, "  x.store(1, std::memory_order_seq_cst);"]
    assert "#include <stdatomic.h>" not in plan.new_texts[str(cpp)]


# --- the loop's choices, without building anything ----------------------------------------

from pyrsan.checker import model_for  # noqa: E402
from pyrsan.fix import candidates, count_cost  # noqa: E402
from pyrsan.reports import Report  # noqa: E402


def _sb_report(sites):
    ids = {s.index: "0x%016x" % s.id for s in sites}
    return Report.from_json({
        "kind": "robustness", "type": "read", "key": "k",
        "access": {"site": ids[3], "thread": 2},
        "previous": {"initial": True},
        "forced": {"site": ids[0], "thread": 1},
        "repair": {"kind": "fence", "thread": 2, "after": {"site": ids[2]}, "before": {"site": ids[3]},
                   "writer": {"thread": 1, "after": {"site": ids[0]}}}})


def _sb_sites():
    return (_site("sb.c", 0, 5, 3, "store", "release"), _site("sb.c", 1, 6, 3, "load", "acquire"),
            _site("sb.c", 2, 9, 3, "store", "release"), _site("sb.c", 3, 10, 3, "load", "seq_cst"))


def test_candidates_prefer_fences_in_both_threads_then_orders():
    sites = _sb_sites()
    found = candidates(_sb_report(sites), {s.id: s for s in sites})
    assert [(r.kind, r.index, r.position, r.thread) for r in found] == [
        ("fence", 2, "after", 2),   # between the reporting thread's two accesses
        ("fence", 0, "after", 1),   # after the write SC forces it to see, in the writer
        ("fence", 3, "before", 2),  # right before the access
        # the access is seq_cst already: no order candidate for it
        ("order", 0, "", 1),
        ("order", 2, "", 2),
    ]
    assert model_for(found[:3]) == "fenced" and model_for(found) == "ra"


def test_cost_counts_accesses_that_are_not_seq_cst():
    sites = _sb_sites() + (_site("sb.c", 4, 12, 3, "fence", "seq_cst"),)
    cost = count_cost((Repair("fence", "sb.c", 2, "after"), Repair("order", "sb.c", 0)), sites)
    assert (cost.fences, cost.orders, cost.all_seq_cst) == (1, 1, 3)


def test_statement_boundaries_decide_where_a_fence_can_go(tmp_path):
    path = tmp_path / "b.c"
    path.write_text(
        "#include <stdatomic.h>\n_Atomic double v; atomic_int x;\nvoid f(int c) {\n"
        "  double d = atomic_load_explicit(&v, memory_order_acquire);\n"          # 4
        "  if (c)\n    c = 1;\n  else\n    atomic_store_explicit(&x, 1, memory_order_release);\n"  # 8
        "  while (atomic_load_explicit(&x, memory_order_acquire))\n    ;\n"       # 9
        "  atomic_store_explicit(&x,\n                        2, memory_order_relaxed);\n"  # 11-12
        "  /* a comment before a statement */\n\n"                                  # 13-14
    "  atomic_store_explicit(&x, 3, memory_order_relaxed);\n"                   # 15
    "  (void)d;\n}\n")
    sites = (_site(path, 0, 4, 14, "load", "acquire"), _site(path, 1, 8, 5),
             _site(path, 2, 9, 10, "load", "acquire"), _site(path, 3, 11, 3, "store", "relaxed"),
             _site(path, 4, 15, 3, "store", "relaxed"))
    plan = plan_patch((Repair("fence", str(path), 0, "before"), Repair("fence", str(path), 1, "after"),
                       Repair("fence", str(path), 4, "before"),
                       Repair("fence", str(path), 2, "after"), Repair("fence", str(path), 3, "after"),
                       Repair("order", str(path), 3)), sites, str(tmp_path))
    # a fence after the load of an empty-bodied while loop (a spin loop) goes after the loop
    assert [(e.repair.index, e.action, e.anchor) for e in plan.edits] == [
        (0, "insert_before", 4), (4, "insert_before", 15), (2, "insert_after", 10), (3, "insert_after", 12)]
    assert {step.repair.index: step.reason for step in plan.manual} == {
        1: "the access is in a condition or a jump, not in a statement of its own",
        3: "the call spans several lines"}


def test_a_fence_after_a_spin_loads_goes_after_its_loop_only_when_the_body_is_empty(tmp_path):
    path = tmp_path / "w.c"
    path.write_text(
        "#include <stdatomic.h>\natomic_int f, g;\nvoid pause(void);\nvoid w(void) {\n"
        "  while (atomic_load_explicit(&f, memory_order_relaxed) != 1) {}\n"      # 5
        "  while (atomic_load_explicit(&g, memory_order_relaxed)\n         != 2) {\n  }\n"  # 6-8
        "  while (atomic_load_explicit(&f, memory_order_relaxed) != 3)\n    pause();\n"     # 9-10
        "}\n")
    sites = (_site(path, 0, 5, 10, "load", "relaxed"), _site(path, 1, 6, 10, "load", "relaxed"),
             _site(path, 2, 9, 10, "load", "relaxed"))
    plan = plan_patch(tuple(Repair("fence", str(path), i, "after") for i in range(3)), sites, str(tmp_path))
    assert [(e.repair.index, e.anchor) for e in plan.edits] == [(0, 5), (1, 8)]
    assert {step.repair.index: step.reason for step in plan.manual} == {
        2: "the access is in the condition of a loop with a body"}
    lines = plan.new_texts[str(path)].split("\n")
    assert lines[5] == lines[9] == "  " + C_FENCE


def test_an_acquire_repair_raises_each_order_token_no_further_than_needed():
    from pyrsan.patch import _raised_order
    assert _raised_order("release", "acq_rel") == "acq_rel"
    assert _raised_order("relaxed", "acquire") == "acquire"
    assert _raised_order("release", "acquire") == "acq_rel"
    assert _raised_order("seq_cst", "acquire") == "seq_cst"
    assert _raised_order("acq_rel", "acquire") == "acq_rel"
    assert _raised_order("relaxed", "seq_cst") == "seq_cst"


BODY_SOURCE = """\
#include <stdatomic.h>
static void store_rlx(atomic_int *p, int v) { atomic_store_explicit(p, v, memory_order_relaxed); } // keep
static int load_rlx(atomic_int *p) { return atomic_load_explicit(p, memory_order_relaxed); }
void g(atomic_int *a, atomic_int *b, int *seen) {
  if (atomic_load_explicit(a, memory_order_relaxed)) *seen = atomic_load_explicit(b, memory_order_relaxed);
}
"""


def _body_sites(path):
    return (_site(path, 0, 2, 47, "store", "relaxed"), _site(path, 1, 3, 45, "load", "relaxed"),
            _site(path, 2, 5, 7, "load", "relaxed"), _site(path, 3, 5, 62, "load", "relaxed"))


def test_a_fence_in_a_one_line_body_goes_on_that_line(tmp_path):
    """A store in `{ ...; }`: the fence after it goes after its `;` inside the braces; a load
    in `{ return ...; }` gets a fence before the return, and none after it (a manual step)."""
    path = tmp_path / "a.c"
    path.write_text(BODY_SOURCE)
    plan = plan_patch((Repair("fence", str(path), 0, "after"), Repair("fence", str(path), 1, "before"),
                       Repair("fence", str(path), 1, "after")), _body_sites(path), str(tmp_path))
    lines = plan.new_texts[str(path)].split("\n")
    assert lines[1] == ("static void store_rlx(atomic_int *p, int v) { atomic_store_explicit(p, v, "
                        f"memory_order_relaxed); {C_FENCE} }} // keep")
    assert lines[2] == (f"static int load_rlx(atomic_int *p) {{ {C_FENCE} "
                        "return atomic_load_explicit(p, memory_order_relaxed); }")
    assert [step.reason for step in plan.manual] == ["the line already has another change"]
    plan = plan_patch((Repair("fence", str(path), 1, "after"),), _body_sites(path), str(tmp_path))
    assert [step.reason for step in plan.manual] == [
        "the access is in a return statement: nothing can follow it in the body"]


def test_an_order_on_a_line_with_two_atomic_operations_is_replaced_in_its_own_call(tmp_path):
    """`if (a.load(rlx)) *seen = b.load(rlx);`: making the second load acquire changes only its
    own order token; the first one's, or both, likewise; a fence there is still manual."""
    path = tmp_path / "a.c"
    path.write_text(BODY_SOURCE)
    plan = plan_patch((Repair("order", str(path), 3, order="acquire"),), _body_sites(path), str(tmp_path))
    assert plan.new_texts[str(path)].split("\n")[4] == (
        "  if (atomic_load_explicit(a, memory_order_relaxed)) *seen = atomic_load_explicit(b, memory_order_acquire);")
    plan = plan_patch((Repair("order", str(path), 2, order="acquire"), Repair("order", str(path), 3, order="seq_cst")),
                      _body_sites(path), str(tmp_path))
    assert plan.new_texts[str(path)].split("\n")[4] == (
        "  if (atomic_load_explicit(a, memory_order_acquire)) *seen = atomic_load_explicit(b, memory_order_seq_cst);")
    plan = plan_patch((Repair("fence", str(path), 3, "before"),), _body_sites(path), str(tmp_path))
    assert [step.reason for step in plan.manual] == ["the line has several atomic operations"]


IF_SOURCE = """\
#include <stdatomic.h>
atomic_long top;
int push(long old, long new) {
  for (;;) {
    if (atomic_compare_exchange_weak_explicit(&top, &old, new, memory_order_release, memory_order_relaxed)) return 1;
    old = 0;
  }
}
int pop(long old) {
  if (atomic_compare_exchange_weak_explicit(&top, &old, 0, memory_order_acquire, memory_order_acquire)) {
    return 1;
  }
  if (atomic_compare_exchange_weak_explicit(&top, &old, 0, memory_order_acquire, memory_order_acquire)) return 2;
  else return 3;
}
"""


def test_a_fence_after_a_cas_in_a_one_line_if_goes_on_both_paths(tmp_path):
    """`if (cas(...)) return 1;`: the fence after the CAS goes first in the braced body and on
    the line after the if (the path where it failed): each path runs one, right after the CAS.
    An if with a block, or with an else, stays a manual step."""
    path = tmp_path / "a.c"
    path.write_text(IF_SOURCE)
    sites = (_site(path, 0, 5, 9, "cas", "release"), _site(path, 1, 10, 7, "cas", "acquire"),
             _site(path, 2, 13, 7, "cas", "acquire"))
    plan = plan_patch((Repair("fence", str(path), 0, "after"),), sites, str(tmp_path))
    lines = plan.new_texts[str(path)].split("\n")
    assert lines[4:7] == [
        "    if (atomic_compare_exchange_weak_explicit(&top, &old, new, memory_order_release, memory_order_relaxed)) "
        f"{{ {C_FENCE} return 1; }}",
        "    " + C_FENCE,
        "    old = 0;"]
    plan = plan_patch((Repair("fence", str(path), 1, "after"), Repair("fence", str(path), 2, "after")),
                      sites, str(tmp_path))
    assert [step.reason for step in plan.manual] == [
        "the access is in the condition of an if whose body is not one statement on its line",
        "the access is in the condition of an if with an else"]
