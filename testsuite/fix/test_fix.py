"""`pyrsan fix` end to end (issue 6 item 5): the fix loop finds the fences, the patch applies
with `patch -p1` (and `git apply`), the patched program is robust when checked again, and
taking out any single inserted fence brings a violation back.

Checks use the OS scheduler: every program here starts its threads in an order (sleeps, not
synchronisation) whose run shows the violation, and 60 runs per check make a miss improbable.
SB and Dekker run by default; the others are marked slow (each takes 20 s or more here).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LITMUS = HERE.parent / "litmus"
CPP = HERE.parent / "cpp"
RUNS = "60"
FENCE_RE = re.compile(r"^\+(\s*)(std::)?atomic_thread_fence\((std::)?memory_order_seq_cst\);$")


def _fix(run_pyrsan, work: Path, name: str, *extra: str):
    proc = run_pyrsan("fix", name, "--runs", RUNS, "--patch", "fix.patch", "--json", "fix.json",
                      *extra, cwd=work)
    document = json.loads((work / "fix.json").read_text())
    return proc, document


def _check(run_pyrsan, directory: Path, name: str) -> dict:
    out = directory / "check.json"
    run_pyrsan("run", "--runs", RUNS, "--json", out, name, cwd=directory)
    return json.loads(out.read_text())


def fix_and_verify(run_pyrsan, tmp_path: Path, source: Path, expected_fences: int | None = None,
                   headers: tuple[Path, ...] = (), extra: tuple[str, ...] = ()):
    """The whole contract of item 5 for one program (its source and the headers it includes
    with quotes); returns the fix document."""
    files = (source, *headers)
    work = tmp_path / "work"
    work.mkdir()
    for path in files:
        shutil.copy(path, work / path.name)
    originals = {path.name: path.read_text() for path in files}
    proc, document = _fix(run_pyrsan, work, source.name, *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert document["verdict"] == "fixed"
    for name, text in originals.items():
        assert (work / name).read_text() == text, "fix modified a source without --in-place"
    # every reported violation carries a structured repair next to the suggestion
    for report in document["violations"]:
        assert isinstance(report["suggestion"], str) and report["repair"]["kind"] in ("fence", "order")
    patch_text = (work / "fix.patch").read_text()
    fences = [line for line in patch_text.splitlines() if FENCE_RE.match(line)]
    assert fences and len(fences) == document["cost"]["fences"]
    if expected_fences is not None:
        assert len(fences) == expected_fences, patch_text
    assert document["patched_check"]["verdict"] == "clean"

    # the patch applies to a clean copy, with git apply and with patch -p1
    applied = tmp_path / "applied"
    applied.mkdir()
    for path in files:
        shutil.copy(path, applied / path.name)
    git = subprocess.run(["git", "apply", "--check", str(work / "fix.patch")], cwd=applied,
                         capture_output=True, text=True)
    assert git.returncode == 0, git.stderr
    patched = subprocess.run(["patch", "-p1", "-i", str(work / "fix.patch")], cwd=applied,
                             capture_output=True, text=True)
    assert patched.returncode == 0, patched.stdout + patched.stderr
    assert _check(run_pyrsan, applied, source.name)["verdict"] == "clean"

    # removing any single inserted fence brings a violation back
    inserted = []
    for name in originals:
        lines = (applied / name).read_text().split("\n")
        inserted += [(name, lines, i) for i, line in enumerate(lines)
                     if FENCE_RE.match("+" + line) and line not in originals[name].split("\n")]
    assert len(inserted) == len(fences)
    for number, (name, lines, index) in enumerate(inserted):
        without = tmp_path / f"without{number}"
        shutil.copytree(applied, without)
        (without / name).write_text("\n".join(lines[:index] + lines[index + 1:]))
        assert _check(run_pyrsan, without, source.name)["verdict"] == "violations", (
            f"the fence at {name}:{index + 1} is not needed:\n" + patch_text)
    return document


def test_sb_is_fixed_with_a_fence_in_each_thread(run_pyrsan, tmp_path):
    document = fix_and_verify(run_pyrsan, tmp_path, LITMUS / "sb_relacq.c", expected_fences=2)
    assert document["cost"] == {"fences": 2, "orders": 0, "all_seq_cst": 4}
    assert document["check"]["sc_accesses"] == "fenced"


def test_mp_with_a_spin_loop_gets_its_reader_fence_after_the_loop(run_pyrsan, tmp_path):
    """The reader's fence belongs after its recognised spin loop: inside it (right after the
    load, as the IR repair first placed it) it was a step of every failed attempt, the
    check's run spun on it until max_steps, and the fix gave up."""
    document = fix_and_verify(run_pyrsan, tmp_path, LITMUS / "mp_spin_rlx.c", expected_fences=2)
    patch_text = (tmp_path / "work" / "fix.patch").read_text()
    assert re.search(r"^ +;\n\+ +atomic_thread_fence\(memory_order_seq_cst\);\n +r0 = ", patch_text, re.M), patch_text
    assert not document["remaining"]


def test_dekker_in_place_keeps_a_backup_and_needs_one_fence(run_pyrsan, tmp_path):
    document = fix_and_verify(run_pyrsan, tmp_path, LITMUS / "dekker_relacq.c", expected_fences=1)
    [repair] = document["repairs"]
    assert repair["kind"] == "fence" and repair["position"] == "after" and repair["line"] == 16
    # --in-place on another copy: the source is patched, the original kept as FILE.orig
    inplace = tmp_path / "inplace"
    inplace.mkdir()
    shutil.copy(LITMUS / "dekker_relacq.c", inplace / "dekker_relacq.c")
    # (fewer runs: this run is about the files; the fix itself was checked above)
    proc = run_pyrsan("fix", "dekker_relacq.c", "--runs", "20", "--in-place", cwd=inplace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (inplace / "dekker_relacq.c.orig").read_text() == (LITMUS / "dekker_relacq.c").read_text()
    assert "atomic_thread_fence(memory_order_seq_cst);" in (inplace / "dekker_relacq.c").read_text()


@pytest.mark.slow
def test_peterson_is_fixed(run_pyrsan, tmp_path):
    fix_and_verify(run_pyrsan, tmp_path, LITMUS / "peterson_relacq.c")


@pytest.mark.slow
def test_iriw_is_fixed_with_a_writer_fence_and_a_reader_fence(run_pyrsan, tmp_path):
    fix_and_verify(run_pyrsan, tmp_path, LITMUS / "iriw_relacq.c")


@pytest.mark.slow
def test_2p2w_is_fixed(run_pyrsan, tmp_path):
    fix_and_verify(run_pyrsan, tmp_path, LITMUS / "2p2w_relacq.c", expected_fences=2)


@pytest.mark.slow
def test_chase_lev_deque_gets_the_fences_of_the_published_algorithm(run_pyrsan, tmp_path):
    # under the OS scheduler the first violation of steal is the one between its loads; the
    # default exploration meets another first, whose repair (after steal's CAS, in a condition)
    # is proven too but needs a manual step: the loop does not yet prefer patchable repairs
    document = fix_and_verify(run_pyrsan, tmp_path, HERE / "chase_lev.c", expected_fences=2,
                              headers=(HERE / "chase_lev_deque.h",), extra=("--check", "os"))
    assert sorted((Path(r["file"]).name, r["function"]) for r in document["repairs"]) == [
        ("chase_lev_deque.h", "steal"), ("chase_lev_deque.h", "take")]


@pytest.mark.slow
def test_cpp_program_gets_std_fences(run_pyrsan, tmp_path):
    fix_and_verify(run_pyrsan, tmp_path, CPP / "sb_cpp.cpp", expected_fences=2)
    assert "std::atomic_thread_fence(std::memory_order_seq_cst);" in (tmp_path / "work" / "fix.patch").read_text()


def test_a_robust_program_has_nothing_to_fix(run_pyrsan, tmp_path):
    shutil.copy(LITMUS / "sb_fenced.c", tmp_path / "sb_fenced.c")
    proc, document = _fix(run_pyrsan, tmp_path, "sb_fenced.c")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert document["verdict"] == "clean" and document["repairs"] == []
    assert (tmp_path / "fix.patch").read_text() == ""


def test_too_few_rounds_lists_the_remaining_violations_and_exits_66(run_pyrsan, tmp_path):
    shutil.copy(LITMUS / "sb_relacq.c", tmp_path / "sb_relacq.c")
    proc, document = _fix(run_pyrsan, tmp_path, "sb_relacq.c", "--max-rounds", "1")
    assert proc.returncode == 66, proc.stdout + proc.stderr
    assert document["verdict"] == "not_fixed" and document["remaining"]
    assert "remaining violations:" in proc.stdout and "sb_relacq.c:27" in proc.stdout
    assert not (tmp_path / "fix.patch").exists()


def test_a_patched_program_that_does_not_build_is_an_error(run_pyrsan, tmp_path):
    source = (LITMUS / "sb_relacq.c").read_text().replace(
        "#include <stdio.h>\n",
        "#include <stdio.h>\n/* the program's own macro breaks any fence written in the source */\n"
        "#undef atomic_thread_fence\n#define atomic_thread_fence(order) not a statement\n", 1)
    (tmp_path / "sb.c").write_text(source)
    proc, document = _fix(run_pyrsan, tmp_path, "sb.c")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "the patched program does not build" in proc.stderr
    assert len(proc.stderr.splitlines()[0]) < 200
    assert document["verdict"] == "error"
    assert (tmp_path / "sb.c").read_text() == source


DEADLOCK = """#include <pthread.h>
#include <stdatomic.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static atomic_int x;
static void *t1(void *p) {
  (void)p;
  atomic_store_explicit(&x, 1, memory_order_relaxed);
  pthread_mutex_lock(&a);
  return 0;
}
int main(void) {
  pthread_t u;
  pthread_mutex_lock(&a);
  pthread_create(&u, 0, t1, 0);
  (void)atomic_load_explicit(&x, memory_order_relaxed);
  pthread_join(u, 0);
  return 0;
}
"""


def test_a_program_that_deadlocks_is_not_nothing_to_fix(run_pyrsan, tmp_path):
    (tmp_path / "deadlock.c").write_text(DEADLOCK)
    proc = run_pyrsan("fix", "deadlock.c", cwd=tmp_path)
    assert proc.returncode == 66, proc.stdout + proc.stderr
    assert "nothing to fix" not in proc.stdout + proc.stderr
    assert "deadlocked in run" in proc.stdout + proc.stderr
