"""--shard K/N: a deterministic split of a seeded campaign or an exploration, and `pyrsan
report` merging the N documents into one verdict (cluster.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings, strategies as st

from pyrsan.cluster import SUBTREES_PER_SHARD, split_tree
from pyrsan.explore import explore
from pyrsan.runner import RunOptions, subtree_trace
from testsuite.sched.program_model import all_classes, simulate, trace_class, with_main_thread

PROGRAMS = Path(__file__).resolve().parent / "programs"


def _shards(run_pyrsan, tmp_path: Path, program: str, count: int, *options: str) -> list[dict]:
    documents = []
    for index in range(1, count + 1):
        out = tmp_path / f"shard{index}.json"
        proc = run_pyrsan("run", *options, "--shard", f"{index}/{count}", "--json", out, PROGRAMS / program,
                          cwd=tmp_path)
        assert proc.returncode in (0, 66), proc.stderr
        documents.append(json.loads(out.read_text()))
    return documents


@pytest.mark.parametrize("spec", ["0/3", "4/3", "x", "1/0"])
def test_a_bad_shard_is_one_line_and_exit_2(run_pyrsan, tmp_path, spec):
    proc = run_pyrsan("run", "--explore", "--shard", spec, PROGRAMS / "sb.c", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "--shard" in proc.stderr


@pytest.mark.parametrize("options, needs", [(("--sched", "os"), "--explore or to seeded runs"),
                                            (("--sched", "pct", "--runs", "4"), "--seed"),
                                            ((), "--seed")])
def test_shards_need_a_reproducible_campaign(run_pyrsan, tmp_path, options, needs):
    proc = run_pyrsan("run", *options, "--shard", "1/2", PROGRAMS / "sb.c", cwd=tmp_path)
    assert proc.returncode == 2 and needs in proc.stderr


def test_seeded_shards_take_every_nth_run(run_pyrsan, tmp_path):
    documents = _shards(run_pyrsan, tmp_path, "sb.c", 3, "--sched", "random", "--seed", "100", "--runs", "7",
                        "--keep-going")
    assert [d["runs"] for d in documents] == [3, 2, 2]   # runs 1,4,7 / 2,5 / 3,6
    for index, document in enumerate(documents, 1):
        assert document["shard"] == {"index": index, "count": 3}
        assert document["verdict"] == "violations"
        # shard K runs the runs k = K (mod 3), whose seeds are 100 + k - 1
        assert (document["reports"][0]["reproduce"]["seed"] - 100) % 3 == index - 1


def test_exploration_shards_prove_a_robust_program_only_together(run_pyrsan, tmp_path):
    documents = _shards(run_pyrsan, tmp_path, "mp3.c", 3, "--explore")
    for document in documents:
        assert document["verdict"] == "clean"          # a part is not a proof
        assert document["exploration"]["complete"] is True
        assert document["reports"] == []
    merged = tmp_path / "merged.json"
    proc = run_pyrsan("report", *sorted(tmp_path.glob("shard*.json")), "--json", merged)
    assert proc.returncode == 0 and "robust" in proc.stdout
    assert json.loads(merged.read_text())["verdict"] == "robust"
    proc = run_pyrsan("report", tmp_path / "shard1.json", tmp_path / "shard3.json", "--json", merged)
    assert proc.returncode == 0 and "shards missing: 2" in proc.stdout
    assert json.loads(merged.read_text())["verdict"] == "clean"


def test_exploration_shards_together_find_what_one_shard_misses(run_pyrsan, tmp_path):
    documents = _shards(run_pyrsan, tmp_path, "guarded_sb.c", 4, "--explore", "--keep-going")
    verdicts = [d["verdict"] for d in documents]
    assert "violations" in verdicts
    proc = run_pyrsan("report", *sorted(tmp_path.glob("shard*.json")))
    assert proc.returncode == 66 and "robustness violation" in proc.stdout


OPS = st.sampled_from([("load", "0x10", False), ("store", "0x10", True), ("load", "0x20", False),
                       ("store", "0x20", True), ("rmw", "0x10", True)])


@settings(max_examples=15, deadline=None, database=None)
@given(threads=st.lists(st.lists(OPS, min_size=1, max_size=3), min_size=2, max_size=3),
       shards=st.integers(min_value=1, max_value=5))
def test_shards_together_run_every_trace_class(threads, shards):
    """The subtrees of split_tree, each explored with its sleep set, run every Mazurkiewicz
    class that brute force finds (simulated programs, no runtime)."""
    assume(sum(map(len, threads)) <= 6)   # brute force stays fast
    program = with_main_thread(tuple(map(tuple, threads)))
    expected, _ = all_classes(program)

    def execute(executable, args, index, options, prefix=()):
        return None, simulate(program, tuple(prefix))

    subtrees = split_tree("program", (), RunOptions(), execute, SUBTREES_PER_SHARD * shards)
    seen = set()
    for subtree in subtrees:
        def run(prefix, root=subtree.root):
            return subtree_trace(simulate(program, root + prefix), len(root)), root + prefix

        def on_run(prefix, trace, full_prefix):
            full = simulate(program, full_prefix)
            assert full.diverged is None
            seen.add(trace_class(full))
            return False

        assert explore(run, on_run=on_run, sleep=subtree.sleep).complete
    assert seen == expected
