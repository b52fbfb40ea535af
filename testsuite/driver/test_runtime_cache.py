"""The runtime cache: built once, reused, rebuilt when a runtime source changes, safe under
parallel builds. Uses a small stand-in runtime through PYRSAN_RUNTIME_DIR (the real tree is
never edited)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from pyrsan.errors import BuildError
from pyrsan.runtime_build import ensure_runtime, runtime_dir
from pyrsan.toolchain import find_toolchain


@pytest.fixture
def toolchain():
    return find_toolchain()


@pytest.fixture
def fake_runtime(tmp_path, monkeypatch):
    root = tmp_path / "runtime"
    (root / "include").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "include" / "fake.h").write_text("int fake_a(void);\n")
    (root / "src" / "a.c").write_text('#include "fake.h"\nint fake_a(void) { return 1; }\n')
    (root / "src" / "b.c").write_text("int fake_b(void) { return 2; }\n")
    monkeypatch.setenv("PYRSAN_RUNTIME_DIR", str(root))
    monkeypatch.setenv("PYRSAN_CACHE_DIR", str(tmp_path / "cache"))
    return root


def archive_members(path):
    return sorted(subprocess.run(["ar", "t", str(path)], capture_output=True, text=True,
                                 check=True).stdout.split())


def test_runtime_is_built_once_and_reused(toolchain, fake_runtime):
    first = ensure_runtime(toolchain)
    assert first.archive.is_file()
    assert [m.split("_", 1)[1] for m in archive_members(first.archive)] == ["a.o", "b.o"]
    mtime = first.archive.stat().st_mtime_ns
    second = ensure_runtime(toolchain)
    assert second == first and second.archive.stat().st_mtime_ns == mtime


def test_changing_a_runtime_source_rebuilds(toolchain, fake_runtime):
    first = ensure_runtime(toolchain)
    (fake_runtime / "src" / "b.c").write_text("int fake_b(void) { return 3; }\n")
    second = ensure_runtime(toolchain)
    assert second.key != first.key and second.archive.is_file()
    (fake_runtime / "include" / "fake.h").write_text("int fake_a(void); /* changed */\n")
    third = ensure_runtime(toolchain)
    assert third.key not in (first.key, second.key)
    (fake_runtime / "src" / "c.c").write_text("int fake_c(void) { return 4; }\n")
    fourth = ensure_runtime(toolchain)
    assert len(archive_members(fourth.archive)) == 3


def test_parallel_builds_share_one_cache_entry(toolchain, fake_runtime, tmp_path):
    code = textwrap.dedent("""\
        from pyrsan.runtime_build import ensure_runtime
        from pyrsan.toolchain import find_toolchain
        print(ensure_runtime(find_toolchain()).archive)
        """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outputs = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(outputs) == 1 and os.path.isfile(outputs.pop())
    leftovers = [n for n in os.listdir(tmp_path / "cache") if n.startswith("building-")]
    assert leftovers == []


def test_runtime_compile_error_is_a_build_error(toolchain, fake_runtime):
    (fake_runtime / "src" / "b.c").write_text("int fake_b(void) { return oops; }\n")
    with pytest.raises(BuildError) as info:
        ensure_runtime(toolchain)
    assert "oops" in info.value.details


def test_runtime_dir_override_is_honoured(fake_runtime):
    assert runtime_dir() == fake_runtime
