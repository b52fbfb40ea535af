"""Each rewrite family on tiny hand-written IR: the expected lines, and the module verifies."""
from __future__ import annotations

import re

import pytest

from passes_helpers import canonical, verify
from pyrsan.passes import UnsupportedIRError, instrument_ir

HEADER = """target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"
@x = global i32 0
@q = global i64 0
@b = global [16 x i8] zeroinitializer
"""

TBAA = """
!20 = !{!21, !21, i64 0}
!21 = !{!"int", !22, i64 0}
!22 = !{!"root"}
"""

DEBUG_TAIL = """
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: FullDebug)
!1 = !DIFile(filename: "t.c", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!10 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 3, unit: !0, spFlags: DISPFlagDefinition)
!11 = !DILocation(line: 4, column: 7, scope: !10)
!12 = !DILocation(line: 5, column: 9, scope: !10)
"""


def instrument(body: str, decls: str = "", debug: bool = False):
    text = HEADER + decls + "\n" + body + (DEBUG_TAIL if debug else "")
    result = instrument_ir(canonical(text), "/src/t.c")
    verify(result.ir_text)
    return result


def body_of(ir_text: str, name: str) -> list[str]:
    lines = ir_text.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("define") and "@%s(" % name in ln)
    end = lines.index("}", start)
    return [ln.strip() for ln in lines[start + 1:end] if ln.strip()]


def calls_in(lines):
    return [ln for ln in lines if "@__rsan_" in ln]


def test_load_acquire_becomes_runtime_call_and_trunc_under_the_original_name():
    r = instrument("define i32 @f() {\n  %v = load atomic i32, ptr @x acquire, align 4\n  ret i32 %v\n}")
    sid = r.sites[0].id
    assert body_of(r.ir_text, "f") == [
        "%%__rsan.1 = notail call i64 @__rsan_load_4(ptr @x, i32 2, i64 %d)" % (sid - (1 << 64) if sid >> 63 else sid),
        "%v = trunc i64 %__rsan.1 to i32",
        "ret i32 %v",
    ]
    assert (r.sites[0].kind, r.sites[0].order, r.sites[0].size) == ("load", "acquire", 4)


def test_load_i64_defines_the_result_with_the_call_itself():
    r = instrument("define i64 @f() {\n  %v = load atomic i64, ptr @q seq_cst, align 8\n  ret i64 %v\n}")
    assert re.fullmatch(r"%v = notail call i64 @__rsan_load_8\(ptr @q, i32 5, i64 -?\d+\)",
                        body_of(r.ir_text, "f")[0])


@pytest.mark.parametrize("ty,size,convert", [
    ("ptr", 8, ["%v = inttoptr i64 %__rsan.1 to ptr"]),
    ("double", 8, ["%v = bitcast i64 %__rsan.1 to double"]),
    ("float", 4, ["%__rsan.2 = trunc i64 %__rsan.1 to i32", "%v = bitcast i32 %__rsan.2 to float"]),
    ("i8", 1, ["%v = trunc i64 %__rsan.1 to i8"]),
    ("i16", 2, ["%v = trunc i64 %__rsan.1 to i16"]),
])
def test_load_of_each_type_converts_back_from_i64(ty, size, convert):
    r = instrument("define %s @f(ptr %%p) {\n  %%v = load atomic %s, ptr %%p monotonic, align %d\n"
                   "  ret %s %%v\n}" % (ty, ty, size, ty))
    lines = body_of(r.ir_text, "f")
    assert lines[0].startswith("%%__rsan.1 = notail call i64 @__rsan_load_%d(ptr %%p, i32 0, " % size)
    assert lines[1:-1] == convert


@pytest.mark.parametrize("ty,value,expect", [
    ("i8", "7", ["%__rsan.1 = zext i8 7 to i64"]),
    ("i16", "%a", ["%__rsan.1 = zext i16 %a to i64"]),
    ("float", "%a", ["%__rsan.2 = bitcast float %a to i32", "%__rsan.1 = zext i32 %__rsan.2 to i64"]),
    ("double", "%a", ["%__rsan.1 = bitcast double %a to i64"]),
    ("ptr", "%a", ["%__rsan.1 = ptrtoint ptr %a to i64"]),
])
def test_store_of_each_type_zero_extends_the_value(ty, value, expect):
    size = {"i8": 1, "i16": 2, "float": 4, "double": 8, "ptr": 8}[ty]
    r = instrument("define void @f(ptr %%p, %s %%a) {\n  store atomic %s %s, ptr %%p release, align %d\n"
                   "  ret void\n}" % (ty, ty, value, size))
    lines = body_of(r.ir_text, "f")
    assert lines[:-2] == expect
    assert lines[-2].startswith("notail call void @__rsan_store_%d(ptr %%p, i64 %%__rsan.1, i32 3, " % size)
    assert r.sites[0].kind == "store" and r.sites[0].order == "release"


def test_store_of_a_constant_expression_keeps_it_intact():
    r = instrument("define void @f() {\n  store atomic i64 ptrtoint (ptr @x to i64), ptr "
                   "getelementptr inbounds (i8, ptr @b, i64 8) seq_cst, align 8\n  ret void\n}")
    line = body_of(r.ir_text, "f")[0]
    assert line.startswith("notail call void @__rsan_store_8(ptr getelementptr inbounds (i8, ptr @b, i64 8), "
                           "i64 ptrtoint (ptr @x to i64), i32 5, ")


RMW_OPS = ["xchg", "add", "sub", "and", "nand", "or", "xor", "max", "min", "umax", "umin",
           "fadd", "fsub", "fmax", "fmin", "fmaximum", "fminimum", "uinc_wrap", "udec_wrap",
           "usub_cond", "usub_sat"]


RMW_CASES = [(op, ty) for op in RMW_OPS
             for ty in (("float", "double") if op.startswith("f") else ("i8", "i16", "i32", "i64"))]


@pytest.mark.parametrize("op,ty", RMW_CASES)
def test_atomicrmw_every_operation_passes_its_op_code(op, ty):
    r = instrument("define %s @f(ptr %%p, %s %%v) {\n  %%r = atomicrmw volatile %s ptr %%p, %s %%v "
                   "acq_rel, align 4, !tbaa !20\n  ret %s %%r\n}" % (ty, ty, op, ty, ty) + TBAA)
    size = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "float": 4, "double": 8}[ty]
    call = next(ln for ln in body_of(r.ir_text, "f") if "@__rsan_rmw" in ln)
    assert re.search(r"@__rsan_rmw_%d\(ptr %%p, i64 %%\S+, i32 %d, i32 4, i64 -?\d+\)$"
                     % (size, RMW_OPS.index(op)), call), call
    assert (r.sites[0].kind, r.sites[0].op, r.sites[0].size) == ("rmw", op, size)
    assert "volatile" not in r.ir_text and "tbaa" not in "\n".join(body_of(r.ir_text, "f"))


@pytest.mark.parametrize("weak", [True, False])
def test_cmpxchg_rebuilds_the_pair_under_the_original_name(weak):
    r = instrument("define i1 @f(ptr %%p, i32 %%e, i32 %%d) {\n  %%pair = cmpxchg %s ptr %%p, i32 %%e, "
                   "i32 %%d acq_rel acquire, align 4\n  %%ok = extractvalue { i32, i1 } %%pair, 1\n"
                   "  ret i1 %%ok\n}" % ("weak" if weak else ""))
    lines = body_of(r.ir_text, "f")
    assert lines[0] == "%__rsan.1 = zext i32 %e to i64"
    assert lines[1] == "%__rsan.2 = zext i32 %d to i64"
    assert re.fullmatch(r"%%__rsan.3 = notail call \{ i64, i64 \} @__rsan_cas_4\(ptr %%p, i64 %%__rsan.1, "
                        r"i64 %%__rsan.2, i32 4, i32 2, i32 %d, i64 -?\d+\)" % int(weak), lines[2])
    assert lines[3:9] == [
        "%__rsan.4 = extractvalue { i64, i64 } %__rsan.3, 0",
        "%__rsan.5 = trunc i64 %__rsan.4 to i32",
        "%__rsan.6 = extractvalue { i64, i64 } %__rsan.3, 1",
        "%__rsan.7 = trunc i64 %__rsan.6 to i1",
        "%__rsan.8 = insertvalue { i32, i1 } poison, i32 %__rsan.5, 0",
        "%pair = insertvalue { i32, i1 } %__rsan.8, i1 %__rsan.7, 1",
    ]
    site = r.sites[0]
    assert (site.kind, site.order, site.order_fail, site.weak) == ("cas", "acq_rel", "acquire", weak)


def test_cmpxchg_on_i64_and_ptr_use_the_8_byte_call():
    r = instrument("define ptr @f(ptr %p, ptr %e, ptr %d, i64 %x) {\n"
                   "  %a = cmpxchg ptr %p, ptr %e, ptr %d seq_cst seq_cst, align 8\n"
                   "  %b = cmpxchg ptr %p, i64 %x, i64 0 monotonic monotonic, align 8\n"
                   "  %o = extractvalue { ptr, i1 } %a, 0\n  ret ptr %o\n}")
    lines = body_of(r.ir_text, "f")
    assert "%__rsan.1 = ptrtoint ptr %e to i64" in lines
    assert any("inttoptr i64" in ln and "to ptr" in ln for ln in lines)
    assert any(re.search(r"@__rsan_cas_8\(ptr %p, i64 %x, i64 0, i32 0, i32 0, i32 0, ", ln) for ln in lines)
    assert "%a = insertvalue { ptr, i1 } %__rsan.8, i1 %__rsan.7, 1" in lines


@pytest.mark.parametrize("order,number", [("acquire", 2), ("release", 3), ("acq_rel", 4), ("seq_cst", 5)])
@pytest.mark.parametrize("scope,single", [("", 0), ('syncscope("singlethread") ', 1)])
def test_fence_passes_order_and_singlethread(order, number, scope, single):
    r = instrument("define void @f() {\n  fence %s%s\n  ret void\n}" % (scope, order))
    line = body_of(r.ir_text, "f")[0]
    assert re.fullmatch(r"notail call void @__rsan_fence\(i32 %d, i32 %d, i64 -?\d+\)" % (number, single), line)
    assert r.sites[0].kind == "fence" and r.sites[0].size == 0


def test_unordered_and_monotonic_are_relaxed():
    r = instrument("define void @f(ptr %p) {\n  %a = load atomic i32, ptr %p unordered, align 4\n"
                   "  store atomic i32 %a, ptr %p monotonic, align 4\n  ret void\n}")
    assert [s.order for s in r.sites] == ["relaxed", "relaxed"]
    assert ", i32 0, i64" in body_of(r.ir_text, "f")[0]


def test_no_numbered_value_is_created_and_numbering_still_parses():
    src = ("define i32 @f(ptr %0) {\n  %2 = load atomic i32, ptr %0 acquire, align 4\n"
           "  %3 = atomicrmw add ptr %0, i32 %2 seq_cst, align 4\n"
           "  %4 = cmpxchg ptr %0, i32 %3, i32 1 seq_cst seq_cst, align 4\n"
           "  %5 = extractvalue { i32, i1 } %4, 0\n  ret i32 %5\n}")
    r = instrument(src)
    defined = re.findall(r"^\s*(%[\w.]+) =", "\n".join(body_of(r.ir_text, "f")), re.M)
    numbered = [d for d in defined if re.fullmatch(r"%\d+", d)]
    assert numbered == ["%2", "%3", "%4", "%5"]
    assert all(d.startswith("%__rsan.") for d in defined if d not in numbered)


def test_dbg_kept_on_every_inserted_instruction_and_tbaa_dropped():
    r = instrument("define i32 @f() !dbg !10 {\n  %v = load atomic i32, ptr @x acquire, align 4, "
                   "!dbg !11, !tbaa !20\n  ret i32 %v, !dbg !12\n}" + TBAA, debug=True)
    lines = body_of(r.ir_text, "f")
    assert all("!dbg !" in ln for ln in lines)
    assert not any("!tbaa" in ln for ln in lines)


def test_dbg_value_records_and_quoted_names_are_untouched():
    src = ("define i32 @\"f<q>\"(ptr %\"p x\") !dbg !10 {\n"
           "    #dbg_value(ptr %\"p x\", !13, !DIExpression(), !11)\n"
           "  %\"v:1\" = load atomic i32, ptr %\"p x\" acquire, align 4, !dbg !11\n"
           "  ret i32 %\"v:1\", !dbg !12\n}\n"
           "!13 = !DILocalVariable(name: \"p\", scope: !10, file: !1, line: 3, type: !14)\n"
           "!14 = !DIBasicType(name: \"int\", size: 32)")
    r = instrument(src, debug=True)
    lines = body_of(r.ir_text, '"f<q>"')
    assert lines[0].startswith('#dbg_value(ptr %"p x"')
    assert lines[1].startswith('%__rsan.1 = notail call i64 @__rsan_load_4(ptr %"p x", i32 2, ')
    assert re.fullmatch(r'%"v:1" = trunc i64 %__rsan.1 to i32, !dbg !\d+', lines[2])


def test_switch_continuation_lines_are_untouched():
    src = ("define void @f(ptr %p, i32 %o) {\n  switch i32 %o, label %a [\n    i32 2, label %b\n"
           "    i32 5, label %c\n  ]\na:\n  store atomic i32 1, ptr %p monotonic, align 4\n  br label %c\n"
           "b:\n  store atomic i32 1, ptr %p release, align 4\n  br label %c\nc:\n  ret void\n}")
    r = instrument(src)
    lines = body_of(r.ir_text, "f")
    assert lines[:4] == ["switch i32 %o, label %a [", "i32 2, label %b", "i32 5, label %c", "]"]
    assert [s.order for s in r.sites] == ["relaxed", "release"]


CALL_DECLS = """declare void @g(i32)
declare i32 @h()
declare void @llvm.trap()
declare i32 @__gxx_personality_v0(...)
"""


def test_calls_are_bracketed_but_not_intrinsics_asm_or_runtime():
    src = ("define void @f(ptr %fp) {\n  call void @g(i32 1)\n  %r = tail call i32 @h()\n"
           "  call void %fp(i32 %r)\n  call void asm sideeffect \"\", \"~{memory}\"()\n"
           "  call void @llvm.trap()\n  ret void\n}")
    r = instrument(src, CALL_DECLS)
    lines = body_of(r.ir_text, "f")
    ids = [s.id for s in r.sites]
    assert [s.kind for s in r.sites] == ["call"] * 3

    def lit(i: int) -> str:
        return str(i - (1 << 64) if i >> 63 else i)

    assert lines[:9] == [
        "notail call void @__rsan_func_entry(i64 %s)" % lit(ids[0]), "call void @g(i32 1)",
        "notail call void @__rsan_func_exit()",
        "notail call void @__rsan_func_entry(i64 %s)" % lit(ids[1]), "%r = tail call i32 @h()",
        "notail call void @__rsan_func_exit()",
        "notail call void @__rsan_func_entry(i64 %s)" % lit(ids[2]), "call void %fp(i32 %r)",
        "notail call void @__rsan_func_exit()",
    ]
    assert lines[9].startswith("call void asm") and lines[10] == "call void @llvm.trap()"


def test_musttail_is_not_bracketed():
    r = instrument("define i32 @f() {\n  %r = musttail call i32 @h()\n  ret i32 %r\n}", CALL_DECLS)
    assert body_of(r.ir_text, "f") == ["%r = musttail call i32 @h()", "ret i32 %r"]
    assert r.sites == ()


def test_invoke_gets_entry_only_with_the_dbg_of_its_continuation_line():
    src = ("define void @f() personality ptr @__gxx_personality_v0 !dbg !10 {\n"
           "  invoke void @g(i32 1)\n          to label %ok unwind label %bad, !dbg !12\n"
           "ok:\n  ret void, !dbg !12\nbad:\n  %lp = landingpad { ptr, i32 }\n          cleanup, !dbg !11\n"
           "  resume { ptr, i32 } %lp, !dbg !11\n}")
    r = instrument(src, CALL_DECLS, debug=True)
    lines = body_of(r.ir_text, "f")
    assert re.fullmatch(r"notail call void @__rsan_func_entry\(i64 -?\d+\), !dbg !\d+", lines[0])
    assert lines[1] == "invoke void @g(i32 1)"
    assert lines[2].startswith("to label %ok unwind label %bad")
    assert "__rsan_func_exit" not in r.ir_text
    assert r.sites[0].frames[0].line == 5
    assert "cleanup, !dbg" in "\n".join(lines)


def test_declarations_added_once_only_for_used_functions():
    r = instrument("define void @f(ptr %p) {\n  fence seq_cst\n  fence acquire\n  ret void\n}",
                   "declare void @__rsan_fence(i32, i32, i64)\n")
    text = r.ir_text
    assert text.count("@__rsan_fence(i32, i32, i64)") == 1
    assert "declare void @__rsan_register_module(ptr)" in text
    assert "__rsan_load_4" not in text and "__rsan_func_entry" not in text


@pytest.mark.parametrize("inst,construct", [
    ("store atomic half 0xH3C00, ptr %p seq_cst, align 2", "atomic store of type half"),
    ("%v = atomicrmw fadd ptr %p, <2 x float> zeroinitializer seq_cst, align 8",
     "atomicrmw fadd of type <2 x float>"),
    ("%v = load atomic i32, ptr addrspace(1) %q seq_cst, align 4", "atomic load through pointer"),
])
def test_unsupported_atomics_raise_with_the_location(inst, construct):
    src = ("define void @f(ptr %%p, ptr addrspace(1) %%q) !dbg !10 {\n  %s, !dbg !12\n  ret void\n}"
           % inst)
    with pytest.raises(UnsupportedIRError) as err:
        instrument_ir(canonical(HEADER + src + DEBUG_TAIL), "m")
    assert construct in str(err.value)
    assert str(err.value).endswith("at /src/t.c:5")
    assert "\n" not in str(err.value)


def test_unsupported_without_debug_info_says_unknown_location():
    src = "define void @f(ptr %p) {\n  store atomic half 0xH3C00, ptr %p seq_cst, align 2\n  ret void\n}"
    with pytest.raises(UnsupportedIRError) as err:
        instrument_ir(canonical(HEADER + src), "m")
    assert str(err.value) == "unsupported atomic store of type half at unknown location"


def test_atomic_library_call_becomes_the_runtime_entry_point_with_the_site():
    src = ("declare void @__atomic_load(i64, ptr, ptr, i32)\n"
           "define void @f(ptr %p, ptr %r) !dbg !10 {\n"
           "  call void @__atomic_load(i64 24, ptr %p, ptr %r, i32 5), !dbg !11\n  ret void\n}")
    r = instrument_ir(canonical(HEADER + src + DEBUG_TAIL), "m")
    verify(r.ir_text)
    assert [(s.kind, s.order, s.size, s.frames[0].line) for s in r.sites] == [("load", "seq_cst", 24, 4)]
    assert "call void @__rsan_atomic_load(i64 24, ptr %p, ptr %r, i32 5, i64 " in r.ir_text


@pytest.mark.parametrize("inst,call", [
    ("%v = load atomic i128, ptr %p seq_cst, align 16", "@__rsan_load_16(ptr %p, i32 5"),
    ("store atomic i128 7, ptr %p release, align 16", "@__rsan_store_16(ptr %p, i64 7, i64 0, i32 3"),
    ("%v = atomicrmw add ptr %p, i128 1 seq_cst, align 16", "@__rsan_rmw_16(ptr %p, i64 1, i64 0, i32 1, i32 5"),
    ("%v = cmpxchg ptr %p, i128 0, i128 1 seq_cst seq_cst, align 16",
     "@__rsan_cas_16(ptr %p, i64 0, i64 0, i64 1, i64 0, i32 5, i32 5, i32 0"),
])
def test_i128_atomics_call_the_16_byte_entry_points(inst, call):
    src = "define void @f(ptr %%p) !dbg !10 {\n  %s, !dbg !12\n  ret void\n}" % inst
    r = instrument_ir(canonical(HEADER + src + DEBUG_TAIL), "m")
    verify(r.ir_text)
    assert call in r.ir_text
    assert [s.size for s in r.sites] == [16]


def test_naked_functions_are_not_bracketed():
    src = ("define void @n() #0 {\n  call void asm sideeffect \"ret\", \"\"()\n  call void @g(i32 0)\n"
           "  unreachable\n}\nattributes #0 = { naked noinline }")
    r = instrument(src, CALL_DECLS)
    assert "__rsan_func_entry" not in "\n".join(body_of(r.ir_text, "n"))


def test_lock_free_query_is_not_an_access():
    src = ("declare i1 @__atomic_is_lock_free(i64, ptr)\n"
           "define i1 @f(ptr %p) {\n  %r = call i1 @__atomic_is_lock_free(i64 16, ptr %p)\n  ret i1 %r\n}")
    r = instrument(src)
    assert [s.kind for s in r.sites] == ["call"]


def test_instrumenting_twice_is_refused():
    r = instrument("define void @f() {\n  fence seq_cst\n  ret void\n}")
    with pytest.raises(UnsupportedIRError, match="already instrumented"):
        instrument_ir(canonical(r.ir_text), "again")
