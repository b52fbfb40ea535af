"""`pyrsan run PROGRAM` takes an instrumented executable by what it is (an ELF file with the
runtime), not by its name: `app.rsan`, `test.bin` or a name with a space are programs too;
only a source extension (.c, .cpp, ...) makes it a source."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


@pytest.mark.parametrize("name", ["app.rsan", "test.v2.bin", "my app.out"])
def test_prebuilt_program_with_a_dotted_name(name, tmp_path, run_pyrsan, build_program):
    exe = tmp_path / name
    shutil.copy2(build_program("asm_tas_lock.c"), exe)
    proc = run_pyrsan("run", "--runs", "1", "--seed", "1", "--json", tmp_path / "r.json", exe, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"] == "clean" and doc["runs"] == 1
