"""Issue 14, item 7: suppressions files and schedule files of any content never crash the
runtime: it runs, or refuses them with one line on stderr and exit status 86."""
from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pyrsan.options import format_options

FUZZ = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
LINES = st.lists(st.one_of(
    st.sampled_from(["robustness:", "race:", "# c", "", "robustness:*", "race:main", "pyrsan-schedule 1",
                     "0", "1 0 1", "-1", "99999999999", "robustness", "x:y:z", "\t", "0x1"]),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)),
    max_size=12)


@pytest.fixture(scope="module")
def exe(build_program):
    return build_program("asm_sb_mfence.c")


def _run(exe, options):
    env = {k: v for k, v in os.environ.items() if k != "PYRSAN_OPTIONS"}
    env["PYRSAN_OPTIONS"] = format_options(options)
    return subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=60)


def _check(proc):
    assert proc.returncode in (0, 66, 86), (proc.returncode, proc.stderr[-500:])
    if proc.returncode == 86:
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("pyrsan: "), proc.stderr


@FUZZ
@given(LINES)
def test_fuzzed_suppressions_files(exe, tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("supp") / "s p:a=c.supp"
    path.write_text("\n".join(lines), errors="surrogateescape")
    _check(_run(exe, [("suppressions", str(path))]))


@FUZZ
@given(LINES)
def test_fuzzed_schedule_files(exe, tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("sched") / "a b.sched"
    path.write_text("\n".join(lines), errors="surrogateescape")
    _check(_run(exe, [("sched", "dfs"), ("schedule", str(path))]))
