"""Inline asm (issue 14): the passes never abort on it; the asm idioms that are atomics or
fences are modelled as the C11 operation; any other asm touching memory is named in a warning."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from passes.asm import _plan, _constraints

PROGRAMS = Path(__file__).parent / "programs"
CLANG = "clang-22"


@pytest.mark.parametrize("template, constraints, args, action, detail", [
    ("lock; cmpxchgl $2, $1", "={ax},=*m,r,0,*m,~{memory}",
     ["ptr elementtype(i32) @x", "i32 1", "i32 0", "ptr elementtype(i32) @x"], "cas", "4 bytes"),
    ("lock xaddl $0, ($1)", "=r,r,0,~{memory}", ["ptr nonnull @x", "i32 2"], "rmw", "xaddl"),
    ("xchgq $0, $1", "=r,=*m,0,*m,~{memory}",
     ["ptr elementtype(i64) @y", "i64 3", "ptr elementtype(i64) @y"], "rmw", "8 bytes"),
    ("lock cmpxchg16b $1\n\tsetz $0", "=q,=*m,={ax},={dx},{bx},{cx},*m,2,3,~{memory}",
     ["ptr elementtype(%struct.pair) @P", "ptr null", "i64 1", "ptr elementtype(%struct.pair) @P",
      "ptr null", "i64 0"], "cas", "16 bytes"),
    ("mfence", "~{memory}", [], "fence", "seq_cst"),
    ("lfence", "~{memory}", [], "fence", "acquire"),
    ("sfence", "~{memory}", [], "fence", "release"),
    ("dmb ish", "~{memory}", [], "fence", "seq_cst"),
    ("dmb ishld", "~{memory}", [], "fence", "acquire"),
    ("lock; addl $$0,(%rsp)", "~{memory},~{cc}", [], "fence", "seq_cst"),
    ("", "~{memory}", [], "barrier", ""),
    ("pause", "~{dirflag},~{fpsr},~{flags}", [], "none", ""),
    ("rep; nop", "", [], "none", ""),
    ("movl $1, $0", "=*m,r", ["ptr elementtype(i32) @x", "i32 5"], "store", "release (4 bytes)"),
    ("movq $1, $0", "=q,*m,~{memory}", ["ptr elementtype(i64) @x"], "load", "acquire (8 bytes)"),
    ("movl $1, $0\n\tmovl $1, $0", "=*m,r", ["ptr elementtype(i32) @x", "i32 5"], "warning", "accesses memory"),
    ("pause", "~{memory}", [], "barrier", ""),
    ("wbinvd", "~{memory}", [], "warning", "clobber"),
    ("1: lock btsl $$0, $0\n\tjc 1b", "=*m,*m,~{memory}",
     ["ptr elementtype(i32) @x", "ptr elementtype(i32) @x"], "warning", "branch"),
    ("ldaxr w0, [$1]", "=&r,r,~{memory}", ["ptr @x"], "warning", "exclusive"),
])
def test_asm_idioms_are_classified(template, constraints, args, action, detail):
    plan = _plan(template, _constraints(constraints), args)
    assert plan.action == action
    assert detail in plan.detail


def test_asm_operand_pointer_is_the_memory_argument():
    plan = _plan("lock; incl $0", _constraints("=*m,*m,~{memory}"),
                 ["ptr nonnull elementtype(i32) getelementptr inbounds (i8, ptr @a, i64 8)",
                  "ptr nonnull elementtype(i32) getelementptr inbounds (i8, ptr @a, i64 8)"])
    assert plan.action == "rmw" and plan.op == "add" and plan.size == 4
    assert plan.ptr == "ptr getelementptr inbounds (i8, ptr @a, i64 8)"


def _passes(tmp_path, source: Path, *flags: str) -> subprocess.CompletedProcess:
    bc = tmp_path / "in.bc"
    subprocess.run([CLANG, "-g", "-O1", *flags, "-c", "-emit-llvm", str(source), "-o", str(bc)], check=True)
    return subprocess.run([sys.executable, "-m", "pyrsan.passes", str(bc), "-o", str(tmp_path / "out.o"),
                           "--module-id", "m", "--list-notes"], capture_output=True, text=True, check=False)


def test_passes_do_not_abort_on_inline_asm(tmp_path):
    """`pause` made LLVM abort the passes (no asm parser for the object streamer)."""
    proc = _passes(tmp_path, PROGRAMS / "asm_tas_lock.c")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out.o").stat().st_size > 0
    assert "note: inline asm at asm_tas_lock.c:7" in proc.stdout


def test_asm_tas_lock_protects_its_data(tmp_path, run_pyrsan):
    """An xchg-in-asm lock: the acquisition is modelled, so the plain counter is no race."""
    proc = run_pyrsan("run", "-v", "--sched", "random", "--runs", "3",
                      PROGRAMS / "asm_tas_lock.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "modelled as atomic xchgl seq_cst" in proc.stderr
    assert "data race" not in proc.stderr


@pytest.mark.parametrize("flag", ["", "-DSTACK_BARRIER"])
def test_asm_full_barrier_makes_store_buffering_robust(tmp_path, run_pyrsan, flag):
    args = ["run", "--sched", "random", "--seed", "1", "--runs", "20"] + ([flag] if flag else [])
    proc = run_pyrsan(*args, PROGRAMS / "asm_sb_mfence.c", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_store_buffering_without_the_asm_barrier_is_reported(tmp_path, run_pyrsan):
    proc = run_pyrsan("run", "--sched", "random", "--seed", "1", "--runs", "20", "-DNO_BARRIER",
                      PROGRAMS / "asm_sb_mfence.c", cwd=tmp_path)
    assert proc.returncode == 66, proc.stderr


def test_unmodelled_asm_gets_a_warning_naming_the_line(tmp_path, run_pyrsan):
    src = tmp_path / "st.c"
    src.write_text("#include <stdatomic.h>\nint x;\n"
                   "static void st(int *p, int v) {"
                   " __asm__ volatile(\"movl %1, %0; movl %1, %0\" : \"=m\"(*p) : \"r\"(v)); }\n"
                   "int main(void) { st(&x, 1); return 0; }\n")
    proc = run_pyrsan("run", src, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "pyrsan: warning: inline asm at st.c:3" in proc.stderr
    assert "not modelled" in proc.stderr


def test_invalid_inline_asm_is_a_build_error_not_a_pyrsan_bug(tmp_path, run_pyrsan):
    src = tmp_path / "bogus.c"
    src.write_text('int main(void) { __asm__ volatile("bogusinsn %%eax" ::: "memory"); return 0; }\n')
    proc = run_pyrsan("run", src, cwd=tmp_path)
    assert proc.returncode == 2
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"pyrsan: compilation of {src} failed: invalid inline assembly")
    assert "pyrsan bug" not in proc.stderr


from hypothesis import given, settings, strategies as st  # noqa: E402

_TOKENS = st.sampled_from(["lock", ";", "\n", "cmpxchgl", "xchg", "xaddq", "mov", "movl", "mfence", "$0", "$1",
                           "${2:q}", "(", ")", "(%rsp)", ",", " ", "1:", "jne 1b", "$$0", "#", "dmb ish",
                           "ldxr", "[", "]", "incl", "cmpxchg16b"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKENS, max_size=12), st.lists(st.sampled_from(["=r", "=*m", "*m", "r", "0", "~{memory}", "=&r",
                                                                   "={ax}", "m", "i"]), max_size=6),
       st.lists(st.sampled_from(["ptr @x", "i32 1", "ptr elementtype(i32) %p", "ptr", "i128 3", ""]), max_size=6))
def test_asm_classification_never_raises(tokens, constraints, args):
    """Any template, constraint list and argument list: a plan, never an exception (a crash of
    the passes on any input is a bug)."""
    plan = _plan("".join(tokens), constraints, args)
    assert plan.action in ("rmw", "cas", "load", "store", "fence", "none", "barrier", "warning")
