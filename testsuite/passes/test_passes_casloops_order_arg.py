"""CAS retry loops whose compare-exchange order is a function argument (docs/reports.md §1):
libstdc++'s C++20 `std::atomic<double>::fetch_add`, `std::atomic<float>::fetch_sub` and
`std::atomic_ref<double>::fetch_add` run `__atomic_impl::__fetch_add_flt(ptr, v, order)`, an
out-of-line helper whose loop switches over `order` around one compare-exchange per order
(-O1/-O2), and at -O0 reaches its first read through a switch over a constant order after
blocks that store the pointer into slots. Both are one RMW; loops that hand on a stale read,
or whose first read takes the order argument too, stay as written. Through the driver's
pipeline (plain accesses hooked before optimisation)."""
from __future__ import annotations

import subprocess

import pytest

from passes_helpers import CC, CXX, canonical, verify
from pyrsan.passes import instrument_ir


def driver_ir(tmp_path, source: str, name: str, opt: str, std: str) -> str:
    src = tmp_path / name
    src.write_text(source)
    cmd = [CXX if name.endswith(".cpp") else CC, std, "-g", opt, "-S", "-emit-llvm", str(src), "-o", "-"]
    if opt != "-O0":
        cmd[-2:-2] = ["-Xclang", "-disable-llvm-passes"]
    return canonical(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def instrument(tmp_path, source: str, name: str, opt: str, std: str):
    level = int(opt[2:])
    result = instrument_ir(driver_ir(tmp_path, source, name, opt, std), "order_arg", spin_loops=True,
                           optimise=level, optimiser=CC if level else None)
    verify(result.ir_text)
    return result


def _function(ir: str, fragment: str) -> str:
    start = ir.rfind("define", 0, ir.index(fragment))
    return ir[start:ir.index("\n}\n", start)]


CPP20 = ("#include <atomic>\n"
         "std::atomic<double> d{0.0}; std::atomic<float> f{0.0f}; double plain = 0.0;\n"
         "double add_d(double v) { return d.fetch_add(v, std::memory_order_relaxed); }\n"
         "float sub_f(float v) { return f.fetch_sub(v); }\n"
         "double add_ref(double v) { return std::atomic_ref<double>(plain).fetch_add(v,"
         " std::memory_order_release); }\n")


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
def test_cpp20_floating_fetch_add_helpers_are_one_rmw(tmp_path, opt):
    result = instrument(tmp_path, CPP20, "t.cpp", opt, "-std=c++20")
    rmw = [loop for loop in result.loops if loop.kind == "rmw"]
    # one loop per helper (type, operation): __fetch_add_flt<double> (atomic and atomic_ref
    # share it) and __fetch_sub_flt<float>; at -O2 the optimiser may inline the helper into
    # each caller instead (its locals carry no hooks: escape.py), one loop per object then
    described = [loop.describe() for loop in result.loops]
    assert len(rmw) == len(result.loops) and len(rmw) in (2, 3), described
    if len(rmw) == 3:
        assert {loop.obj for loop in rmw} == {"d", "f", "plain"}, described
    out = result.ir_text
    assert "@__rsan_casloop_load_8(" in out and "@__rsan_casloop_load_4(" in out
    # every attempt is the loop's (at -O0 the other cases of the switches over a constant
    # order are dead blocks that keep their plain hooks: the constant never takes them)
    if opt != "-O0":
        assert "@__rsan_cas_8(" not in out and "@__rsan_cas_4(" not in out


C_HEAD = "#include <stdatomic.h>\n_Atomic long x; long note;\n"
# a C helper taking the success order as an argument: clang emits a switch over `m`
C_RMW = ("long add(_Atomic long *p, long d, memory_order m) {"
         " long old = atomic_load_explicit(p, memory_order_relaxed);"
         " while (!atomic_compare_exchange_weak_explicit(p, &old, old + d, m, memory_order_relaxed)) ;"
         " return old; }\n")
C_NOT_RMW = {
    # the first read takes the order too: an acquire first read can meet a relaxed attempt
    "load_order": "long add(_Atomic long *p, long d, memory_order m) {"
                  " long old = atomic_load_explicit(p, m);"
                  " while (!atomic_compare_exchange_weak_explicit(p, &old, old + d, m, memory_order_relaxed)) ;"
                  " return old; }\n",
    # an acquire first read: the relaxed case of `m` would order less than the read did
    "acquire_first": "long add(_Atomic long *p, long d, memory_order m) {"
                     " long old = atomic_load_explicit(p, memory_order_acquire);"
                     " while (!atomic_compare_exchange_weak_explicit(p, &old, old + d, m, memory_order_relaxed)) ;"
                     " return old; }\n",
    # the first read flows on (through an operation's first argument) past the loop
    "first_flows": "long add(_Atomic long *p, long d, memory_order m) {"
                   " long first = atomic_load_explicit(p, memory_order_relaxed), keep = first * 3, old = first;"
                   " while (!atomic_compare_exchange_weak_explicit(p, &old, old + d, m, memory_order_relaxed)) ;"
                   " return keep; }\n",
    # an effect between attempts on one of the order's paths
    "effect": "long add(_Atomic long *p, long d, memory_order m) {"
              " long old = atomic_load_explicit(p, memory_order_relaxed);"
              " while (!atomic_compare_exchange_weak_explicit(p, &old, old + d, m, memory_order_relaxed))"
              " { if (m == memory_order_release) note = old; }"
              " return old; }\n",
}


@pytest.mark.parametrize("opt", ["-O1", "-O2"])
def test_a_cas_loop_switching_over_an_order_argument_is_one_rmw(tmp_path, opt):
    result = instrument(tmp_path, C_HEAD + C_RMW, "t.c", opt, "-std=c11")
    assert [loop.kind for loop in result.loops] == ["rmw"], [loop.describe() for loop in result.loops]
    fn = _function(result.ir_text, "@add(")
    assert "@__rsan_casloop_load_8(" in fn and "@__rsan_cas_8(" not in fn


@pytest.mark.parametrize("opt", ["-O0", "-O1", "-O2"])
@pytest.mark.parametrize("name", sorted(C_NOT_RMW))
def test_order_argument_loops_that_hand_on_or_order_a_read_are_analysed_as_written(tmp_path, name, opt):
    result = instrument(tmp_path, C_HEAD + C_NOT_RMW[name], "t.c", opt, "-std=c11")
    assert not [loop for loop in result.loops if loop.kind == "rmw"], [loop.describe() for loop in result.loops]
    fn = _function(result.ir_text, "@add(")
    assert "@__rsan_load_8(" in fn and "casloop" not in fn
