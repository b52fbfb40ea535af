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


def pytest_configure(config):
    """The tests run the installed pyrsan (its packaging maps passes/ and runtime/ into it):
    it must be this checkout's, installed editable (scripts/setup.sh), or they test another."""
    try:
        import pyrsan.passes
    except ImportError as error:
        pytest.exit(f"pyrsan is not installed ({error}): run `pip install -e .` (scripts/setup.sh)", 2)
    for module in (pyrsan, pyrsan.passes):
        where = Path(module.__file__).resolve()
        if REPO_ROOT not in where.parents:
            pytest.exit(f"{module.__name__} is imported from {where}, not from this checkout "
                        f"{REPO_ROOT}: run `pip install -e .` here (scripts/setup.sh)", 2)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def pyrsan_cli() -> list[str]:
    """argv prefix that runs the pyrsan CLI (``python -m pyrsan``)."""
    return [sys.executable, "-m", "pyrsan"]


@pytest.fixture(scope="session")
def pyrsan_env() -> dict[str, str]:
    """Environment for the CLI (the installed pyrsan, this checkout: pytest_configure), no
    inherited PYRSAN_OPTIONS / PYRSAN_CC."""
    env = dict(os.environ)
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
