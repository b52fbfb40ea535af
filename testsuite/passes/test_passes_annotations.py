"""Site ids of the pyrsan.h annotations (passes/annotations.py): the runtime calls the header
makes with site 0 get a site of their own, whose frames start at the annotation's line."""
from __future__ import annotations

import json
import re

import pytest

from passes_helpers import ROOT, compile_to_ir, verify
from pyrsan.passes import instrument_ir

INCLUDE = str(ROOT / "runtime" / "include")
CALL_RE = re.compile(r"call void @__rsan_(wait|bcas|track)_(\d)\(.*, i64 (?:noundef )?(-?\d+)\)")

C_SNIPPET = """#include <pyrsan.h>
_Atomic int x;
void f(void) {
  pyrsan_track(&x, 1);
  pyrsan_wait(&x, 1);
  pyrsan_bcas_explicit(&x, 1, 2, memory_order_acquire);
}
"""
CPP_SNIPPET = """#include <pyrsan.h>
std::atomic<int> x;
void f() {
  pyrsan_track(&x, 1);
  pyrsan_wait(&x, 1);
  pyrsan_bcas_explicit(&x, 1, 2, std::memory_order_acquire);
}
"""


@pytest.mark.parametrize("opt", ["-O0", "-O1"])
@pytest.mark.parametrize("name, source", [("t.c", C_SNIPPET), ("t.cpp", CPP_SNIPPET)])
def test_annotation_calls_get_sites_at_the_annotation_line(tmp_path, opt, name, source):
    ir = compile_to_ir(tmp_path, source, name=name, flags=(opt, "-I", INCLUDE))
    result = instrument_ir(ir, "annotations")
    verify(result.ir_text)
    calls = CALL_RE.findall(result.ir_text)
    # -O1 folds the header's switch on the size; -O0 keeps one call per size
    assert {c[0] for c in calls} == {"track", "wait", "bcas"}
    sites = {s.id: s for s in result.sites}
    expected_line = {"track": 4, "wait": 5, "bcas": 6}
    # the header's own fallback loops (dead code under pyrsan) may be recognised as spin
    # loops since they yield between attempts: those are not annotation calls
    fallback = {(loop.file, loop.line) for loop in result.loops if loop.file.endswith("pyrsan.h")}
    calls = [c for c in calls if not fallback or not any(
        (f.file, f.line) in fallback for f in sites[int(c[2]) & ((1 << 64) - 1)].frames)]
    for what, size, site in calls:
        site_id = int(site) & ((1 << 64) - 1)
        assert site_id in sites, f"{what}_{size} kept site {site}"
        frames = sites[site_id].frames
        assert frames[0].file.endswith(name) and frames[0].line == expected_line[what]
        assert not any(f.file.endswith("pyrsan.h") for f in frames)
    bcas = [sites[int(s) & ((1 << 64) - 1)] for w, n, s in calls if w == "bcas" and n == "4"]
    if opt == "-O1":
        assert bcas[0].kind == "cas" and bcas[0].order == "acquire"


def test_a_call_outside_user_code_keeps_site_zero(tmp_path):
    """A call whose every frame is in pyrsan.h (its helper was not inlined) keeps site 0."""
    header = tmp_path / "pyrsan.h"
    header.write_text("#include <stdint.h>\nvoid __rsan_wait_4(void *p, uint64_t v, int32_t o, "
                      "uint64_t s) __attribute__((weak));\n__attribute__((noinline)) void "
                      "helper(void *p) { if (__rsan_wait_4) __rsan_wait_4(p, 1, 5, 0); }\n")
    ir = compile_to_ir(tmp_path, '#include "pyrsan.h"\nint x;\nvoid f(void) { helper(&x); }\n',
                       flags=("-O1", "-I", str(tmp_path)))
    out = instrument_ir(ir, "annotations").ir_text
    assert [c[2] for c in CALL_RE.findall(out)] == ["0"]


STALE_WAIT = """#include <pthread.h>
#include <pyrsan.h>
{decl}
int r0;
static void *t1(void *arg) {{
  (void)arg;
  atomic_store_explicit(&x, 1, memory_order_release);
  r0 = atomic_load_explicit(&y, memory_order_acquire);
  atomic_store_explicit(&x, 0, memory_order_release);
  atomic_store_explicit(&done, 1, memory_order_relaxed);
  return NULL;
}}
static void *t2(void *arg) {{
  (void)arg;
  atomic_store_explicit(&y, 1, memory_order_release);
  pyrsan_wait_explicit(&x, 0, memory_order_acquire);
  return NULL;
}}
int main(void) {{
  pthread_t a, b;
  pthread_create(&a, NULL, t1, NULL);
  while (atomic_load_explicit(&done, memory_order_relaxed) != 1) /* no hb with t1 */
    ;
  pthread_create(&b, NULL, t2, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}}
"""
WAIT_LINE = 16


@pytest.mark.parametrize("name, decl, opt", [
    ("wait.c", "atomic_int x, y, done;", "-O1"),
    # C++ at -O0: before annotation sites, the report named pyrsan.h (the template's call)
    ("wait.cpp", "using namespace std; atomic<int> x, y, done;", "-O0"),
])
def test_a_stale_wait_is_reported_at_the_annotation_line(tmp_path, run_pyrsan, name, decl, opt):
    """testsuite/litmus/barw_stale_wait.c with t1 run to completion before t2 starts (main
    waits for t1's relaxed `done`, so t2 has no hb with t1): t2's wait(x = 0) may read the
    stale initial 0 (a real violation); the report's access is the annotation's own site, at
    its line, with no frame in pyrsan.h."""
    source = tmp_path / name
    source.write_text(STALE_WAIT.format(decl=decl))
    out = tmp_path / "result.json"
    proc = run_pyrsan("run", "--json", out, opt, source, timeout=600)
    assert proc.returncode == 66, proc.stderr[-3000:]
    reports = [r for r in json.loads(out.read_text())["reports"]
               if r["access"]["operation"] == "wait"]
    assert reports, proc.stderr[-3000:]
    access = reports[0]["access"]
    assert int(access["site"], 16) != 0
    assert access["file"] == str(source) and access["line"] == WAIT_LINE
    assert access["stack"][0]["line"] == WAIT_LINE
    assert not any(f["file"].endswith("pyrsan.h") for f in access["stack"])
