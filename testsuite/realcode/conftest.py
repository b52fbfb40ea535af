"""Fixtures of the real-code tests: build a program of programs/ once with `pyrsan build`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture(scope="module")
def build_program(tmp_path_factory, pyrsan_env):
    """build_program(name, *flags) -> path of the instrumented executable (cached per module)."""
    built: dict[tuple, Path] = {}

    def _build(name: str, *flags: str) -> Path:
        key = (name, flags)
        if key not in built:
            out = tmp_path_factory.mktemp("bin") / Path(name).stem
            proc = subprocess.run([sys.executable, "-m", "pyrsan", "build", *flags, str(PROGRAMS / name),
                                   "-o", str(out)], env=pyrsan_env, capture_output=True, text=True)
            assert proc.returncode == 0, proc.stderr
            built[key] = out
        return built[key]

    return _build
