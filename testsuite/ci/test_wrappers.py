"""pyrsan-cc / pyrsan-c++ as drop-in compilers: command-line parsing (no clang needed), then
a multi-directory project built with Make and with CMake + CTest, whose test binary reports
by itself (exit 66, text on stderr, JSON lines with PYRSAN_OPTIONS=json_path=...)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pyrsan.wrappers import expand_response_files, parse_command_line

from .project import clean_env, violation_line, write_project, write_wrappers

# --- command-line parsing -----------------------------------------------------------------


def test_compile_command_splits_dependency_flags_from_the_link_step():
    cl = parse_command_line(["-O2", "-fPIC", "-Iinc", "-DX=1", "-MD", "-MF", "a.d", "-MT", "a.o",
                             "-c", "a.c", "-o", "a.o"])
    assert cl.compile_only and cl.output == "a.o" and cl.sources == ["a.c"]
    assert cl.compile_flags == ["-O2", "-fPIC", "-Iinc", "-DX=1", "-MD", "-MF", "a.d", "-MT", "a.o"]
    assert cl.deps and cl.dep_file_given and cl.dep_target_given
    assert "-MF" not in cl.link_args and "-Iinc" not in cl.link_args


def test_link_command_keeps_inputs_in_order_and_knows_shared_outputs():
    cl = parse_command_line(["-shared", "x.o", "-Lsub", "-lfoo", "b.cpp", "-Wl,-soname,x", "-o", "libx.so"])
    assert cl.shared and not cl.compile_only and cl.sources == ["b.cpp"]
    assert cl.link_args == ["-shared", "x.o", "-Lsub", "-lfoo", "b.cpp", "-Wl,-soname,x"]
    assert "-lfoo" not in cl.compile_flags
    assert not parse_command_line(["a.o", "-o", "app"]).shared


@pytest.mark.parametrize("args", [["-E", "a.c"], ["-S", "a.c"], ["-M", "a.c"], ["--version"],
                                  ["-x", "c", "-c", "-"], ["-print-search-dirs"]])
def test_preprocess_assembly_and_queries_go_straight_to_clang(args):
    assert parse_command_line(args).passthrough


def test_response_files_are_expanded_with_quoting(tmp_path):
    inner = tmp_path / "inner.rsp"
    inner.write_text("-DNAME='a b'\n")
    outer = tmp_path / "outer.rsp"
    outer.write_text(f'"my file.c" @{inner} -c\n')
    assert expand_response_files(["-O1", f"@{outer}", "@missing"]) == \
        ["-O1", "my file.c", "-DNAME=a b", "-c", "@missing"]


# --- end to end ---------------------------------------------------------------------------


def _check_reports(json_path: Path, stderr: str, root: Path) -> None:
    """Both violations (static library and shared library) reported, in text and JSON."""
    assert "WARNING: pyrsan: robustness violation (read)" in stderr, stderr
    reports = [json.loads(line) for line in json_path.read_text().splitlines() if line.strip()]
    where = {(Path(r["access"]["file"]).resolve(), r["access"]["line"]) for r in reports}
    assert ((root / "lib/spin.c").resolve(), violation_line("lib/spin.c")) in where, where
    assert ((root / "shlib/shared.c").resolve(), violation_line("shlib/shared.c")) in where, where
    assert all(r["kind"] == "robustness" for r in reports)


def _run_test_binary(binary: Path, root: Path, tmp_path: Path) -> None:
    json_path = tmp_path / "reports.jsonl"
    proc = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120,
                          env=clean_env({"PYRSAN_OPTIONS": f"json_path={json_path}"}))
    assert proc.returncode == 66, proc.stderr
    assert "test_main: " in proc.stdout and " 1 1 7" in proc.stdout  # the program still works
    _check_reports(json_path, proc.stderr, root)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_build_with_the_wrappers_reports_from_static_and_shared_libraries(tmp_path):
    root = write_project(tmp_path / "proj")
    wrappers = write_wrappers(tmp_path / "bin")
    plain = shutil.which("clang-22") or "cc"
    proc = subprocess.run(
        ["make", "-j2", f"CC={wrappers['pyrsan-cc']}", f"CXX={wrappers['pyrsan-c++']}", f"PLAIN_CC={plain}"],
        cwd=root, capture_output=True, text=True, timeout=600, env=clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # dependency files are written as the compiler would, named after the objects
    assert "lib/spin.o: lib/spin.c" in (root / "lib/spin.d").read_text().replace(" \\\n", "")
    assert "shlib/shared.o:" in (root / "shlib/shared.dep").read_text()
    # the runtime is in the executable only, never in the shared library
    nm = shutil.which("nm")
    if nm:
        so_symbols = subprocess.run([nm, "-D", str(root / "shlib/libshared.so")], capture_output=True,
                                    text=True).stdout
        assert " U __rsan_load_4" in so_symbols and " T __rsan_load_4" not in so_symbols
    _run_test_binary(root / "tests/test_main", root, tmp_path)
    # the shared library also works when dlopen()ed by an instrumented program
    json_path = tmp_path / "dl.jsonl"
    proc = subprocess.run([str(root / "tests/dl_main"), str(root / "shlib/libshared.so")], capture_output=True,
                          text=True, timeout=120, env=clean_env({"PYRSAN_OPTIONS": f"json_path={json_path}"}))
    assert proc.returncode == 66 and "dl_main: 1" in proc.stdout, proc.stdout + proc.stderr
    reports = [json.loads(line) for line in json_path.read_text().splitlines()]
    assert [(Path(r["access"]["file"]).name, r["access"]["line"]) for r in reports] == \
        [("shared.c", violation_line("shlib/shared.c"))]


def test_compile_error_gives_clangs_diagnostics_and_a_failure_status(tmp_path):
    wrappers = write_wrappers(tmp_path / "bin")
    bad = tmp_path / "bad.c"
    bad.write_text("int f(void) { return undeclared; }\n")
    proc = subprocess.run([wrappers["pyrsan-cc"], "-c", str(bad), "-o", str(tmp_path / "bad.o")],
                          capture_output=True, text=True, env=clean_env(), timeout=120)
    assert proc.returncode != 0
    assert "undeclared" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "bad.o").exists()


def test_version_passes_through_to_clang(tmp_path):
    wrappers = write_wrappers(tmp_path / "bin")
    proc = subprocess.run([wrappers["pyrsan-c++"], "--version"], capture_output=True, text=True,
                          env=clean_env(), timeout=60)
    assert proc.returncode == 0 and "clang version" in proc.stdout


@pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ctest") is None,
                    reason="cmake is not installed")
def test_cmake_build_with_the_wrappers_and_ctest_reports(tmp_path, run_pyrsan):
    root = write_project(tmp_path / "proj")
    wrappers = write_wrappers(tmp_path / "bin")
    build = tmp_path / "build"
    configure = subprocess.run(
        ["cmake", "-S", str(root), "-B", str(build), f"-DCMAKE_C_COMPILER={wrappers['pyrsan-cc']}",
         f"-DCMAKE_CXX_COMPILER={wrappers['pyrsan-c++']}", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"],
        capture_output=True, text=True, timeout=600, env=clean_env())
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert "The C compiler identification is Clang" in configure.stdout, configure.stdout
    compile_ = subprocess.run(["cmake", "--build", str(build), "-j", "2"], capture_output=True,
                              text=True, timeout=600, env=clean_env())
    assert compile_.returncode == 0, compile_.stdout + compile_.stderr
    json_path = tmp_path / "ctest.jsonl"
    ctest = subprocess.run(["ctest", "--output-on-failure"], cwd=build, capture_output=True, text=True,
                           timeout=300, env=clean_env({"PYRSAN_OPTIONS": f"json_path={json_path}"}))
    # The test fails because pyrsan reported (exit 66), as a sanitizer build should.
    assert ctest.returncode != 0, ctest.stdout
    assert "handoff" in ctest.stdout and "Failed" in ctest.stdout
    _check_reports(json_path, ctest.stdout, root)
    # the merged report of the CTest run, as SARIF, points at both source files
    proc = run_pyrsan("report", json_path, "--sarif", tmp_path / "ci.sarif", "--source-root", root)
    assert proc.returncode == 66, proc.stderr
    results = json.loads((tmp_path / "ci.sarif").read_text())["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"lib/spin.c", "shlib/shared.c"}
