"""`pyrsan run --no-races / --no-robustness` and `pyrsan build --no-races` (cli.py, build.py):
the runtime options they set, and whether plain accesses are instrumented."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from passes_helpers import HERE

RACY = HERE / "data" / "plain_racy_counter.c"
STACK_RACE = HERE / "data" / "plain_stack_race.c"


def options_seen(stdout: str) -> dict[str, str]:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("options="))
    return dict(item.partition("=")[::2] for item in line[len("options="):].split(":") if item)


def kept_ir(stderr: str) -> str:
    """The instrumented IR that --keep-temps kept (the directory is removed)."""
    kept = Path(re.search(r"temporary files kept in (\S+)", stderr).group(1))
    try:
        return "\n".join(p.read_text() for p in kept.glob("*.rsan.ll"))
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def test_run_reports_the_unprotected_counter_as_a_race(run_pyrsan, tmp_path):
    p = run_pyrsan("run", "--json", tmp_path / "out.json", RACY)
    assert p.returncode == 66, p.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert {r["kind"] for r in doc["reports"]} == {"race"}
    assert options_seen(p.stdout).get("report_races", "1") == "1"


def test_no_races_skips_the_plain_instrumentation_and_turns_race_reports_off(run_pyrsan):
    p = run_pyrsan("run", "--no-races", "--keep-temps", RACY)
    assert p.returncode == 0, p.stderr
    assert options_seen(p.stdout)["report_races"] == "0"
    ir = kept_ir(p.stderr)
    assert "define" in ir and not re.search(r"@__rsan_(read|write)_", ir)


def test_no_robustness_keeps_races_and_turns_robustness_reports_off(run_pyrsan):
    p = run_pyrsan("run", "--no-robustness", "--keep-temps", RACY,
                   env={"PYRSAN_OPTIONS": "report_robustness=1:verbosity=0"})
    assert p.returncode == 66, p.stderr
    seen = options_seen(p.stdout)
    assert seen["report_robustness"] == "0" and seen["verbosity"] == "0"   # the flag wins
    assert re.search(r"@__rsan_write_4\(ptr (?:nonnull )?@counter,", kept_ir(p.stderr))


def test_no_races_and_no_robustness_together_are_a_usage_error(run_pyrsan):
    p = run_pyrsan("run", "--no-races", "--no-robustness", RACY)
    assert p.returncode == 2
    assert p.stderr == "pyrsan: --no-races and --no-robustness together leave nothing to check\n"


def test_build_no_races_makes_a_binary_without_plain_hooks(run_pyrsan, tmp_path):
    for flags, hooked in (((), True), (("--no-races",), False)):
        exe = tmp_path / ("racy%d" % hooked)
        p = run_pyrsan("build", *flags, "--keep-temps", RACY, "-o", exe)
        assert p.returncode == 0, p.stderr
        assert exe.is_file()
        assert bool(re.search(r"@__rsan_write_4\(ptr (?:nonnull )?@counter,", kept_ir(p.stderr))) == hooked


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_a_local_handed_to_another_thread_escapes_and_its_race_is_found(run_pyrsan, tmp_path, opt):
    p = run_pyrsan("run", "--json", tmp_path / "out.json", opt, STACK_RACE)
    assert p.returncode == 66, p.stderr
    races = json.loads((tmp_path / "out.json").read_text())["reports"]
    assert races and {r["kind"] for r in races} == {"race"}
    lines = {side["line"] for r in races for side in (r["access"], r["previous"])}
    assert lines == {9, 19}   # `*shared += 1` in the thread, `local += ...` in main
