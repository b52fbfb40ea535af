"""The site table: frames and inline chains, locations of instructions without !dbg, site
ids, the table of globals, and registration through @llvm.global_ctors."""
from __future__ import annotations

import re
import subprocess

import pytest

from passes_helpers import CC, canonical, compile_to_ir, verify
from pyrsan.passes import Frame, instrument_ir
from pyrsan.abi import primary_frame
from pyrsan.passes.sites import id_prefix_for

INLINE_CHAIN = """#include <stdatomic.h>
_Atomic int x;
static inline __attribute__((always_inline)) int inner(int v) {
  return atomic_fetch_add_explicit(&x, v, memory_order_relaxed);
}
static inline __attribute__((always_inline)) int outer(int v) {
  return inner(v) + 1;
}
int entry(int v) {
  return outer(v);
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_inlined_atomic_has_the_whole_inline_chain_innermost_first(tmp_path, opt):
    r = instrument_ir(compile_to_ir(tmp_path, INLINE_CHAIN, flags=(opt,)), str(tmp_path / "t.c"))
    verify(r.ir_text)
    (site,) = [s for s in r.sites if s.kind == "rmw"]
    path = str(tmp_path / "t.c")
    assert site.frames == (Frame(path, 4, 10, "inner"), Frame(path, 7, 10, "outer"),
                           Frame(path, 10, 10, "entry"))
    assert (site.order, site.size, site.op) == ("relaxed", 4, "add")


def test_site_ids_are_prefix_plus_index_and_the_prefix_is_stable(tmp_path):
    ir = compile_to_ir(tmp_path, INLINE_CHAIN + "void f(void) { atomic_store(&x, 1); "
                       "atomic_thread_fence(memory_order_seq_cst); }\n")
    a = instrument_ir(ir, "/abs/a.c")
    b = instrument_ir(ir, "/abs/b.c")
    prefix = id_prefix_for("/abs/a.c")
    assert prefix & 0xFFFFFFFF == 0 and prefix != 0
    assert prefix == id_prefix_for("/abs/a.c") != id_prefix_for("/abs/b.c")
    assert [s.id for s in a.sites] == [prefix | i for i in range(len(a.sites))]
    assert {s.id >> 32 for s in b.sites} == {id_prefix_for("/abs/b.c") >> 32}
    assert a.ir_text == instrument_ir(ir, "/abs/a.c").ir_text  # deterministic


NO_DBG = """
target triple = "x86_64-pc-linux-gnu"
@x = global i32 0
define void @f(ptr %p) !dbg !10 {
  store atomic i32 1, ptr %p monotonic, align 4
  store atomic i32 2, ptr %p release, align 4, !dbg !11
  %v = load atomic i32, ptr @x acquire, align 4
  ret void, !dbg !11
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "n.c", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!10 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 30, unit: !0, spFlags: DISPFlagDefinition)
!11 = !DILocation(line: 33, column: 5, scope: !10)
"""


def test_instruction_without_dbg_takes_previous_location_else_function_line():
    r = instrument_ir(canonical(NO_DBG), "n")
    verify(r.ir_text)
    assert [s.frames for s in r.sites] == [
        (Frame("/src/n.c", 30, 0, "f"),),     # nothing before it: the DISubprogram line
        (Frame("/src/n.c", 33, 5, "f"),),     # its own !dbg
        (Frame("/src/n.c", 33, 5, "f"),),     # no !dbg: the previous location
    ]


def test_module_without_debug_info_has_sites_without_frames(tmp_path):
    src = tmp_path / "nd.c"
    src.write_text("#include <stdatomic.h>\n_Atomic int x;\nint f(void) { return atomic_load(&x); }\n")
    out = tmp_path / "nd.ll"
    subprocess.run([CC, "-O1", "-S", "-emit-llvm", str(src), "-o", str(out)], check=True)
    r = instrument_ir(canonical(out.read_text()), str(src))
    verify(r.ir_text)
    assert [(s.kind, s.frames) for s in r.sites] == [("load", ())]
    assert re.search(r"\{ i32 0, i32 5, i32 0, i32 4, i32 0, i32 0, ptr null \}", r.ir_text)


def test_existing_global_ctors_is_extended_not_duplicated(tmp_path):
    ir = compile_to_ir(tmp_path, "#include <stdio.h>\n__attribute__((constructor)) static void "
                       "init(void) { puts(\"ctor\"); }\nint main(void) { return 0; }\n")
    assert ir.count("@llvm.global_ctors =") == 1
    r = instrument_ir(ir, "c")
    verify(r.ir_text)
    (line,) = [ln for ln in r.ir_text.split("\n") if ln.startswith("@llvm.global_ctors")]
    assert line.startswith("@llvm.global_ctors = appending global [2 x { i32, ptr, ptr }]")
    assert "{ i32 65535, ptr @init, ptr null }" in line
    assert line.endswith("{ i32, ptr, ptr } { i32 0, ptr @__rsan.module_ctor, ptr null }]")


def test_module_without_global_ctors_gets_one(tmp_path):
    r = instrument_ir(compile_to_ir(tmp_path, INLINE_CHAIN), "m")
    verify(r.ir_text)
    assert r.ir_text.count("@llvm.global_ctors =") == 1
    assert ("@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } "
            "{ i32 0, ptr @__rsan.module_ctor, ptr null }]") in r.ir_text


GLOBALS = """#include <stdatomic.h>
int g;
static _Atomic long counter;
const char *msg = "hello";
struct pair { int a; double b; } st;
int arr[10];
__thread int tls;
extern int ext;
long use(void) { return atomic_fetch_add(&counter, 1) + g + ext + tls + st.a + arr[1] + msg[0]; }
"""


def test_global_table_names_defined_variables_only(tmp_path):
    r = instrument_ir(compile_to_ir(tmp_path, GLOBALS), "g")
    verify(r.ir_text)
    (line,) = [ln for ln in r.ir_text.split("\n") if ln.startswith("@__rsan.globals")]
    names = re.findall(r"\{ ptr (@[\w.]+), i64", line)
    assert sorted(names) == ["@arr", "@counter", "@g", "@msg", "@st"]
    assert "getelementptr (%struct.pair, ptr null, i32 1)" in line
    assert "@tls" not in line and "@ext" not in line and "@.str" not in line


def test_cpp_quoted_and_mangled_names_use_source_names(tmp_path):
    src = ("#include <atomic>\nnamespace ns { std::atomic<int> flag{0}; }\n"
           "template <class T> struct Box { static std::atomic<T> v; };\n"
           "template <class T> std::atomic<T> Box<T>::v;\n"
           "int get() { return Box<int>::v.load(std::memory_order_acquire) + ns::flag.load(); }\n")
    r = instrument_ir(compile_to_ir(tmp_path, src, name="q.cpp"), "q")
    verify(r.ir_text)
    loads = [s for s in r.sites if s.kind == "load"]
    assert {s.order for s in loads} == {"acquire", "seq_cst"}
    # innermost frame is libstdc++'s atomic_base.h, the chain reaches the user's line 5
    assert all(any(f.file.endswith("q.cpp") and f.line == 5 and f.function == "get"
                   for f in s.frames) for s in loads)
    assert any(f.function == "load" for s in loads for f in s.frames)
    strings = re.findall(r'c"([^"]*)\\00"', r.ir_text)
    assert "flag" in strings and "v" in strings


def test_quoted_global_names_from_asm_labels(tmp_path):
    src = ('#include <stdatomic.h>\n_Atomic int q __asm__("my.q:var");\n'
           "int f(void) { return atomic_fetch_add(&q, 1); }\n")
    r = instrument_ir(compile_to_ir(tmp_path, src), "q")
    verify(r.ir_text)
    assert '@__rsan_rmw_4(ptr @"my.q:var", i64 %__rsan.1, i32 1, i32 5,' in r.ir_text
    (line,) = [ln for ln in r.ir_text.split("\n") if ln.startswith("@__rsan.globals")]
    assert line.count('ptr @"my.q:var", i64 ptrtoint (ptr getelementptr (i32, ptr null, i32 1) to i64)') == 1


def test_wide_cpp_atomic_site_names_the_user_line_not_the_library_header(tmp_path):
    src = ("#include <atomic>\nstd::atomic<__int128> a;\n__int128 f() {\n"
           "  return a.load(std::memory_order_acquire);\n}\n")
    r = instrument_ir(compile_to_ir(tmp_path, src, name="i.cpp"), "i")
    frame = primary_frame([s for s in r.sites if s.kind == "load"][0].frames)
    assert (frame.file, frame.line) == (str(tmp_path / "i.cpp"), 4)


def test_local_atomics_with_assignment_tracking_verify_and_keep_their_frames(tmp_path):
    src = ("#include <stdatomic.h>\nvoid use(_Atomic int *);\nint f(void) {\n"
           "  _Atomic int local = 0;\n  atomic_store_explicit(&local, 1, memory_order_relaxed);\n"
           "  use(&local);\n  return atomic_load(&local);\n}\n")
    ir = compile_to_ir(tmp_path, src)
    assert "!DIAssignID" in ir
    r = instrument_ir(ir, "l")
    verify(r.ir_text)
    # the initialisation of the escaping local is a plain write (plain.py)
    assert [(s.kind, s.frames[0].line) for s in r.sites] == [("write", 4), ("store", 5), ("load", 7), ("call", 6)]
