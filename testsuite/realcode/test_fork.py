"""fork (issue 14): every runtime lock is held across fork, and the child starts its own
report state."""
from __future__ import annotations

import os
import re
import subprocess


def _run(exe, env_extra=None, timeout=120):
    env = dict(os.environ)
    env.pop("PYRSAN_OPTIONS", None)
    env.update(env_extra or {})
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout, env=env)


def test_children_forked_beside_busy_threads_all_finish(build_program):
    """20 children forked while two threads are inside the runtime: none hangs on a runtime
    lock, each exits 0 (the parent checks every status)."""
    exe = build_program("fork_busy.c")
    for _ in range(3):
        proc = _run(exe)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "children ok: 20" in proc.stdout


def test_a_child_does_not_inherit_the_parents_reports(build_program, tmp_path):
    """The parent reported before forking: each child that exit(0)s exits 0 and prints none of
    the parent's reports; the parent's JSON file has the reports, once."""
    exe = build_program("fork_busy.c", "-DREPORT_FIRST")
    proc = _run(exe, {"PYRSAN_OPTIONS": f"sched=random:seed=1:json_path={tmp_path}/r.%p.jsonl"})
    assert "children ok: 20" in proc.stdout, proc.stderr[-2000:]
    assert proc.returncode == 66, proc.stderr[-2000:]
    pids = set(re.findall(r"\(pid=(\d+)\)", proc.stderr))
    assert len(pids) == 1
    files = sorted(tmp_path.glob("r.*.jsonl"))
    assert [f.name for f in files] == [f"r.{pids.pop()}.jsonl"]
    assert len(re.findall(r"^SUMMARY", proc.stderr, re.M)) == len(files[0].read_text().splitlines())
    assert proc.stderr.count("pyrsan: reported") == 1
