"""How the build relays what the instrumentation subprocess says (stand-in subprocesses,
so no pass has to misbehave for real)."""

from __future__ import annotations

import os
import sys

import pytest

from pyrsan.build import check_sources, instrument
from pyrsan.errors import InstrumentationError, InternalError, UsageError


def fake_python(tmp_path, body):
    path = tmp_path / "fake-python"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_unsupported_ir_relays_the_passes_one_line_message(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", fake_python(
        tmp_path, "echo 'error: load atomic i128 is not supported (wide.c:3)' >&2; exit 2"))
    with pytest.raises(InstrumentationError) as info:
        instrument(tmp_path / "in.bc", tmp_path / "out.o", "wide.c", None)
    assert str(info.value) == "wide.c: load atomic i128 is not supported (wide.c:3)"


def test_a_crash_of_the_passes_is_an_internal_error(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", fake_python(
        tmp_path, "echo 'LLVM ERROR: assertion failed' >&2; kill -ABRT $$"))
    with pytest.raises(InternalError) as info:
        instrument(tmp_path / "in.bc", tmp_path / "out.o", "app.c", None)
    assert "internal error" in str(info.value) and "SIGABRT" in str(info.value)
    assert "assertion failed" in info.value.details


def test_passes_exiting_0_without_an_object_is_an_internal_error(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", fake_python(tmp_path, "exit 0"))
    with pytest.raises(InternalError):
        instrument(tmp_path / "in.bc", tmp_path / "out.o", "app.c", None)


def test_the_passes_get_the_documented_command_line(tmp_path, monkeypatch):
    log = tmp_path / "argv"
    monkeypatch.setattr(sys, "executable", fake_python(
        tmp_path, f'printf "%s\\n" "$@" > {log}; : > "$5"'))
    instrument(tmp_path / "in.bc", tmp_path / "out.o", "src/app.c", tmp_path / "out.ll")
    argv = log.read_text().splitlines()
    assert argv == ["-m", "pyrsan.passes", str(tmp_path / "in.bc"), "-o", str(tmp_path / "out.o"),
                    "--module-id", os.path.abspath("src/app.c"), "--emit-ll", str(tmp_path / "out.ll"),
                    "--list-loops", "--list-notes"]


def test_sources_are_checked_before_anything_is_compiled(tmp_path):
    (tmp_path / "a.c").write_text("")
    check_sources((str(tmp_path / "a.c"),))
    with pytest.raises(UsageError, match="no such file"):
        check_sources((str(tmp_path / "a.c"), str(tmp_path / "missing.cpp")))
    with pytest.raises(UsageError, match="unknown source file type"):
        check_sources((str(tmp_path / "a.h"),))
    with pytest.raises(UsageError):
        check_sources(())
