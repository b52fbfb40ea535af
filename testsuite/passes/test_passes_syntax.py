"""The IR lexing helpers every pass relies on."""
from __future__ import annotations

from pyrsan.passes.syntax import (ORDERING_RE, c_string_constant, i64_literal, read_type,
                                  split_top_level, unescape_string)


def test_comma_splitter_respects_constant_expressions_strings_and_brackets():
    text = ('ptr getelementptr inbounds (i8, ptr @a, i64 8), i64 ptrtoint (ptr @"x,y" to i64), '
            '{ i32, i1 } %p, <2 x i32> <i32 1, i32 2>, !dbg !5')
    assert split_top_level(text) == [
        "ptr getelementptr inbounds (i8, ptr @a, i64 8)", 'i64 ptrtoint (ptr @"x,y" to i64)',
        "{ i32, i1 } %p", "<2 x i32> <i32 1, i32 2>", "!dbg !5"]
    assert split_top_level("ptr @x, i32 %0 monotonic, align 4") == [
        "ptr @x", "i32 %0 monotonic", "align 4"]


def test_read_type_splits_aggregates_named_and_addrspace_types():
    assert read_type("{ i32 } { i32 1 }") == ("{ i32 }", "{ i32 1 }")
    assert read_type("[4 x { ptr, i64 }] zeroinitializer") == ("[4 x { ptr, i64 }]", "zeroinitializer")
    assert read_type('%"class.std::vector" zeroinitializer') == ('%"class.std::vector"', "zeroinitializer")
    assert read_type("ptr addrspace(1) %p") == ("ptr addrspace(1)", "%p")
    assert read_type("<{ i8, i32 }> <{ i8 1, i32 2 }>") == ("<{ i8, i32 }>", "<{ i8 1, i32 2 }>")
    assert read_type("i64 ptrtoint (ptr @p to i64)") == ("i64", "ptrtoint (ptr @p to i64)")


def test_ordering_regex_takes_trailing_orders_and_syncscope():
    m = ORDERING_RE.match(' ptr %p syncscope("singlethread") acq_rel acquire')
    assert (m.group(1).strip(), m.group(2), m.group(3).split()) == ("ptr %p", "singlethread",
                                                                    ["acq_rel", "acquire"])
    assert ORDERING_RE.match(" ptr %p") is None


def test_strings_round_trip_through_ir_escapes():
    lit, n = c_string_constant('dir "x"\\é')
    assert lit == 'c"dir \\22x\\22\\5C\\C3\\A9\\00"' and n == 11
    assert unescape_string(lit[2:-4]) == 'dir "x"\\é'


def test_i64_literal_prints_high_ids_signed():
    assert i64_literal(5) == "5"
    assert i64_literal((1 << 64) - 1) == "-1"
    assert i64_literal(0x9F3A12C400000007) == str(0x9F3A12C400000007 - (1 << 64))
