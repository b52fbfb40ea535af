"""Shared fixtures for every test directory: how to run the pyrsan CLI of this checkout.

Tests marked ``slow`` are deselected by default (pyproject addopts ``-m 'not slow'``);
run them with ``pytest -m slow``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
# In-process imports (`import pyrsan`) use this checkout too, installed or not.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def pyrsan_cli() -> list[str]:
    """argv prefix that runs the pyrsan CLI (``python -m pyrsan``, this checkout)."""
    return [sys.executable, "-m", "pyrsan"]


@pytest.fixture(scope="session")
def pyrsan_env() -> dict[str, str]:
    """Environment for the CLI: this checkout first on PYTHONPATH, no inherited
    PYRSAN_OPTIONS / PYRSAN_CC."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.pop("PYRSAN_OPTIONS", None)
    env.pop("PYRSAN_CC", None)
    return env


@pytest.fixture
def run_pyrsan(pyrsan_cli, pyrsan_env):
    """run_pyrsan(*args, cwd=None, env=None, timeout=300, input=None) -> CompletedProcess
    (text mode, stdout and stderr captured). ``env`` entries update pyrsan_env."""

    def _run(*args, cwd=None, env=None, timeout=300, input=None):
        full_env = dict(pyrsan_env)
        full_env.update(env or {})
        return subprocess.run(
            [*pyrsan_cli, *map(str, args)], cwd=cwd, env=full_env, timeout=timeout,
            capture_output=True, text=True, input=input, check=False,
        )

    return _run
