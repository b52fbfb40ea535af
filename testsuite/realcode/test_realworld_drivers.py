"""The real-code corpus (issue 14, benchmarks/realworld/drivers): every driver builds with
pyrsan and runs to its end under the default command's scheduler, without a runtime error.
Drivers use Debian's libck-dev, libboost-dev, libtbb-dev, liburcu-dev, libatomic-ops-dev,
libconcurrentqueue-dev and libreaderwriterqueue-dev (benchmarks/realworld/install.sh); a driver
whose header is absent is skipped, saying which.
Concurrency Kit drivers also run in CK's compiler-builtins mode (-DCK_USE_CC_BUILTINS=1),
except where CK itself does not provide the structure in that mode (the native build fails
too: ck_fifo_mpmc needs a double-width CAS the builtins mode lacks).

Slow (about 30 builds); the triage of the reports is in benchmarks/realworld/README.md."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "realworld"))
from corpus import DRIVERS, link_flags, missing_header  # noqa: E402

#: What a runtime failure prints (runtime fatal errors, driver internal errors).
RUNTIME_ERROR_RE = re.compile(r"pyrsan: fatal|internal error|Traceback|runtime error", re.I)


def _cases():
    for src in sorted(DRIVERS.glob("*.c*")):
        modes = [()]
        if "#include <ck_" in src.read_text():
            modes.append(("-DCK_USE_CC_BUILTINS=1",))
        for flags in modes:
            yield pytest.param(src, flags, id=src.stem + ("+builtins" if flags else ""))


@pytest.mark.slow
@pytest.mark.parametrize("src, flags", list(_cases()))
def test_driver_builds_and_runs(src, flags, tmp_path, run_pyrsan):
    missing = missing_header(src)
    if missing:
        pytest.skip(f"<{missing}> is not installed (benchmarks/realworld/install.sh)")
    libs = link_flags(src)
    compiler = "clang++-22" if src.suffix != ".c" else "clang-22"
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} is not installed")
    native = subprocess.run([compiler, "-O1", *flags, str(src), "-pthread", *libs, "-o", str(tmp_path / "native")],
                            capture_output=True, text=True)
    if native.returncode != 0:
        assert flags, f"the driver does not build natively:\n{native.stderr[-2000:]}"
        pytest.skip(f"{src.name} is not provided by the library with {' '.join(flags)} (native build fails too)")
    report = tmp_path / "out.json"
    proc = run_pyrsan("run", "--runs", "2", "--seed", "1", "--timeout", "120", "--json", report, *flags, src, *libs,
                      cwd=tmp_path, timeout=600)
    assert proc.returncode in (0, 66), proc.stderr[-3000:]
    assert not RUNTIME_ERROR_RE.search(proc.stderr), proc.stderr[-3000:]
    doc = json.loads(report.read_text())
    assert doc["verdict"] in ("clean", "violations"), doc["verdict"]
    assert not doc["crashes"] and not doc["timeouts"] and not doc["deadlocks"], doc
    assert doc["runs"] >= 1
    # the driver checked its own result and printed it: `ok ...`, exit 0 inside the runs
    assert re.search(r"^ok ", proc.stdout, re.M), proc.stdout[-2000:]
    assert not re.search(r"^bad ", proc.stdout, re.M), proc.stdout[-2000:]
