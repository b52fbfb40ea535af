"""The plain-access pass (plain.py, escape.py, layout.py) on tiny hand-written IR and on
clang's output at -O0 and -O1: which accesses get which hook, and which are skipped."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import pytest

import test_passes_rewrite as rewrite
from passes_helpers import CC, CXX, HERE, canonical, compile_to_ir, verify
from pyrsan.passes.debuginfo import DebugInfo
from pyrsan.passes.layout import TypeLayout
from pyrsan.passes import UnsupportedIRError, emit_object, instrument_ir

DECLS = """%struct.S = type { i64, i32, [5 x i8] }
%struct.P = type <{ i8, i32 }>
@c = constant [4 x i32] [i32 1, i32 2, i32 3, i32 4]
@s = global %struct.S zeroinitializer
@v = global <4 x i32> zeroinitializer
@__rsan_private = global i32 0
declare void @use(ptr)
declare void @llvm.lifetime.start.p0(ptr)
declare void @llvm.lifetime.end.p0(ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memcpy.p0.p0.i32(ptr, ptr, i32, i1)
declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.inline.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.inline.p0.i64(ptr, i8, i64, i1)
declare ptr @memcpy(ptr, ptr, i64)
declare ptr @memset(ptr, i32, i64)
declare void @bzero(ptr, i64)
declare i32 @memcmp(ptr, ptr, i64)
declare i64 @strlen(ptr)
declare ptr @strcpy(ptr, ptr)
declare ptr @strncpy(ptr, ptr, i64)
declare i32 @strcmp(ptr, ptr)
declare i32 @strncmp(ptr, ptr, i64)
declare ptr @__memcpy_chk(ptr, ptr, i64, i64)
declare ptr @__strncpy_chk(ptr, ptr, i64, i64)
"""


def run(body: str, **kwargs):
    return rewrite.instrument(body, DECLS, **kwargs)


def hooks(result, name: str = "f") -> list[str]:
    """The plain-access hook calls of function `name`, without their site ids."""
    return [re.sub(r", i64 -?\d+\)(, !dbg !\d+)?$", ")", ln.replace("notail call void ", ""))
            for ln in rewrite.body_of(result.ir_text, name) if re.search(r"@__rsan_(read|write)_", ln)]


def lines_of(result, name: str = "f") -> list[str]:
    return rewrite.body_of(result.ir_text, name)


@pytest.mark.parametrize("ty,size", [
    ("i8", 1), ("i1", 1), ("i16", 2), ("half", 2), ("i32", 4), ("float", 4), ("i64", 8),
    ("double", 8), ("ptr", 8), ("<2 x i32>", 8), ("i128", 16), ("<4 x i32>", 16),
    ("fp128", 16), ("{ i8, i64 }", 16), ("<8 x i16>", 16),
])
def test_load_and_store_of_a_hook_size_call_the_fixed_size_hooks_before_the_access(ty, size):
    r = run("define void @f(ptr %%p, ptr %%d, %s %%a) {\n  %%v = load %s, ptr %%p, align 1\n"
            "  store %s %%a, ptr %%d, align 1\n  ret void\n}" % (ty, ty, ty))
    body = lines_of(r)
    assert hooks(r) == ["@__rsan_read_%d(ptr %%p)" % size, "@__rsan_write_%d(ptr %%d)" % size]
    assert body[0].startswith("notail call void @__rsan_read_%d(" % size)
    assert body[1].startswith("%v = load ")               # the access itself is kept, after
    assert [(s.kind, s.size, s.order) for s in r.sites] == [("read", size, ""), ("write", size, "")]


@pytest.mark.parametrize("ty,size", [
    ("x86_fp80", 10), ("<3 x float>", 12), ("i24", 3), ("[3 x i16]", 6), ("%struct.S", 24),
    ("%struct.P", 5), ("[2 x %struct.S]", 48), ("{ i32, i8 }", 8), ("i256", 32),
])
def test_other_sizes_from_the_data_layout_use_the_range_hooks(ty, size):
    r = run("define void @f(ptr %%p, ptr %%d) {\n  %%v = load %s, ptr %%p, align 1\n"
            "  store %s %%v, ptr %%d, align 1\n  ret void\n}" % (ty, ty))
    if size in (1, 2, 4, 8, 16):
        assert hooks(r) == ["@__rsan_read_%d(ptr %%p)" % size, "@__rsan_write_%d(ptr %%d)" % size]
    else:
        assert hooks(r) == ["@__rsan_read_range(ptr %%p, i64 %d)" % size,
                            "@__rsan_write_range(ptr %%d, i64 %d)" % size]
    assert [s.size for s in r.sites] == [size, size]


def test_store_value_and_constant_expression_pointer_are_kept_intact():
    r = run("define void @f() {\n  store i64 ptrtoint (ptr @x to i64), ptr getelementptr inbounds "
            "(i8, ptr @b, i64 8), align 8\n  ret void\n}")
    assert hooks(r) == ["@__rsan_write_8(ptr getelementptr inbounds (i8, ptr @b, i64 8))"]
    assert lines_of(r)[1] == ("store i64 ptrtoint (ptr @x to i64), "
                              "ptr getelementptr inbounds (i8, ptr @b, i64 8), align 8")


def test_volatile_is_plain_and_atomic_is_not():
    r = run("define i32 @f(ptr %p) {\n  %a = load volatile i32, ptr %p, align 4\n"
            "  %b = load atomic i32, ptr %p acquire, align 4\n  store volatile i32 %a, ptr @x, align 4\n"
            "  ret i32 %b\n}")
    assert hooks(r) == ["@__rsan_read_4(ptr %p)", "@__rsan_write_4(ptr @x)"]
    assert [s.kind for s in r.sites] == ["read", "write", "load"]


def scheduler_calls(result, name: str = "f") -> list[str]:
    return [re.sub(r"^\s*call void |, !dbg !\d+$", "", ln) for ln in lines_of(result, name)
            if "@__rsan_volatile_" in ln]


def test_volatile_loads_in_loops_and_volatile_stores_are_shown_to_the_scheduler():
    """docs/scheduling.md "Volatile spin loops": a volatile load on a cycle of the CFG passes
    its value (zero-extended, or ptrtoint) to the scheduler; a volatile load outside every
    loop, a plain load in a loop and a private slot do not; every volatile store does."""
    r = run("define void @f(ptr %p, ptr %q) {\n  %once = load volatile i8, ptr %p, align 1\n"
            "  %slot = alloca i32, align 4\n  store volatile i32 0, ptr %slot, align 4\n  br label %spin\n"
            "spin:\n  %a = load volatile i32, ptr %p, align 4\n  %b = load volatile ptr, ptr %q, align 8\n"
            "  %c = load volatile i64, ptr %q, align 8\n  %d = load i32, ptr %q, align 4\n"
            "  %e = load volatile i32, ptr %slot, align 4\n  %z = icmp eq i32 %a, 0\n"
            "  br i1 %z, label %spin, label %out\nout:\n  store volatile i32 1, ptr %q, align 4\n  ret void\n}")
    calls = scheduler_calls(r)
    assert len(calls) == 4, calls
    assert re.fullmatch(r"@__rsan_volatile_load\(ptr %p, i64 %__rsan\.\d+\)", calls[0])
    assert re.fullmatch(r"@__rsan_volatile_load\(ptr %q, i64 %__rsan\.\d+\)", calls[1])
    assert calls[2:] == ["@__rsan_volatile_load(ptr %q, i64 %c)", "@__rsan_volatile_store(ptr %q)"]
    body = "\n".join(lines_of(r))
    assert re.search(r"= zext i32 %a to i64", body) and re.search(r"= ptrtoint ptr %b to i64", body)
    verify(r.ir_text)


def test_volatile_loads_in_a_loop_of_several_blocks_count_and_a_loop_free_function_has_none():
    loop = run("define void @f(ptr %p) {\n  br label %head\nhead:\n  %a = load volatile i32, ptr %p, align 4\n"
               "  %z = icmp eq i32 %a, 0\n  br i1 %z, label %body, label %out\nbody:\n  br label %head\n"
               "out:\n  ret void\n}")
    assert scheduler_calls(loop) and scheduler_calls(loop)[0].startswith("@__rsan_volatile_load(ptr %p")
    straight = run("define void @f(ptr %p) {\n  %a = load volatile i32, ptr %p, align 4\n"
                   "  %z = icmp eq i32 %a, 0\n  br i1 %z, label %x, label %out\nx:\n  br label %out\n"
                   "out:\n  ret void\n}")
    assert scheduler_calls(straight) == []
    helper = run("define internal i32 @f(ptr %p) {\n  %a = load volatile i32, ptr %p, align 4\n  ret i32 %a\n}")
    assert len(scheduler_calls(helper)) == 1   # inlined into its caller's loop later


def test_reads_without_a_hook_pointer_are_skipped():
    r = run("define void @f(ptr addrspace(256) %g) {\n  %a = load i32, ptr addrspace(256) %g, align 4\n"
            "  %b = load i32, ptr @c, align 4\n  %p = getelementptr inbounds [4 x i32], ptr @c, i64 0, i64 1\n"
            "  %d = load i32, ptr %p, align 4\n  %e = load i32, ptr getelementptr (i8, ptr @c, i64 4), align 4\n"
            "  %h = load i32, ptr @__rsan_private, align 4\n  %n = load i32, ptr null, align 4\n"
            "  ret void\n}")
    assert hooks(r) == [] and r.sites == ()


# --- the escape check -----------------------------------------------------------------

PRIVATE_USES = """define i32 @f(i64 %i) {
  %a = alloca [4 x i32], align 16
  %s = alloca i32, align 4
  call void @llvm.lifetime.start.p0(ptr %a)
  %g = getelementptr inbounds [4 x i32], ptr %a, i64 0, i64 %i
  %h = getelementptr inbounds i8, ptr %g, i64 4
  store i32 1, ptr %g, align 4
  %v = load i32, ptr %h, align 4
  store atomic i32 %v, ptr %s release, align 4
  %w = load i32, ptr %s, align 4
  call void @llvm.memcpy.p0.p0.i64(ptr %a, ptr @x, i64 4, i1 false)
  call void @llvm.lifetime.end.p0(ptr %a)
  ret i32 %w
}"""


def test_stack_slots_used_only_through_loads_stores_geps_and_lifetime_are_private():
    r = run(PRIVATE_USES)
    # only the shared side of the memcpy remains
    assert hooks(r) == ["@__rsan_read_range(ptr @x, i64 4)"]


@pytest.mark.parametrize("escape", [
    "call void @use(ptr %a)",                          # passed to a call
    "call void @use(ptr %h)",                          # a derived pointer passed to a call
    "store ptr %a, ptr @q, align 8",                   # stored as a value
    "store ptr %g, ptr %s, align 8",                   # stored, even into another slot
    "%t = ptrtoint ptr %a to i64",
    "%t = select i1 true, ptr %a, ptr @x",
    "%t = icmp eq ptr %h, null",
    "%t = atomicrmw xchg ptr @q, ptr %a seq_cst, align 8",
])
def test_any_other_use_lets_the_slot_escape_and_its_accesses_are_instrumented(escape):
    body = PRIVATE_USES.replace("  ret i32 %w", "  %s\n  ret i32 %%w" % escape)
    r = run(body)
    assert "@__rsan_write_4(ptr %g)" in hooks(r) and "@__rsan_read_4(ptr %h)" in hooks(r)
    assert "@__rsan_write_range(ptr %a, i64 4)" in hooks(r)
    # the other slot stays private, even when an address is stored into it
    assert "@__rsan_read_4(ptr %s)" not in hooks(r)


def test_a_returned_or_phi_merged_slot_escapes():
    r = run("define ptr @f(i1 %c) {\nentry:\n  %a = alloca i32, align 4\n  store i32 1, ptr %a, align 4\n"
            "  br i1 %c, label %x, label %y\nx:\n  br label %y\ny:\n"
            "  %p = phi ptr [ %a, %entry ], [ @x, %x ]\n  ret ptr %p\n}")
    assert hooks(r) == ["@__rsan_write_4(ptr %a)"]
    r = run("define ptr @f() {\n  %a = alloca i32, align 4\n  store i32 1, ptr %a, align 4\n  ret ptr %a\n}")
    assert hooks(r) == ["@__rsan_write_4(ptr %a)"]


def test_debug_records_do_not_make_a_slot_escape(tmp_path):
    ir = compile_to_ir(tmp_path, "int f(int n) { int k = n; int a[4] = {n, 2, 3, 4};\n"
                                 "  return a[n & 3] + k; }\n", flags=("-O0",))
    assert "#dbg_declare(ptr %" in ir
    r = instrument_ir(ir, "m")
    verify(r.ir_text)
    assert r.sites == ()


# --- clang's output ----------------------------------------------------------------------

C_SOURCE = """#include <pthread.h>
#include <string.h>
struct rec { long a; int b; char tag[12]; };
struct rec shared_rec, other_rec;
int counter;
static const int table[4] = {1, 2, 3, 4};
static void *worker(void *arg) { int *p = arg; *p += 1; return 0; }
int f(int i) {
  int on_stack = i;                 /* handed to another thread: escapes */
  int scratch[8];                   /* private */
  for (int k = 0; k < 8; k++) scratch[k] = k * i;
  pthread_t t;
  pthread_create(&t, 0, worker, &on_stack);
  pthread_join(t, 0);
  counter += scratch[i & 7] + table[i & 3];
  other_rec = shared_rec;
  memset(&shared_rec, 0, sizeof shared_rec);
  return on_stack;
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
def test_clang_output_instruments_shared_accesses_and_skips_private_ones(tmp_path, opt):
    r = instrument_ir(compile_to_ir(tmp_path, C_SOURCE, flags=(opt,)), "/src/t.c")
    verify(r.ir_text)
    calls = [ln for ln in r.ir_text.splitlines() if re.search(r"@__rsan_(read|write)_\w+\(", ln)
             and not ln.startswith("declare")]
    text = "\n".join(calls)
    assert re.search(r"@__rsan_write_4\(ptr @counter,", text)
    assert re.search(r"@__rsan_read_range\(ptr @shared_rec, i64 24,", text)
    assert re.search(r"@__rsan_write_range\(ptr @other_rec, i64 24,", text)
    assert re.search(r"@__rsan_write_range\(ptr @shared_rec, i64 24,", text)
    assert "@table" not in text                       # constant
    assert not re.search(r"@counter", text.replace("__rsan_write_4(ptr @counter", ""))  # += : one hook
    lines = {s.frames[0].line for s in r.sites if s.kind in ("read", "write")}
    # the escaping local: its accesses in f (lines 9, 17) and in worker (line 7) are there
    assert {7, 15, 16, 17}.issubset(lines), lines
    assert 11 not in lines                            # the private array's stores
    if opt == "-O0":
        assert 9 in lines                             # `int on_stack = i` before it escapes


def test_cpp_output_verifies_and_keeps_frames(tmp_path):
    src = ("#include <string>\n#include <vector>\nstd::vector<std::string> v;\n"
           "void add(const char *s) { v.push_back(s); }\nsize_t len() { return v.empty() ? 0 : v[0].size(); }\n")
    for opt in ("-O0", "-O1"):
        r = instrument_ir(compile_to_ir(tmp_path, src, name="t%s.cpp" % opt, flags=(opt,)), "m")
        verify(r.ir_text)
        plain = [s for s in r.sites if s.kind in ("read", "write")]
        assert plain and all(s.frames for s in plain)
        if opt == "-O1":   # inlined from libstdc++: the user's line is in the inline chain
            assert any(f.file.endswith("t-O1.cpp") and f.line == 5 for s in plain for f in s.frames)
        else:              # libstdc++'s own functions, where the accesses are at -O0
            assert any(s.frames[0].function == "empty" and s.frames[0].file.endswith("stl_vector.h")
                       for s in plain)


# --- memory intrinsics and libc --------------------------------------------------------------

@pytest.mark.parametrize("call,expect,size", [
    ("call void @llvm.memcpy.p0.p0.i64(ptr align 4 %d, ptr align 4 %s, i64 %n, i1 false)",
     ["@__rsan_read_range(ptr %s, i64 %n)", "@__rsan_write_range(ptr %d, i64 %n)"], 0),
    ("call void @llvm.memmove.p0.p0.i64(ptr %d, ptr %s, i64 7, i1 false)",
     ["@__rsan_read_range(ptr %s, i64 7)", "@__rsan_write_range(ptr %d, i64 7)"], 7),
    ("call void @llvm.memcpy.inline.p0.p0.i64(ptr %d, ptr %s, i64 16, i1 false)",
     ["@__rsan_read_range(ptr %s, i64 16)", "@__rsan_write_range(ptr %d, i64 16)"], 16),
    ("call void @llvm.memset.p0.i64(ptr noundef nonnull align 8 dereferenceable(40) %d, i8 0, i64 40, i1 false)",
     ["@__rsan_write_range(ptr %d, i64 40)"], 40),
    ("call void @llvm.memset.inline.p0.i64(ptr %d, i8 1, i64 %n, i1 false)",
     ["@__rsan_write_range(ptr %d, i64 %n)"], 0),
    ("%r = call ptr @memcpy(ptr noundef %d, ptr noundef %s, i64 noundef %n)",
     ["@__rsan_read_range(ptr %s, i64 %n)", "@__rsan_write_range(ptr %d, i64 %n)"], 0),
    ("%r = call ptr @memset(ptr %d, i32 0, i64 9)", ["@__rsan_write_range(ptr %d, i64 9)"], 9),
    ("call void @bzero(ptr %d, i64 %n)", ["@__rsan_write_range(ptr %d, i64 %n)"], 0),
    ("%r = call ptr @__memcpy_chk(ptr %d, ptr %s, i64 12, i64 %n)",
     ["@__rsan_read_range(ptr %s, i64 12)", "@__rsan_write_range(ptr %d, i64 12)"], 12),
    ("call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %s, i64 0, i1 false)", [], 0),
])
def test_memory_intrinsics_and_libc_calls_become_range_hooks_before_the_call(call, expect, size):
    r = run("define void @f(ptr %%d, ptr %%s, i64 %%n) {\n  %s\n  ret void\n}" % call)
    assert hooks(r) == expect
    body = lines_of(r)
    callee = re.search(r"@[\w.]+\(", call).group(0)
    assert all(body.index(next(ln for ln in body if h[:-1] in ln)) < body.index(
        next(ln for ln in body if callee in ln and "__rsan" not in ln)) for h in expect)
    # a range site records its length when it is a constant
    assert [(s.kind, s.size) for s in r.sites if s.kind != "call"] == [
        ("read" if "read" in h else "write", size) for h in expect]


def test_a_32_bit_length_is_zero_extended():
    r = run("define void @f(ptr %d, ptr %s, i32 %n) {\n"
            "  call void @llvm.memcpy.p0.p0.i32(ptr %d, ptr %s, i32 %n, i1 false)\n  ret void\n}")
    body = lines_of(r)
    assert body[0] == "%__rsan.1 = zext i32 %n to i64"
    assert hooks(r) == ["@__rsan_read_range(ptr %s, i64 %__rsan.1)",
                        "@__rsan_write_range(ptr %d, i64 %__rsan.1)"]


def test_the_private_side_of_a_copy_is_skipped():
    r = run("define void @f(ptr %d) {\n  %a = alloca [8 x i8], align 1\n"
            "  call void @llvm.memcpy.p0.p0.i64(ptr %a, ptr %d, i64 8, i1 false)\n"
            "  call void @llvm.memcpy.p0.p0.i64(ptr %d, ptr %a, i64 8, i1 false)\n  ret void\n}")
    assert hooks(r) == ["@__rsan_read_range(ptr %d, i64 8)", "@__rsan_write_range(ptr %d, i64 8)"]


@pytest.mark.parametrize("call,extent,expect", [
    ("%r = call i64 @strlen(ptr %s)", "ptr %s, ptr %s, i64 -1, i1 true",
     ["@__rsan_read_range(ptr %s, i64 %__rsan.1)"]),
    ("%r = call ptr @strcpy(ptr %d, ptr %s)", "ptr %s, ptr %s, i64 -1, i1 true",
     ["@__rsan_read_range(ptr %s, i64 %__rsan.1)", "@__rsan_write_range(ptr %d, i64 %__rsan.1)"]),
    ("%r = call ptr @strncpy(ptr %d, ptr %s, i64 %n)", "ptr %s, ptr %s, i64 %n, i1 true",
     ["@__rsan_read_range(ptr %s, i64 %__rsan.1)", "@__rsan_write_range(ptr %d, i64 %n)"]),
    ("%r = call ptr @__strncpy_chk(ptr %d, ptr %s, i64 %n, i64 64)", "ptr %s, ptr %s, i64 %n, i1 true",
     ["@__rsan_read_range(ptr %s, i64 %__rsan.1)", "@__rsan_write_range(ptr %d, i64 %n)"]),
    ("%r = call i32 @strcmp(ptr %d, ptr %s)", "ptr %d, ptr %s, i64 -1, i1 true",
     ["@__rsan_read_range(ptr %d, i64 %__rsan.1)", "@__rsan_read_range(ptr %s, i64 %__rsan.1)"]),
    ("%r = call i32 @strncmp(ptr %d, ptr %s, i64 %n)", "ptr %d, ptr %s, i64 %n, i1 true",
     ["@__rsan_read_range(ptr %d, i64 %__rsan.1)", "@__rsan_read_range(ptr %s, i64 %__rsan.1)"]),
    # memcmp stops at the first difference too (not at a NUL): the bytes it really compares
    ("%r = call i32 @memcmp(ptr %d, ptr %s, i64 %n)", "ptr %d, ptr %s, i64 %n, i1 false",
     ["@__rsan_read_range(ptr %d, i64 %__rsan.1)", "@__rsan_read_range(ptr %s, i64 %__rsan.1)"]),
])
def test_comparisons_and_string_functions_measure_what_they_touch_before_the_call(call, extent, expect):
    r = run("define void @f(ptr %%d, ptr %%s, i64 %%n) {\n  %s\n  %s\n  ret void\n}"
            % (call, call.replace("%r", "%r2")))
    body = lines_of(r)
    assert body[0] == "%%__rsan.1 = call i64 @__rsan_string_extent(%s)" % extent
    assert hooks(r)[:len(expect)] == expect
    assert r.ir_text.count("define internal i64 @__rsan_string_extent(") == 1


def test_string_extent_helper_counts_up_to_the_first_difference_or_nul(tmp_path):
    """Run the helper the pass emits on real strings (the pass output, linked with a driver)."""
    r = run("define i64 @f(ptr %a, ptr %b, i64 %n) {\n  %r = call i32 @strncmp(ptr %a, ptr %b, i64 %n)\n"
            "  ret i64 0\n}")
    ir = r.ir_text.replace("define internal i64 @__rsan_string_extent", "define i64 @__rsan_string_extent")
    ll = tmp_path / "x.ll"
    ll.write_text(ir)
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include <stdint.h>\n'
                    'uint64_t __rsan_string_extent(const char *, const char *, uint64_t, _Bool);\n'
                    'int main(void) { printf("%llu %llu %llu %llu %llu %llu %llu\\n",\n'
                    '  (unsigned long long)__rsan_string_extent("hello", "hello", -1, 1),\n'
                    '  (unsigned long long)__rsan_string_extent("hello", "help", -1, 1),\n'
                    '  (unsigned long long)__rsan_string_extent("hello", "hello", 3, 1),\n'
                    '  (unsigned long long)__rsan_string_extent("", "x", -1, 1),\n'
                    '  (unsigned long long)__rsan_string_extent("ab", "ab", 0, 1),\n'
                    '  (unsigned long long)__rsan_string_extent("a\\0bc", "a\\0bd", 4, 0),\n'
                    '  (unsigned long long)__rsan_string_extent("a\\0bc", "a\\0bc", 4, 0)); return 0; }\n')
    obj = tmp_path / "x.o"
    # the rest of the module needs the hooks f calls: no-ops
    stubs = tmp_path / "stubs.c"
    stubs.write_text("#include <stdint.h>\nvoid __rsan_register_module(const void *m) { (void)m; }\n"
                     "void __rsan_read_range(void *p, uint64_t n, uint64_t s) { (void)p; (void)n; (void)s; }\n"
                     "void __rsan_func_entry(uint64_t s) { (void)s; }\nvoid __rsan_func_exit(void) {}\n")
    emit_object(ir, str(obj))
    exe = tmp_path / "x"
    subprocess.run([CC, str(main), str(obj), str(stubs), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out == "6 4 3 1 0 4 4\n"


# --- reads covered by a write --------------------------------------------------------------

def test_a_read_followed_by_a_write_of_the_same_location_keeps_only_the_write():
    r = run("define void @f(ptr %p) {\n  %v = load i32, ptr %p, align 4\n  %w = add i32 %v, 1\n"
            "  store i32 %w, ptr %p, align 4\n  ret void\n}")
    assert hooks(r) == ["@__rsan_write_4(ptr %p)"]


@pytest.mark.parametrize("between", [
    "call void @use(ptr null)",                                    # a call
    "fence acquire",                                               # synchronisation
    "%z = load atomic i32, ptr @x acquire, align 4",
    "br label %next\nnext:",                                       # another block
])
def test_a_call_atomic_fence_or_block_boundary_keeps_the_read(between):
    r = run("define void @f(ptr %%p) {\n  %%v = load i32, ptr %%p, align 4\n  %s\n"
            "  store i32 %%v, ptr %%p, align 4\n  ret void\n}" % between)
    assert hooks(r) == ["@__rsan_read_4(ptr %p)", "@__rsan_write_4(ptr %p)"]


def test_a_smaller_write_or_another_pointer_keeps_the_read():
    r = run("define void @f(ptr %p, ptr %q) {\n  %v = load i64, ptr %p, align 8\n"
            "  %t = trunc i64 %v to i32\n  store i32 %t, ptr %p, align 4\n  %u = load i32, ptr %q, align 4\n"
            "  store i32 %u, ptr %p, align 4\n  ret void\n}")
    assert hooks(r) == ["@__rsan_read_8(ptr %p)", "@__rsan_write_4(ptr %p)",
                        "@__rsan_read_4(ptr %q)", "@__rsan_write_4(ptr %p)"]


# --- sites, options, errors ----------------------------------------------------------------

def test_plain_sites_carry_kind_size_and_source_frames():
    r = run("define void @f(ptr %p) !dbg !10 {\n  %v = load i16, ptr %p, align 2, !dbg !11\n"
            "  store i16 %v, ptr @x, align 2, !dbg !12\n  ret void\n}", debug=True)
    assert [(s.kind, s.size, s.order, s.frames[0].line, s.frames[0].column, s.frames[0].function,
             s.frames[0].file) for s in r.sites] == [
        ("read", 2, "", 4, 7, "f", "/src/t.c"), ("write", 2, "", 5, 9, "f", "/src/t.c")]
    body = lines_of(r)   # each hook carries the !dbg of its access
    dbg = [re.search(r"!dbg (!\d+)", ln).group(1) for ln in body[:4]]
    assert dbg[0] == dbg[1] and dbg[2] == dbg[3] and dbg[0] != dbg[2]


def test_plain_accesses_off_leaves_loads_and_stores_alone():
    body = "define void @f(ptr %p) {\n  %v = load i32, ptr %p, align 4\n  store i32 %v, ptr @x, align 4\n  ret void\n}"
    r = rewrite.instrument_ir(rewrite.canonical(rewrite.HEADER + DECLS + body), "m", plain_accesses=False)
    assert r.sites == () and "__rsan_read" not in r.ir_text and "__rsan_write" not in r.ir_text


def test_an_access_of_unknown_size_is_a_one_line_error_naming_the_line():
    body = ("define void @f(ptr %p) !dbg !10 {\n  %v = load <vscale x 4 x i32>, ptr %p, align 16, !dbg !11\n"
            "  ret void\n}")
    with pytest.raises(UnsupportedIRError) as e:
        run(body, debug=True)
    assert str(e.value) == "unsupported load of type <vscale x 4 x i32> at /src/t.c:4"


def test_cli_no_plain_accesses_flag(tmp_path, cli_env):
    src = tmp_path / "k.c"
    src.write_text("int x;\nvoid f(void) { x = 1; }\n")
    bc = tmp_path / "k.bc"
    subprocess.run([CC, "-g", "-O1", "-c", "-emit-llvm", str(src), "-o", str(bc)], check=True)
    for flag, want in (((), True), (("--no-plain-accesses",), False)):
        ll = tmp_path / "k.ll"
        p = subprocess.run([sys.executable, "-m", "pyrsan.passes", str(bc), "-o", str(tmp_path / "k.o"),
                            "--module-id", "k", "--emit-ll", str(ll), *flag], env=cli_env,
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert ("@__rsan_write_4(ptr @x," in ll.read_text()) == want


# --- ThreadSanitizer's instrumentation as the oracle -------------------------------------------

_TSAN_HOOK_RE = re.compile(r"@__tsan_(?:(?:unaligned_)?(?:read|write)\d+|memcpy|memmove|memset)\(.*!dbg (!\d+)")


def _tsan_hooked_lines(tmp_path, source: Path, opt: str) -> set[tuple[str, int]]:
    """(function, line) of every plain access clang's ThreadSanitizer pass instruments."""
    compiler = CXX if source.suffix == ".cpp" else CC
    out = tmp_path / (source.stem + ".tsan.ll")
    proc = subprocess.run([compiler, opt, "-g", "-fsanitize=thread", "-S", "-emit-llvm",
                           str(source), "-o", str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("clang cannot compile with -fsanitize=thread: " + proc.stderr.strip()[-200:])
    text = canonical(out.read_text())
    debug = DebugInfo([ln for ln in text.split("\n") if ln.startswith("!")])
    found = set()
    for m in _TSAN_HOOK_RE.finditer(text):
        frames = debug.frames(m.group(1))
        found.add((frames[-1].function, frames[0].line))
    return found


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
@pytest.mark.parametrize("name", ["plain_accesses.c", "plain_threads.c", "t.c"])
def test_every_access_thread_sanitizer_instruments_is_instrumented(tmp_path, opt, name):
    source = HERE / "data" / name
    if name == "t.c":
        source = tmp_path / name
        source.write_text(C_SOURCE)
    tsan = _tsan_hooked_lines(tmp_path, source, opt)
    ir = compile_to_ir(tmp_path, source.read_text(), name="u_" + name, flags=(opt,))
    ours = {(s.frames[-1].function, s.frames[0].line)
            for s in instrument_ir(ir, "m").sites if s.kind in ("read", "write")}
    assert tsan and tsan <= ours, sorted(tsan - ours)


# --- type sizes (layout.py) against LLVM's own DataLayout ----------------------------------

LAYOUT_TYPES = [
    "i1", "i8", "i16", "i24", "i32", "i48", "i64", "i65", "i128", "i200", "half", "bfloat",
    "float", "double", "x86_fp80", "fp128", "ptr", "ptr addrspace(270)", "<2 x i8>", "<3 x i8>",
    "<3 x float>", "<4 x i32>", "<8 x i1>", "<5 x i1>", "<3 x i64>", "<2 x ptr>", "[0 x i32]",
    "[3 x i16]", "[2 x x86_fp80]", "{}", "{ i8 }", "{ i8, i64 }", "<{ i8, i64 }>",
    "{ i32, { i8, i16 } }", "%struct.S", "[2 x %struct.S]", "{ <3 x float>, i8 }",
    "{ i1, fp128 }", "%struct.P",
]


def test_type_sizes_and_alignments_match_llvm_data_layout():
    # each type alone, and after an i8 (where its alignment decides the offset)
    decls = [rewrite.HEADER.split("\n")[0], "%struct.S = type { i64, i32, [5 x i8] }",
             "%struct.P = type <{ i8, i32 }>"]
    text = "\n".join(decls + ["@t%d = global %s zeroinitializer\n@u%d = global { i8, %s } zeroinitializer"
                              % (i, ty, i, ty) for i, ty in enumerate(LAYOUT_TYPES)])
    module = llvm.parse_assembly(text)
    target = llvm.create_target_data(module.data_layout)
    llvm_sizes = {g.name: target.get_abi_size(g.global_value_type) for g in module.global_variables}
    layout = TypeLayout(text.split("\n"))
    ours = {}
    for i, ty in enumerate(LAYOUT_TYPES):
        ours["t%d" % i] = layout.alloc_size(ty)
        ours["u%d" % i] = layout.alloc_size("{ i8, %s }" % ty)
    assert ours == llvm_sizes


VOLATILE_THEN_ATOMIC = r"""
#include <stdatomic.h>
static _Thread_local atomic_int mine;
atomic_int *volatile slot[2];
int r[2];
static void work(long i) {
  slot[i] = &mine;
  atomic_store_explicit(&mine, 1, memory_order_release);
  r[i] = atomic_load_explicit(slot[1 - i], memory_order_acquire);
}
void (*keep)(long) = work;
"""


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_second_stage_names_never_redefine_the_first_stage_ones(tmp_path, opt):
    """Above -O0 the plain accesses are hooked before clang's pipeline and the atomics after
    it: a `%__rsan.N` value of the first stage that the optimiser keeps (the i64 a volatile
    pointer load hands to __rsan_volatile_load) must not be defined again by the second stage
    (it was: 'multiple definition of local value named __rsan.1', an instrumentation abort on
    a short internal function that loads a pointer through a volatile slot and then does an
    atomic store)."""
    src = tmp_path / "t.c"
    src.write_text(VOLATILE_THEN_ATOMIC)
    ir = canonical(subprocess.run(
        [CC, "-std=c11", "-g", opt, "-Xclang", "-disable-llvm-passes", "-S", "-emit-llvm", str(src), "-o", "-"],
        capture_output=True, text=True, check=True).stdout)
    result = instrument_ir(ir, "volatile_then_atomic", spin_loops=True, optimise=int(opt[2:]), optimiser=CC)
    verify(result.ir_text)
    names = re.findall(r"^\s*(%__rsan\.\d+) =", result.ir_text, re.M)
    assert names and len(names) == len(set(names)), names


def test_parse_module_continues_fresh_names_after_the_existing_ones():
    from pyrsan.passes.model import parse_module
    module = parse_module("define void @f() {\n  %__rsan.7 = zext i32 1 to i64\n  ret void\n}\n")
    assert module.fresh() == "%__rsan.8"


@pytest.mark.parametrize("filename, directory, expected", [
    ("./shared.h", "/src/proj", "/src/proj/shared.h"),
    ("inc/./x.h", "/src/proj/", "/src/proj/inc/x.h"),
    ("/abs//dir/./y.c", "/ignored", "/abs/dir/y.c"),
    ("../up.h", "/src/proj", "/src/proj/../up.h"),
    ("plain.c", "/src", "/src/plain.c"),
])
def test_debug_file_paths_have_no_dot_components(filename, directory, expected):
    """A header included as "./shared.h" (or a source compiled as ./a.c) was reported as
    /dir/./shared.h; "." components go, ".." stays (not textual through a symbolic link)."""
    debug = DebugInfo([f'!1 = !DIFile(filename: "{filename}", directory: "{directory}")'])
    assert debug.file_of("!1") == expected


SPLIT_GLOBALS = r"""
#include <stdatomic.h>
typedef struct { long pad; atomic_int a; char c; atomic_int b; } S;
struct grid { int unused; struct { atomic_short lo, hi; } cell[2][3]; };
static atomic_int v[4];
static S s;
static struct grid g;
static int writer(void) {
  atomic_store_explicit(&v[1], 1, memory_order_relaxed);
  atomic_store_explicit(&v[3], 1, memory_order_relaxed);
  atomic_store_explicit(&s.a, 1, memory_order_relaxed);
  atomic_store_explicit(&s.b, 1, memory_order_relaxed);
  atomic_store_explicit(&g.cell[1][2].hi, 1, memory_order_relaxed);
  atomic_store_explicit(&g.cell[0][1].lo, 1, memory_order_relaxed);
  return 0;
}
static int reader(void) {
  return atomic_load_explicit(&v[1], memory_order_relaxed) + atomic_load_explicit(&v[3], memory_order_relaxed) +
         atomic_load_explicit(&s.a, memory_order_relaxed) + atomic_load_explicit(&s.b, memory_order_relaxed) +
         atomic_load_explicit(&g.cell[1][2].hi, memory_order_relaxed) +
         atomic_load_explicit(&g.cell[0][1].lo, memory_order_relaxed);
}
int (*threads[2])(void) = {writer, reader};
"""


def test_globals_split_by_the_optimiser_are_named_by_their_element(tmp_path):
    """GlobalOpt's SRA splits a static aggregate whose parts are used separately (`@v.0`,
    `@v.1`, ...): each part is named by its element (v[1], s.b, g.cell[1][2].hi), where every
    part was named after the whole variable, so that a report on v[1] and one on v[3] both
    said 'v' (and the fence suggestion "between load from v and store to v")."""
    from pyrsan.passes.registration import module_globals
    from pyrsan.passes.model import parse_module
    ir = compile_to_ir(tmp_path, SPLIT_GLOBALS, flags=("-O1",))
    module = parse_module(ir)
    debug = DebugInfo([ln for ln in ir.split("\n") if ln.startswith("!")])
    names = {src for _, _, src in module_globals(module, debug)}
    assert {"v[1]", "v[3]", "s.a", "s.b", "g.cell[1][2].hi", "g.cell[0][1].lo"} <= names, names
