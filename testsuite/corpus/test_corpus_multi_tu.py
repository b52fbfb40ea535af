"""A program of three translation units sharing a header (multi_tu/): store buffering whose
loads go through an inline helper of the header, at -O0 (a call) and -O1 (inlined).

Run from its directory with relative file names, as `make` would, so that clang's debug info
names the header "./shared.h"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "multi_tu"


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_multi_tu_report_names_the_callers_lines_and_clean_paths(run_pyrsan, tmp_path, opt):
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "--seed", 1, opt, "--json", out, "main.c", "a.c", "b.c", cwd=HERE, timeout=600)
    document = json.loads(out.read_text())
    assert proc.returncode == 66 and document["verdict"] == "violations", proc.stderr[-3000:]
    reports = [r for r in document["reports"] if r["kind"] == "robustness"]
    assert reports and not [r for r in document["reports"] if r["kind"] == "race"]
    for r in reports:
        access = r["access"]
        caller = Path(access["stack"][-1]["file"]).name
        assert caller in ("a.c", "b.c"), access
        assert [Path(f["file"]).name for f in access["stack"]] == ["shared.h", caller], access["stack"]
        # paths as a user reads them: no "/./" from the "./shared.h" of clang's debug info
        assert not [f["file"] for f in access["stack"] if "/./" in f["file"]], access["stack"]
        # the fence goes between the store and the helper's call, both in the caller: a fence
        # inside the header's helper would be one for every caller
        between = re.search(r"between (\S+) \(store to \w+\) and (\S+) \(load from \w+\)", r["suggestion"])
        assert between, r["suggestion"]
        assert between.groups() == (f"{caller}:5", f"{caller}:6"), r["suggestion"]
