"""Make `pyrsan.passes` importable from the source tree when it is not installed, and provide
the fixtures of the pass tests (the CLI environment, the compiled stub runtime)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

try:
    import pyrsan.passes  # noqa: F401
except ImportError:
    if "pyrsan" not in sys.modules:
        try:
            import pyrsan  # noqa: F401
        except ImportError:
            pkg = types.ModuleType("pyrsan")
            pkg.__path__ = []
            sys.modules["pyrsan"] = pkg
    spec = importlib.util.spec_from_file_location(
        "pyrsan.passes", ROOT / "passes" / "__init__.py",
        submodule_search_locations=[str(ROOT / "passes")])
    module = importlib.util.module_from_spec(spec)
    sys.modules["pyrsan.passes"] = module
    spec.loader.exec_module(module)
    sys.modules["pyrsan"].passes = module

from passes_helpers import CC, HERE  # noqa: E402


@pytest.fixture(scope="session")
def cli_env(tmp_path_factory):
    """Environment in which `python -m pyrsan.passes` runs this source tree's passes/ in a
    subprocess, whatever the current directory and whether pyrsan is installed or not."""
    shim = tmp_path_factory.mktemp("shim")
    (shim / "pyrsan").mkdir()
    (shim / "pyrsan" / "__init__.py").write_text("")
    (shim / "pyrsan" / "passes").symlink_to(ROOT / "passes")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(shim), env.get("PYTHONPATH")) if p)
    return env


@pytest.fixture(scope="session")
def stub_runtime(tmp_path_factory) -> Path:
    """The counting stub runtime (stub_runtime.c) compiled once as an object."""
    out = tmp_path_factory.mktemp("stub") / "stub_runtime.o"
    subprocess.run([CC, "-std=c11", "-O1", "-g", "-fPIC", "-c", str(HERE / "stub_runtime.c"),
                    "-I", str(ROOT / "runtime" / "include"), "-o", str(out)], check=True)
    return out
