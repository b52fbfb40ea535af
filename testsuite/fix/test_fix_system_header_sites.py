"""`pyrsan fix` when the accesses of a cycle's writes are in a system header: C++20
`atomic<double>::fetch_add` runs libstdc++'s out-of-line `__fetch_add_flt`, whose CAS both
threads share. A fence there is only a manual step (the patch cannot touch the header); the
fences at user-code sites come first (right before the access; on the writer's side, before its
next access after its call), so the patch is two fences in the user's file, re-checked robust.
Before, the fix kept the one fence inside atomic_base.h and wrote an empty patch."""
from __future__ import annotations

import shutil
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def test_fix_puts_the_fences_in_the_users_code(run_pyrsan, tmp_path):
    src = tmp_path / "sb_double_fetch_add.cpp"
    shutil.copy(CORPUS / "sb_double_fetch_add.cpp", src)
    proc = run_pyrsan("fix", "-std=c++20", "--patch", tmp_path / "p.patch", src.name, cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout + proc.stderr
    assert "manual:" not in text, text
    assert "patched program re-checked: robust" in text, text
    patch = (tmp_path / "p.patch").read_text()
    assert patch.count("+    std::atomic_thread_fence(std::memory_order_seq_cst);") == 2, patch
    assert "atomic_base.h" not in patch
