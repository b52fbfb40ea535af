"""`pip install .` and `pip install -e .` from a copy of the tree, in throwaway venvs
(slow: builds a wheel; needs the package registry for the isolated build's setuptools)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .test_cli import VIOLATION_C

pytestmark = pytest.mark.slow


def copy_tree(repo_root, dest):
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "build", ".pytest_cache",
                                    ".hypothesis", "*.o", "*.bc", "*.so", "*.a")
    shutil.copytree(repo_root, dest, ignore=ignore)


@pytest.mark.parametrize("editable", [False, True], ids=["wheel", "editable"])
def test_installed_package_runs_a_program(repo_root, tmp_path, editable):
    src = tmp_path / "src"
    copy_tree(repo_root, src)
    venv = tmp_path / "venv"
    # system site packages: llvmlite, cffi, click come from this interpreter's environment
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run(pip + (["-e", str(src)] if editable else [str(src)]), check=True, cwd=tmp_path,
                   timeout=600)
    if not editable:
        shutil.rmtree(src)  # the wheel must not need the source tree
    prog = tmp_path / "viol.c"
    prog.write_text(VIOLATION_C)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYRSAN_OPTIONS")}
    env["PYRSAN_CACHE_DIR"] = str(tmp_path / "cache")
    proc = subprocess.run([str(venv / "bin" / "pyrsan"), "run", str(prog)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 66, proc.stderr
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import pyrsan.passes, pyrsan.runtime_build as r; print(pyrsan.passes.__file__); print(r.runtime_dir())"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.split()
    inside = str(venv) if not editable else str(src)
    assert all(path.startswith(inside) for path in where), where
