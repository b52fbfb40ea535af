"""The atomic access's pass over a granule's 4 main cells as lane masks (runtime/src/rsan_race.h
`rsan_race_cell_masks`, `rsan_race_cells_decide`; docs/design/races.md §14) decides exactly as
the scalar pass it replaced: the same outcome (done, the scan, a mark, take a cell, store into a
cell) and the same cell, the first cell that returns deciding (a plain cell of another thread
only when it does not happen before the access). race_cell_pass/check.c transcribes the scalar
pass and compares the two on 3,000,000 random granules of colliding cells. The pass is inlined
into the atomic entry points, which are built for AVX2 and for the baseline (atomic.c
target_clones; race.c's general path is the baseline only): so the check is built for both
targets, and each build must meet every outcome and every cell index."""
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import INC, SRC, _compiler

HERE = Path(__file__).resolve().parent


def _has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


@pytest.mark.parametrize("target", ["baseline", "avx2"])
def test_the_lane_masks_decide_as_the_scalar_pass(target, tmp_path):
    if target == "avx2" and not _has_avx2():
        pytest.skip("no AVX2 on this machine")
    exe = tmp_path / "check"
    flags = ["-mavx2"] if target == "avx2" else []
    cmd = [_compiler(), "-std=c11", "-O2", "-D_GNU_SOURCE", "-pthread", *flags, f"-I{SRC}", f"-I{INC}",
           str(HERE / "race_cell_pass" / "check.c"), "-o", str(exe)]
    subprocess.run(cmd, check=True)
    if target == "avx2":   # the AVX2 build uses AVX2 instructions (the compare of 4 cells at once)
        objdump = shutil.which("objdump")
        if objdump:
            dis = subprocess.run([objdump, "-d", str(exe)], check=True, capture_output=True, text=True).stdout
            assert "vpcmpeqq" in dis and "ymm" in dis
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    assert out[-2] == "0", "\n".join(out)
    counts = [int(x) for x in out[-1].split()]
    # every outcome (scan, done, mark, take, store) and every cell index seen, and plain cells checked
    assert all(c > 1000 for c in counts), counts
