"""Tests of the benchmark harness itself (not of pyrsan, and no timing assertions).

    python -m pytest benchmarks/test_harness.py -q

They need clang-22 (skipped without it) but not pyrsan.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bench  # noqa: E402
import build_time  # noqa: E402

CLANG = shutil.which("clang-22")
needs_clang = pytest.mark.skipif(CLANG is None, reason="clang-22 not installed")


def test_generator_is_deterministic_and_about_the_requested_size():
    a = build_time.generate(3000)
    b = build_time.generate(3000)
    assert a == b
    assert 2900 <= a.count("\n") <= 3300
    for construct in ("atomic_compare_exchange_weak_explicit", "atomic_compare_exchange_strong",
                      "atomic_fetch_xor_explicit", "atomic_exchange_explicit",
                      "atomic_thread_fence(memory_order_seq_cst)", "atomic_signal_fence",
                      "memory_order_consume", "struct node", "int main("):
        assert construct in a, construct


@needs_clang
def test_generated_file_compiles_and_runs(tmp_path):
    src = tmp_path / "big.c"
    src.write_text(build_time.generate(1500))
    exe = tmp_path / "big"
    subprocess.run([CLANG, "-O1", "-g", str(src), "-o", str(exe), "-pthread"], check=True,
                   capture_output=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    assert out.strip().lstrip("-").isdigit()


@needs_clang
@pytest.mark.parametrize("name,arg", [("mpmc_queue", "200"), ("counters", "20000"),
                                      ("message_passing", "5000"), ("mp_growth", "1000"),
                                      ("spin_handoff", "1000"),
                                      ("private_arrays", "20")])
def test_benchmark_programs_check_their_own_results(tmp_path, name, arg):
    exe = tmp_path / name
    subprocess.run([CLANG, "-O1", "-g", "-Wall", "-Werror", str(_bench.PROGRAMS_DIR / f"{name}.c"),
                    "-o", str(exe), "-pthread"], check=True, capture_output=True)
    res = _bench.run_measured([str(exe), arg], timeout=60, rss=True)
    assert res.returncode == 0 and res.stdout.startswith("ok"), res.stdout + res.stderr


@needs_clang
def test_peak_rss_is_the_programs_own_not_pythons(tmp_path):
    src = tmp_path / "touch.c"
    src.write_text("#include <stdlib.h>\n#include <string.h>\n"
                   "int main(int c, char **v) { size_t n = (size_t)atol(v[1]) << 20;\n"
                   "  char *p = malloc(n); memset(p, 1, n); return p[n - 1] == 1 ? 3 : 0; }\n")
    exe = tmp_path / "touch"
    subprocess.run([CLANG, "-O1", str(src), "-o", str(exe)], check=True)
    small = _bench.run_measured([str(exe), "1"], rss=True)
    big = _bench.run_measured([str(exe), "64"], rss=True)
    assert small.returncode == 3 and big.returncode == 3   # the program's own exit status
    assert 0 < small.maxrss_kb < 8 * 1024                   # not the Python parent's ~17 MB
    assert 64 * 1024 <= big.maxrss_kb < 80 * 1024


def test_timeout_kills_and_reports():
    res = _bench.run_measured(["sleep", "30"], timeout=0.5)
    assert res.timed_out and res.returncode < 0


def test_missing_program_is_a_one_line_error():
    with pytest.raises(_bench.BenchError, match="cannot run"):
        _bench.run_measured(["/nonexistent/benchmark-binary"])


def test_report_counting_counts_lines_and_distinct_keys(tmp_path):
    (tmp_path / "rsan.1.jsonl").write_text('{"key": "a"}\n{"key": "b"}\n')
    (tmp_path / "rsan.2.jsonl").write_text('{"key": "a"}\n\n')
    assert _bench.count_reports(tmp_path) == (3, 2)


def test_ratio_formatting_handles_missing_values():
    assert _bench.ratio(3.0, 2.0) == "1.50x"
    assert _bench.ratio(float("nan"), 2.0) == "n/a"
    assert _bench.ratio(1.0, 0.0) == "n/a"


@needs_clang
def test_end_to_end_critical_sections_are_well_formed_and_compile(tmp_path):
    import random

    import end_to_end
    sections = 0
    for seed in range(60):
        locations, threads = end_to_end.random_litmus(random.Random(seed), "locks")
        for ops in threads:
            held = False
            for op in ops:
                if op == end_to_end.LOCK:
                    assert not held
                    held, sections = True, sections + 1
                elif op == end_to_end.UNLOCK:
                    assert held
                    held = False
                else:
                    assert not (held and op[0] == "wait"), ops
            assert not held
        if seed < 5:
            source = tmp_path / f"p{seed}.c"
            source.write_text(end_to_end.c_source(locations, threads))
            subprocess.run([CLANG, "-fsyntax-only", "-Werror", str(source)], check=True)
    assert sections > 20


@needs_clang
def test_end_to_end_loops_run_as_the_model_unrolls_them(tmp_path):
    """A generated loop runs its body twice, each store and compare-exchange with a value of
    its own per iteration: the native program's final values are those of the unrolled ops."""
    import random

    import end_to_end
    loops = 0
    for seed in range(200):
        locations, threads = end_to_end.random_litmus(random.Random(seed), "loops")
        if not any(op[0] == "loop" and any(o[0] in ("st", "cas") for o in op[1]) for op in threads[0]):
            continue
        loops += 1
        if loops > 3:
            continue
        solo = [threads[0]]   # one thread alone: a single behaviour to compare with
        model = end_to_end.unrolled(threads[0])
        assert len(model) > len(threads[0])
        final = {x: 0 for x in locations}
        for op in model:
            if op[0] == "st":
                final[op[1]] = op[2]
            elif op[0] == "rmw":
                final[op[1]] += op[3]
            elif op[0] == "cas" and final[op[1]] == op[2]:
                final[op[1]] = op[3]
        text = end_to_end.c_source(locations, solo).replace(
            '  return 0;', '  printf("' + " ".join(["%d"] * len(locations)) + '\\n", '
            + ", ".join(locations) + ");\n  return 0;")
        source, exe = tmp_path / f"p{seed}.c", tmp_path / f"p{seed}"
        source.write_text(text)
        subprocess.run([CLANG, "-O1", "-Werror", str(source), "-o", str(exe), "-pthread"], check=True)
        last = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()[-1]
        assert last.split() == [str(final[x]) for x in locations], (threads[0], text)
    assert loops > 5


@needs_clang
def test_end_to_end_races_programs_compile_and_the_model_sees_both_verdicts(tmp_path):
    import random

    import end_to_end_races
    verdicts = set()
    for seed in range(40):
        threads = end_to_end_races.race_model.random_program(random.Random(seed), 6)
        verdicts.add(end_to_end_races.racy(threads))
        if seed < 5:
            source = tmp_path / f"p{seed}.c"
            source.write_text(end_to_end_races.c_source(threads))
            subprocess.run([CLANG, "-fsyntax-only", "-Werror", str(source)], check=True)
    assert verdicts == {True, False}


def test_end_to_end_reads_back_the_programs_it_writes_and_a_fix():
    import random

    import end_to_end
    for shapes in ("basic", "all", "locks", "loops"):
        for seed in range(100):
            locations, threads = end_to_end.random_litmus(random.Random(seed), shapes)
            assert end_to_end.ops_of_source(end_to_end.c_source(locations, threads)) == threads
    source = end_to_end.c_source(["x", "y"], [[("st", "x", 1, "rlx"), ("ld", "y", "rlx")],
                                              [("st", "y", 2, "rlx"), ("ld", "x", "rlx")]])
    fixed = source.replace("memory_order_relaxed);\n  r0", "memory_order_relaxed);\n  atomic_thread_fence("
                           "memory_order_seq_cst);\n  r0").replace("(&x, memory_order_relaxed)",
                                                                  "(&x, memory_order_seq_cst)")
    assert end_to_end.ops_of_source(fixed) == [[("st", "x", 1, "rlx"), ("fence", "sc"), ("ld", "y", "rlx")],
                                               [("st", "y", 2, "rlx"), ("ld", "x", "sc")]]
