"""Options (PYRSAN_OPTIONS), deduplication, the text block, the JSON line, and the process
exit behaviour (exit status, halt_on_error, bad options) in a real subprocess."""
import re
import json
import os
import subprocess
import sys
import textwrap

import pytest

from harness import HERE, Program, line_of, run

SB = Program([("st", "x", 1, "rlx"), ("ld", "y", "rlx")], [("st", "y", 1, "rlx"), ("ld", "x", "rlx")])


@pytest.mark.parametrize("opts", ["bogus=1", "halt_on_error=yes", "sc_accesses=tso", "exitcode",
                                  "exitcode=abc", "print_reports=1:verbose=1"])
def test_bad_options_are_rejected_with_one_line(rt, opts):
    assert rt.rsan.test_set_options(opts.encode()) == -1
    msg = rt.ffi.string(rt.rsan.test_last_error()).decode()
    assert msg.startswith("pyrsan: ") and "PYRSAN_OPTIONS" in msg and msg.count("\n") == 1


@pytest.mark.parametrize("opts", ["", "halt_on_error=0:exitcode=3", "  sc_accesses=ra  verbosity=1 ",
                                  "print_reports=0:report_races=0:report_robustness=1"])
def test_good_options_are_accepted(rt, opts):
    assert rt.rsan.test_set_options(opts.encode()) == 0


def test_a_violation_hit_twice_is_reported_once(rt):
    lib = rt.lib
    x, y = rt.sb_prefix()
    s = rt.site("ld", 4, "t2")
    rt.load(x, site=s)
    rt.load(x, site=s)
    assert len(rt.reports()) == 1 and lib.__rsan_test_report_count() == 1


def test_text_block_and_json_line_agree(rt):
    res = run(rt, SB, (0, 0, 1, 1))
    (r,) = res.reports
    t = r["text"]
    assert t.startswith("==================\nWARNING: pyrsan: robustness violation (read) (pid=%d)\n" % r["pid"])
    assert "by thread T2:\n    #0 t2 /abs/litmus.c:%d:5\n" % line_of(2, 1) in t
    assert "the initial value of global 'x' (value 0)" in t
    assert "Timestamps: hb 0, sc 1" in t and "Model: RC20 (sc_accesses=fenced)" in t
    assert r["suggestion"] in t
    assert t.rstrip("\n").endswith(
        "SUMMARY: pyrsan: robustness violation /abs/litmus.c:%d in t2\n==================" % line_of(2, 1))
    assert re.fullmatch(r"0x[0-9a-f]{16}/0x[0-9a-f]{16}/read", r["key"])
    assert r["group"] == r["key"].split("/")[0] + "/read"
    assert r["access"]["site"] == "0x%016x" % (0x9F3A12C400000000 | 3)


def test_previous_write_is_the_newest_the_thread_is_hb_aware_of(rt):
    # T2 read x = 1 (rlx, coherence) then T1 writes x = 2, x = 3 with y in between:
    # T1: x=1; x=2; a=y; x=3   T2 (after x=1 only): b=x; y=1; c=x
    prog = Program([("st", "x", 1, "rlx"), ("st", "x", 2, "rlx"), ("ld", "y", "rlx"), ("st", "x", 3, "rlx")],
                   [("ld", "x", "rlx"), ("st", "y", 1, "rlx"), ("ld", "x", "rlx")])
    res = run(rt, prog, (0, 1, 0, 0, 1, 1, 0))
    (r,) = res.reports
    assert r["timestamps"] == {"hb": 1, "sc": 2}
    assert r["previous"]["initial"] is False and r["previous"]["value"] == 1
    assert r["previous"]["line"] == line_of(1, 0)
    assert r["forced"]["value"] == 2


def test_suggestion_without_an_earlier_access_strengthens_the_orders(rt):
    # T2's very first access is the violating load; its SC knowledge comes from creation
    x, y = rt.sb_prefix(writer_is_main=True)
    rt.load(x, site=rt.site("ld", 4, "t2"))
    (r,) = rt.reports()
    assert r["suggestion"].startswith("strengthen the load at litmus.c:4 (currently relaxed)")


SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, %r)
    from harness import load_engine
    ffi, lib = load_engine()
    x, y = ffi.new("uint32_t *"), ffi.new("uint32_t *")
    main = lib.__rsan_test_new_thread(ffi.NULL)
    t1, t2 = lib.rsan_thread_create(main), lib.rsan_thread_create(main)
    lib.__rsan_test_set_current(t1)
    lib.__rsan_store_4(x, 1, 0, 0); lib.__rsan_load_4(y, 0, 0)
    lib.__rsan_test_set_current(t2)
    lib.__rsan_store_4(y, 1, 0, 0); lib.__rsan_load_4(x, 0, 0)
    print("after-report", flush=True)
""") % str(HERE)


def run_script(tmp_path, opts):
    env = dict(os.environ, PYRSAN_OPTIONS=opts)
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


def test_process_exits_66_after_reports_and_writes_json_with_pid(tmp_path, engine):
    p = run_script(tmp_path, f"json_path={tmp_path}/r.%p.jsonl")
    assert p.returncode == 66, p.stderr
    assert "after-report" in p.stdout
    assert "WARNING: pyrsan: robustness violation (read)" in p.stderr
    assert "pyrsan: reported 1 robustness violation(s)" in p.stderr
    files = list(tmp_path.glob("r.*.jsonl"))
    assert len(files) == 1 and files[0].name != "r.%p.jsonl"
    (rec,) = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert files[0].name == "r.%d.jsonl" % rec["pid"]


def test_halt_on_error_exits_at_the_first_report_with_exitcode(tmp_path, engine):
    p = run_script(tmp_path, "halt_on_error=1:exitcode=9:print_reports=0")
    assert p.returncode == 9
    assert "after-report" not in p.stdout
    assert "WARNING" not in p.stderr


def test_unknown_option_exits_86_with_one_line(tmp_path, engine):
    p = run_script(tmp_path, "print_reports=0 bogus_option=1")
    assert p.returncode == 86  # the start-up options error status (docs/interfaces.md §2)
    assert p.stderr == "pyrsan: unknown option 'bogus_option' in PYRSAN_OPTIONS\n"


def test_site_prefix_collision_warns_once_and_sites_resolve(rt, capfd):
    ffi = rt.ffi
    mods = []
    for name in ("/abs/a.c", "/abs/b.c", "/abs/c.c"):
        m = ffi.new("rsan_module *")
        m.abi_version, m.id_prefix = 1, 0x9F3A12C400000000  # same prefix as the harness module
        n = ffi.new("char[]", name.encode())
        m.name = n
        mods.append((m, n))
        rt.rsan.register_module(m)
    err = capfd.readouterr().err
    assert err.count("site id prefix collision") == 1
    assert "'/abs/litmus.c' and '/abs/a.c'" in err
    # the first registered module still resolves its sites
    x = rt.var("x")
    s = rt.site("ld", 77, "f")
    assert rt.load(x, site=s) == 0
