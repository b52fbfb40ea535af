"""Heap locations in robustness reports are named by their block (docs/reports.md §3): "offset
k of heap block allocated at f.c:L" in the text, the JSON location (with its block) and the
suggestion; the raw address only in the "Location is" line's details. Also with --no-races
(the heap blocks are tracked for robustness reports alone)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
HEX = re.compile(r"0x[0-9a-f]{6,}")


@pytest.mark.parametrize("extra", [(), ("--no-races",)], ids=["default", "no-races"])
def test_heap_locations_are_named_by_allocation_site_and_offset(run_pyrsan, tmp_path, extra):
    out = tmp_path / "r.json"
    proc = run_pyrsan("run", "--seed", 1, "--json", out, *extra, HERE / "heap_mp_named.c", timeout=300)
    assert proc.returncode == 66, proc.stderr
    reports = json.loads(out.read_text())["reports"]
    assert reports and all(r["kind"] == "robustness" for r in reports)
    for r in reports:
        loc = r["location"]
        offset = int(loc["address"], 16) - int(loc["block"]["address"], 16)
        assert loc["object"] == "heap" and loc["block"]["offset"] == offset in (0, 4)
        assert loc["block"]["line"] == 30 and loc["block"]["size"] == 8 and loc["block"]["thread"] == 0
        assert loc["name"] == f"offset {offset} of heap block allocated at heap_mp_named.c:30"
        assert not HEX.search(r["suggestion"]), r["suggestion"]
        assert "of heap block allocated at heap_mp_named.c:30" in r["suggestion"]
        assert f"may read a stale value of {loc['name']}:" in proc.stderr
        if r["previous"].get("initial"):
            assert r["previous"]["description"] == f"the value at allocation (value 0) of {loc['name']}"
        assert re.search(r"  Location is %s \(size 8, allocated by thread T0; block at 0x[0-9a-f]+, "
                         r"location at %s\)" % (re.escape(loc["name"]), loc["address"]), proc.stderr)
