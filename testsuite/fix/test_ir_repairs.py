"""passes/repairs.py: repairs applied to the IR before instrumentation keep the program's
site numbers, put a seq_cst `__rsan_fence` where asked, and strengthen orders."""

from __future__ import annotations

import json
import subprocess
import sys

import llvmlite.binding as llvm
import pytest

from pyrsan.passes import instrument_ir
from pyrsan.passes.repairs import RepairError, parse_repairs

SOURCE = """\
#include <stdatomic.h>
atomic_int x, y;
int f(void) {
  atomic_store_explicit(&x, 1, memory_order_release);
  return atomic_load_explicit(&y, memory_order_relaxed);
}
"""


@pytest.fixture(scope="module")
def ir_text(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ir")
    (directory / "t.c").write_text(SOURCE)
    subprocess.run(["clang-22", "-g", "-O1", "-S", "-emit-llvm", "t.c", "-o", "t.ll"], cwd=directory,
                   check=True)
    return str(llvm.parse_assembly((directory / "t.ll").read_text()))


def _calls(ir: str, name: str) -> list[str]:
    return [line for line in ir.split("\n") if f"@{name}(" in line and "call" in line]


def test_fence_after_a_site_keeps_the_site_numbers(ir_text):
    plain = instrument_ir(ir_text, "M")
    repairs = parse_repairs({"repairs": [
        {"kind": "fence", "position": "after", "site": {"module": "M", "index": 0}},
        {"kind": "fence", "position": "after", "site": {"module": "OTHER", "index": 1}}]})
    fixed = instrument_ir(ir_text, "M", repairs=repairs)
    llvm.parse_assembly(fixed.ir_text).verify()
    atomics = [s for s in plain.sites if s.kind != "call"]
    assert [(s.id, s.kind, s.order) for s in fixed.sites[:len(atomics)]] == \
        [(s.id, s.kind, s.order) for s in atomics]
    fence = fixed.sites[len(atomics)]
    assert (fence.kind, fence.order, fence.frames[0].line) == ("fence", "seq_cst", 4)
    lines = fixed.ir_text.split("\n")
    store = next(i for i, line in enumerate(lines) if "@__rsan_store_4(" in line)
    assert "@__rsan_fence(i32 5, i32 0," in lines[store + 1]
    assert len(_calls(fixed.ir_text, "__rsan_fence")) == 1  # the other module's repair is ignored


def test_order_repair_by_source_position_makes_the_load_seq_cst(ir_text):
    repairs = parse_repairs({"repairs": [
        {"kind": "order", "order": "seq_cst", "at": {"file": "t.c", "line": 5}},
        {"kind": "fence", "position": "before", "at": {"file": "t.c", "line": 5}}]})
    fixed = instrument_ir(ir_text, "M", repairs=repairs)
    llvm.parse_assembly(fixed.ir_text).verify()
    load = next(s for s in fixed.sites if s.kind == "load")
    assert load.order == "seq_cst"
    [call] = _calls(fixed.ir_text, "__rsan_load_4")
    assert ", i32 5, i64 " in call
    lines = fixed.ir_text.split("\n")
    at = lines.index(call)
    assert any("@__rsan_fence(i32 5" in line for line in lines[at - 2:at])


@pytest.mark.parametrize("document, message", [
    ({}, "'repairs' list"),
    ({"repairs": [{"kind": "nop"}]}, "kind must be"),
    ({"repairs": [{"kind": "fence", "position": "inside", "site": {"module": "M", "index": 0}}]}, "position"),
    ({"repairs": [{"kind": "order", "order": "weird", "site": {"module": "M", "index": 0}}]}, "order must be"),
    ({"repairs": [{"kind": "fence", "position": "after", "site": {"module": "M"}}]}, "index"),
    ({"repairs": [{"kind": "fence", "position": "after", "at": {"line": 3}}]}, "file and a line"),
])
def test_bad_repairs_are_rejected_with_one_line(document, message):
    with pytest.raises(RepairError, match=message):
        parse_repairs(document)


def test_the_pass_command_line_rejects_a_bad_repairs_file(tmp_path, repo_root):
    (tmp_path / "r.json").write_text(json.dumps({"repairs": [{"kind": "order", "order": "release",
                                                               "site": {"module": "M", "index": 1}}]}))
    (tmp_path / "t.c").write_text(SOURCE)
    subprocess.run(["clang-22", "-g", "-O1", "-c", "-emit-llvm", "t.c", "-o", "t.bc"], cwd=tmp_path, check=True)
    proc = subprocess.run([sys.executable, "-m", "pyrsan.passes", "t.bc", "-o", "t.o", "--module-id", "M",
                           "--repairs", "r.json"], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(repo_root), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: a load cannot be made release"
