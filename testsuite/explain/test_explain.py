"""Issue 16: `pyrsan run --explain`, `pyrsan explain`, `--graph DIR` and SARIF code flows.

Every explanation is checked against the run, not against a stored answer: the cycle must be a
closed walk whose every edge the test re-derives from the events the explanation shows (po in
one thread in execution order; rf from a write of the value read; fr / mo to a later write of
the same location; the weak first edge into the write SC forces), and the events it names must
be the report's own access, stale write and forced write. The pictures are rendered by Graphviz,
converted to PNG, and their labels read back from the SVG."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LITMUS = HERE.parent / "litmus"
RACES = HERE.parent / "races"
SCHEMA = HERE.parent / "ci" / "sarif-schema-2.1.0.json"
SC_KINDS = {"po", "rf", "mo", "fr", "sc", "spawn", "join"}

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None,
    reason="Graphviz's dot is missing (Debian package graphviz; scripts/setup.sh installs it)")
needs_rsvg = pytest.mark.skipif(
    shutil.which("rsvg-convert") is None,
    reason="rsvg-convert is missing (Debian package librsvg2-bin; scripts/setup.sh installs it)")


def _explained(run_pyrsan, tmp_path: Path, source: Path, *extra: str, sched=("--sched", "pct", "--seed", "1"),
               runs: int = 40) -> dict:
    out = tmp_path / f"{source.stem}.json"
    proc = run_pyrsan("run", *sched, "--runs", runs, "--explain", "--graph", tmp_path / f"g-{source.stem}",
                      "--json", out, *extra, source, cwd=tmp_path)
    assert proc.returncode == 66, proc.stderr
    document = json.loads(out.read_text())
    assert document["reports"], proc.stderr
    document["stderr"] = proc.stderr
    return document


@pytest.fixture(scope="module")
def explained(pyrsan_cli, pyrsan_env, tmp_path_factory):
    """explained(source, *extra) -> (document, its directory): one `pyrsan run --explain --graph`
    per program and module (the timeline, picture and command tests share it)."""
    cache: dict = {}

    def run_pyrsan(*args, cwd=None, env=None):
        return subprocess.run([*pyrsan_cli, *map(str, args)], cwd=cwd, env={**pyrsan_env, **(env or {})},
                              capture_output=True, text=True, timeout=300, check=False)

    def get(source: Path, *extra: str):
        key = (source, extra)
        if key not in cache:
            directory = tmp_path_factory.mktemp(source.stem)
            cache[key] = (_explained(run_pyrsan, directory, source, *extra), directory)
        return cache[key]

    return get


def _where(event: dict) -> str:
    return f"{os.path.basename(event.get('file', ''))}:{event.get('line')}"


def check_cycle(report: dict) -> dict:
    """The explanation of a robustness report is a real non-SC cycle of the run's events."""
    ex = report["explanation"]
    assert "error" not in ex, ex
    events = {e["id"]: e for e in ex["events"]}
    order = [e["id"] for e in ex["events"]]
    cycle, kinds = ex["cycle"], ex["cycle_kinds"]
    assert len(cycle) >= 3 and cycle[0] == cycle[-1] and len(kinds) == len(cycle) - 1
    assert set(kinds) <= SC_KINDS
    access = events[cycle[0]]
    assert access["role"] == "access"
    assert _where(access) == f"{os.path.basename(report['access']['file'])}:{report['access']['line']}"
    assert access["tid"] == report["access"]["thread"]
    forced = events[cycle[1]]
    assert forced["role"] == "forced" and forced["location"] == access["location"]
    assert forced["written"] == report["forced"]["value"] and forced["tid"] == report["forced"]["thread"]
    assert _where(forced) == f"{os.path.basename(report['forced']['file'])}:{report['forced']['line']}"
    stale = [e for e in ex["events"] if e["role"] == "stale"]
    if report["previous"].get("initial"):
        assert stale and stale[0]["op"] == "init"
    assert kinds[0] == ("mo" if report["type"] == "write" else "fr")
    marked = {(e["from"], e["to"], e["kind"]) for e in ex["edges"] if e["cycle"]}
    for a, b, kind in zip(cycle, cycle[1:], kinds):
        assert (a, b, kind) in marked
        ea, eb = events[a], events[b]
        if a == cycle[0]:
            continue          # the weak edge: the access placed before the forced write
        assert order.index(a) < order.index(b), (ea, eb)      # every SC edge follows the run
        if kind == "po":
            assert ea["tid"] == eb["tid"]
        elif kind == "rf":
            assert ea["location"] == eb["location"] and ea["written"] == eb["read"]
        elif kind in ("fr", "mo"):
            assert ea["location"] == eb["location"] and "written" in eb
        elif kind == "sc":
            assert ea.get("order") == eb.get("order") == "seq_cst"
    assert cycle[-2] in events and events[cycle[-2]]["tid"] == access["tid"] and kinds[-1] == "po"
    return ex


ROBUSTNESS = [("sb_rlx.c", ["fr", "fr", "po", "po"]),
              ("mp_rel_rlx.c", ["fr", "po", "po", "rf"]),        # MP without acquire
              ("iriw_rlx.c", ["fr", "fr", "po", "po", "rf", "rf"]),
              ("dekker_rlx.c", None)]


@pytest.mark.parametrize("name,kinds", ROBUSTNESS, ids=[n for n, _ in ROBUSTNESS])
def test_explanation_is_the_runs_cycle(explained, name, kinds):
    document, _ = explained(LITMUS / name)
    for report in document["reports"]:
        ex = check_cycle(report)
        if kinds is not None:
            assert sorted(ex["cycle_kinds"]) == kinds
        loc = ex["events"][0]["location"] if ex["events"][0]["op"] == "init" else None
        if report["type"] == "read" and loc:
            assert f"may read the initial value ({loc} = 0)" in ex["outcome"]
            assert f"already wrote {loc} = 1" in ex["outcome"]
        assert "because nothing orders" in ex["outcome"]
    # the timeline: one column per thread, the access and the forced write with file:line
    stderr = document["stderr"]
    first = document["reports"][0]
    assert ">>" in stderr and "cycle (po ∪ rf ∪ mo ∪ fr" in stderr
    lines = stderr.splitlines()
    header = lines[next(i for i, line in enumerate(lines) if line.startswith("pyrsan explain #1")) + 1]
    for tid in first["explanation"]["threads"]:
        assert f"T{tid}" in header
    assert _where(check_cycle(first)["events"][-1]) in stderr


def test_mp_without_acquire_names_the_missing_acquire(explained):
    ex = check_cycle(explained(LITMUS / "mp_rel_rlx.c")[0]["reports"][0])
    assert "the read is relaxed with no acquire fence after it" in ex["why"]
    assert "the write is" not in ex["why"]          # the store is release: only the acquire is missing


def test_a_shape_the_code_was_not_written_for(run_pyrsan, tmp_path):
    """Three threads in a ring, heap cells, helper functions: a 6-edge cycle through all three."""
    document = _explained(run_pyrsan, tmp_path, HERE / "programs" / "ring3_heap.c")
    for report in document["reports"]:
        ex = check_cycle(report)
        assert sorted(ex["cycle_kinds"]) == ["fr", "fr", "fr", "po", "po", "po"]
        assert len(ex["threads"]) == 3


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wrc_rlx.c", "scfence_3t.c", "peterson_relacq.c", "2p2w_rlx.c",
                                  "cas_strong_succ_sb.c", "mp_relseq_broken.c", "barw_stale_wait.c", "sb_sc_ra.c",
                                  "mp_spin_rlx.c"])
def test_other_litmus_shapes_explain_with_valid_cycles(run_pyrsan, tmp_path, name):
    extra = ("--sc-accesses", "ra") if name == "sb_sc_ra.c" else ()
    for report in _explained(run_pyrsan, tmp_path, LITMUS / name, *extra)["reports"]:
        if report["kind"] == "robustness":
            check_cycle(report)


def test_race_explanation_names_the_missing_release_acquire(run_pyrsan, tmp_path):
    document = _explained(run_pyrsan, tmp_path, RACES / "mp_rlx.c", "--no-robustness")
    report = document["reports"][0]
    ex = report["explanation"]
    assert ex["kind"] == "race" and "error" not in ex
    roles = {e["role"]: e for e in ex["events"]}
    assert _where(roles["access"]) == f"mp_rlx.c:{report['access']['line']}"
    assert _where(roles["previous"]) == f"mp_rlx.c:{report['previous']['line']}"
    assert "do not synchronise" in ex["why"]
    assert "the write is relaxed with no release fence" in ex["why"]
    assert "the read is relaxed with no acquire fence" in ex["why"]
    assert any(e["kind"] == "race" for e in ex["edges"])


def test_explain_command_reads_a_saved_document(run_pyrsan, explained, tmp_path):
    document, directory = explained(LITMUS / "sb_rlx.c")
    saved = directory / "sb_rlx.json"
    every = run_pyrsan("explain", saved)
    assert every.returncode == 0, every.stderr
    assert every.stdout.count("pyrsan explain #") == len(document["reports"])
    key = document["reports"][-1]["key"]
    one = run_pyrsan("explain", saved, key[:12] if len(document["reports"]) == 1 else key)
    assert one.returncode == 0 and one.stdout.count("pyrsan explain #") == 1
    assert f"#{len(document['reports'])}:" in one.stdout
    bad = run_pyrsan("explain", saved, "nosuchkey")
    assert bad.returncode == 2 and bad.stderr.startswith("pyrsan: no single report") and "Traceback" not in bad.stderr
    plain = tmp_path / "plain.json"
    assert run_pyrsan("run", "--sched", "pct", "--seed", "1", "--runs", "40", "--json", plain, LITMUS / "sb_rlx.c",
                      cwd=tmp_path).returncode == 66
    unexplained = run_pyrsan("explain", plain)
    assert unexplained.returncode == 2 and "nothing to explain" in unexplained.stderr
    assert len(unexplained.stderr.strip().splitlines()) == 1
    missing = run_pyrsan("explain", tmp_path / "nothing.json")
    assert missing.returncode == 2 and "no such file" in missing.stderr


# --- pictures -----------------------------------------------------------------------------

def svg_texts(path: Path) -> list[str]:
    root = ET.parse(path).getroot()
    return [t.text or "" for t in root.iter() if t.tag.endswith("}text") or t.tag == "text"]


def svg_to_png(svg: Path) -> tuple[int, int]:
    """Renders the SVG to PNG (rsvg-convert) and returns the PNG's size."""
    png = svg.with_suffix(".png")
    subprocess.run(["rsvg-convert", "-o", str(png), str(svg)], check=True, capture_output=True)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@needs_dot
@needs_rsvg
@pytest.mark.parametrize("name", ["sb_rlx.c", "mp_rel_rlx.c", "iriw_rlx.c", "dekker_rlx.c"])
def test_graph_pictures_show_the_cycle_with_source_lines(explained, name):
    document, directory = explained(LITMUS / name)
    for index, report in enumerate(document["reports"], 1):
        svg = directory / f"g-{Path(name).stem}" / f"report-{index}.svg"
        assert (svg.with_suffix(".dot")).is_file() and svg.is_file()
        width, height = svg_to_png(svg)
        assert width > 100 and height > 100
        texts = svg_texts(svg)
        ex = report["explanation"]
        for event in ex["events"]:
            assert event["label"] in texts, (event["label"], texts)
            if event.get("file"):
                assert _where(event) in texts
        for kind in set(ex["cycle_kinds"]):
            assert kind in texts


def test_graph_without_dot_writes_the_dot_file_and_says_so(run_pyrsan, tmp_path):
    """PATH holds only the tools a build needs (links), not Graphviz's dot."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("clang-22", "clang++-22", "llvm-symbolizer-22", "ar", "ranlib", "as", "ld", "ld.bfd", "ld.gold",
                 "ld.lld", "nm", "objcopy"):
        found = shutil.which(name)
        if found:
            (tools / name).symlink_to(found)
    if not (tools / "clang-22").exists():
        pytest.skip("clang-22 is not on PATH")
    # --cc the real compiler: the runtime cache key stays the usual one (no rebuild)
    proc = run_pyrsan("run", "--cc", shutil.which("clang-22"), "--sched", "pct", "--seed", "1", "--runs", "40",
                      "--graph", tmp_path / "g", LITMUS / "sb_rlx.c", cwd=tmp_path, env={"PATH": str(tools)})
    assert proc.returncode == 66, proc.stderr
    assert "Graphviz's dot is not installed" in proc.stderr
    assert list((tmp_path / "g").glob("*.dot")) and not list((tmp_path / "g").glob("*.svg"))


# --- instrumented binaries and SARIF -------------------------------------------------------

def test_binary_explain_log_gives_sarif_code_flows(run_pyrsan, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    binary = tmp_path / "sb"
    built = run_pyrsan("build", "-o", binary, LITMUS / "sb_rlx.c", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    logs = tmp_path / "logs"
    logs.mkdir()
    for seed in range(1, 30):
        options = (f"json_path={logs}/r.%p.jsonl:explain_path={logs}/events.%p.jsonl:print_reports=0:"
                   f"sched=pct:seed={seed}")
        subprocess.run([str(binary)], env={**os.environ, "PYRSAN_OPTIONS": options}, capture_output=True)
        if list(logs.glob("r.*.jsonl")):
            break
    sarif_path = tmp_path / "out.sarif"
    proc = run_pyrsan("report", logs, "--sarif", sarif_path)
    assert proc.returncode == 66, proc.stderr
    sarif = json.loads(sarif_path.read_text())
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert results
    for result in results:
        (flow,) = result["codeFlows"]
        assert "because nothing orders" in flow["message"]["text"]
        threads = flow["threadFlows"]
        assert len(threads) == 2 and {t["id"] for t in threads} == {"T1", "T2"}
        steps = [s for t in threads for s in t["locations"]]
        orders = sorted(s["executionOrder"] for s in steps)
        assert orders == sorted(set(orders))
        for t in threads:
            mine = [s["executionOrder"] for s in t["locations"]]
            assert mine == sorted(mine)
        lines = {s["location"]["physicalLocation"]["region"]["startLine"] for s in steps}
        assert {15, 16, 22, 23} <= lines          # both stores and both loads of SB
    explained = run_pyrsan("explain", logs)
    assert explained.returncode == 0 and "cycle (po" in explained.stdout


def test_no_explain_log_without_the_option(run_pyrsan, tmp_path):
    binary = tmp_path / "sb"
    assert run_pyrsan("build", "-o", binary, LITMUS / "sb_rlx.c", cwd=tmp_path).returncode == 0
    subprocess.run([str(binary)], cwd=tmp_path, capture_output=True,
                   env={**os.environ, "PYRSAN_OPTIONS": f"json_path={tmp_path}/r.jsonl:print_reports=0"})
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("events")]


def test_a_free_that_races_is_explained(run_pyrsan, tmp_path):
    """A race whose access is a free() (refcount dropped with relaxed RMWs, the delete racing
    with the other owner's write) was "(no explanation: the racing access is not in the explain
    log)": frees were not logged. They are now, as a plain write of the block."""
    source = HERE.parent / "corpus" / "refcount_relaxed_race.cpp"
    document = _explained(run_pyrsan, tmp_path, source, "--no-robustness", sched=("--seed", "1"), runs=20)
    frees = [r for r in document["reports"] if r["kind"] == "race" and r["access"].get("free")]
    assert frees, document["stderr"][-2000:]
    for report in frees:
        ex = report["explanation"]
        assert ex["kind"] == "race" and "error" not in ex, ex
        roles = {e["role"]: e for e in ex["events"]}
        assert _where(roles["access"]) == f"{source.name}:{report['access']['line']}"
        assert "free of the block at" in ex["outcome"] and "do not synchronise" in ex["why"], ex
