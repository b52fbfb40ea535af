"""Toolchain discovery order with fake clang-N scripts on a temporary PATH."""

from __future__ import annotations

import stat

import pytest

from pyrsan.errors import ToolchainError
from pyrsan.toolchain import find_toolchain, llvmlite_major

TOP = 22  # llvmlite's LLVM major, as passed explicitly below


def fake_clang(directory, name, major):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\necho 'Debian clang version {major}.1.0 (fake)'\necho 'Target: x86_64-pc-linux-gnu'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def find(bin_dir, cc=None, **env):
    return find_toolchain(cc=cc, env={"PATH": str(bin_dir), **env}, max_major=TOP)


def test_clang_with_llvmlites_major_is_preferred(tmp_path):
    fake_clang(tmp_path, "clang-19", 19)
    fake_clang(tmp_path, "clang", 14)
    chosen = fake_clang(tmp_path, f"clang-{TOP}", TOP)
    toolchain = find(tmp_path)
    assert toolchain.cc == str(chosen) and toolchain.major == TOP


def test_newest_older_clang_when_the_preferred_one_is_missing(tmp_path):
    fake_clang(tmp_path, "clang-16", 16)
    chosen = fake_clang(tmp_path, "clang-19", 19)
    fake_clang(tmp_path, "clang", 14)
    assert find(tmp_path).cc == str(chosen)


def test_a_clang_newer_than_llvmlite_is_never_taken(tmp_path):
    fake_clang(tmp_path, f"clang-{TOP + 1}", TOP + 1)
    fake_clang(tmp_path, "clang", TOP + 3)  # unversioned name, newer version inside
    with pytest.raises(ToolchainError, match="apt-get install clang-22"):
        find(tmp_path)


def test_unversioned_clang_is_accepted_when_old_enough(tmp_path):
    chosen = fake_clang(tmp_path, "clang", 16)
    fake_clang(tmp_path, f"clang-{TOP + 1}", TOP + 1)
    assert find(tmp_path).cc == str(chosen)


def test_pyrsan_cc_overrides_discovery(tmp_path):
    fake_clang(tmp_path / "bin", f"clang-{TOP}", TOP)
    other = fake_clang(tmp_path / "other", "clang-16", 16)
    assert find(tmp_path / "bin", PYRSAN_CC=str(other)).cc == str(other)


def test_cc_option_overrides_pyrsan_cc(tmp_path):
    env_cc = fake_clang(tmp_path / "a", "clang-16", 16)
    opt_cc = fake_clang(tmp_path / "b", "clang-19", 19)
    assert find(tmp_path / "a", cc=str(opt_cc), PYRSAN_CC=str(env_cc)).cc == str(opt_cc)


def test_pyrsan_cc_that_does_not_exist_is_an_error(tmp_path):
    fake_clang(tmp_path, f"clang-{TOP}", TOP)
    with pytest.raises(ToolchainError, match="PYRSAN_CC=/nonexistent"):
        find(tmp_path, PYRSAN_CC="/nonexistent")


def test_explicit_clang_newer_than_llvmlite_is_an_error(tmp_path):
    newer = fake_clang(tmp_path, f"clang-{TOP + 1}", TOP + 1)
    with pytest.raises(ToolchainError, match="newer"):
        find(tmp_path, cc=str(newer))


def test_explicit_compiler_that_is_not_clang_is_an_error(tmp_path):
    gcc = tmp_path / "gcc"
    gcc.write_text("#!/bin/sh\necho 'gcc (Debian 12.2.0-14) 12.2.0'\n")
    gcc.chmod(0o755)
    with pytest.raises(ToolchainError, match="not a clang"):
        find(tmp_path, cc=str(gcc))


def test_empty_path_finds_nothing(tmp_path):
    with pytest.raises(ToolchainError, match="no usable clang"):
        find(tmp_path)


def test_cxx_driver_is_the_matching_clangxx(tmp_path):
    fake_clang(tmp_path, f"clang-{TOP}", TOP)
    cxx = fake_clang(tmp_path, f"clang++-{TOP}", TOP)
    assert find(tmp_path).cxx == (str(cxx),)


def test_cxx_driver_falls_back_to_driver_mode(tmp_path):
    cc = fake_clang(tmp_path, f"clang-{TOP}", TOP)
    assert find(tmp_path).cxx == (str(cc), "--driver-mode=g++")


def test_llvmlite_major_is_the_one_the_discovery_targets():
    assert llvmlite_major() == TOP
