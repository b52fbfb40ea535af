"""--cluster ADDRESS: units on the workers of a Dask scheduler (cluster.py), against a local
scheduler and workers on the loopback address that the tests start and stop by pid."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip(
    "distributed", reason="the optional dependency 'distributed' is not installed (pip install 'pyrsan[cluster]')")

from pyrsan.cluster import LocalCluster  # noqa: E402  (after the skip)

PROGRAMS = Path(__file__).resolve().parent / "programs"


@pytest.fixture
def cluster(tmp_path):
    local = LocalCluster(workers=2, log=tmp_path / "dask.log")
    yield local
    local.stop()


def _json(path: Path) -> dict:
    return json.loads(path.read_text())


def test_seeded_runs_on_a_cluster_are_the_runs_of_one_machine(run_pyrsan, tmp_path, cluster):
    options = ("--sched", "pct", "--seed", "11", "--runs", "6", "--keep-going")
    here, there = tmp_path / "here.json", tmp_path / "there.json"
    local = run_pyrsan("run", *options, "--json", here, PROGRAMS / "sb.c", cwd=tmp_path)
    remote = run_pyrsan("run", *options, "--cluster", cluster.address, "--json", there, PROGRAMS / "sb.c",
                        cwd=tmp_path)
    assert local.returncode == remote.returncode == 66, remote.stderr
    a, b = _json(here), _json(there)
    assert a["verdict"] == b["verdict"] == "violations" and a["runs"] == b["runs"] == 6
    assert [r["key"] for r in a["reports"]] == [r["key"] for r in b["reports"]]
    assert [r["reproduce"]["seed"] for r in a["reports"]] == [r["reproduce"]["seed"] for r in b["reports"]]
    # the reproduce line names a schedule file saved on this machine
    schedule_file = b["reports"][0]["reproduce"]["schedule_file"]
    assert schedule_file and (tmp_path / schedule_file).is_file()


def test_exploration_on_a_cluster_proves_a_robust_program(run_pyrsan, tmp_path, cluster):
    out = tmp_path / "out.json"
    proc = run_pyrsan("run", "--explore", "--cluster", cluster.address, "--json", out, PROGRAMS / "mp3.c",
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    document = _json(out)
    assert document["verdict"] == "robust" and document["exploration"]["complete"] is True


def test_exploration_on_a_cluster_finds_a_violation(run_pyrsan, tmp_path, cluster):
    proc = run_pyrsan("run", "--explore", "--cluster", cluster.address, PROGRAMS / "guarded_sb.c", cwd=tmp_path)
    assert proc.returncode == 66 and "robustness violation" in proc.stderr


def test_a_worker_killed_mid_run_loses_no_unit(run_pyrsan, pyrsan_cli, pyrsan_env, tmp_path, cluster):
    out = tmp_path / "out.json"
    proc = subprocess.Popen([*pyrsan_cli, "run", "--sched", "random", "--seed", "5", "--runs", "60", "--keep-going",
                             "--cluster", cluster.address, "--json", str(out), str(PROGRAMS / "slow_robust.c")],
                            cwd=tmp_path, env=pyrsan_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)   # the build, then some of the ~10 s of units running
    cluster.kill(cluster.workers[0])
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    document = _json(out)
    assert document["runs"] == 60 and document["verdict"] == "clean"


def test_the_scheduler_going_away_ends_the_run_with_a_clear_error(pyrsan_cli, pyrsan_env, tmp_path, cluster):
    out = tmp_path / "out.json"
    proc = subprocess.Popen([*pyrsan_cli, "run", "--sched", "random", "--seed", "5", "--runs", "200", "--keep-going",
                             "--cluster", cluster.address, "--json", str(out), str(PROGRAMS / "slow_robust.c")],
                            cwd=tmp_path, env=pyrsan_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    cluster.kill(cluster.scheduler)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    assert "went away" in err and "Traceback" not in err
    assert _json(out)["verdict"] == "error"


def test_without_distributed_cluster_says_what_to_install(run_pyrsan, tmp_path):
    proc = run_pyrsan("run", "--explore", "--cluster", "tcp://127.0.0.1:1", PROGRAMS / "sb.c", cwd=tmp_path,
                      env={"PYTHONPATH": f"{tmp_path / 'shadow'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})
    # distributed importable here: an unreachable scheduler is a one-line usage error instead
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "cannot reach the Dask scheduler" in proc.stderr or "pyrsan[cluster]" in proc.stderr


def test_fix_checks_its_candidates_on_the_cluster(run_pyrsan, tmp_path, cluster):
    local = run_pyrsan("fix", "--check", "explore", "--json", tmp_path / "here.json", PROGRAMS / "sb.c",
                       cwd=tmp_path)
    remote = run_pyrsan("fix", "--check", "explore", "--cluster", cluster.address, "--json",
                        tmp_path / "there.json", PROGRAMS / "sb.c", cwd=tmp_path)
    assert local.returncode == remote.returncode == 0, remote.stdout + remote.stderr
    a, b = _json(tmp_path / "here.json"), _json(tmp_path / "there.json")
    assert a["verdict"] == b["verdict"] == "fixed" and a["repairs"] == b["repairs"]
