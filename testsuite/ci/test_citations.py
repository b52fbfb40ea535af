"""Every citation of a design document in the repository resolves inside docs/
(scripts/check_citations.py): the document exists, the cited section is one of its numbered
headings, the quoted name one of its headings; nothing points outside the repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .project import REPO_ROOT

CHECKER = REPO_ROOT / "scripts" / "check_citations.py"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECKER), str(root)], capture_output=True,
                          text=True, timeout=120)


def test_every_citation_in_the_repository_resolves_inside_docs():
    result = check(REPO_ROOT)
    assert result.returncode == 0, "unresolved citations:\n" + result.stdout


def make_repo(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    return tmp_path


DOC = "# Design\n\n## 3. Rules\n\n### 3.1 Checks\n\nThe read check.\n\n## Decisions and pitfalls\n"


def test_the_checker_accepts_sections_and_headings_that_exist(tmp_path):
    root = make_repo(tmp_path, {
        "docs/algorithm.md": DOC,
        "src/a.c": '/* algorithm.md §3.1, docs/algorithm.md §3 "read check",\n'
                   ' * algorithm.md "Decisions and\n * pitfalls" */\n',
    })
    result = check(root)
    assert result.returncode == 0, result.stdout


def test_the_checker_reports_missing_sections_headings_documents_and_outside_paths(tmp_path):
    root = make_repo(tmp_path, {
        "docs/algorithm.md": DOC,
        "src/a.c": "/* algorithm.md §3.7 */\n",
        "src/b.py": '# algorithm.md "Fix loop"\n',
        "src/c.h": "/* toolchain.md §2 */\n",
        "src/d.c": "/* papers/002 §4.3 */\n",
        "src/e.md": "see ../shared/docs/architecture.md\n",
    })
    result = check(root)
    assert result.returncode == 1
    lines = result.stdout.splitlines()

    def reported(where: str, why: str) -> bool:
        return any(line.startswith(where) and why in line for line in lines)

    assert reported("src/a.c:1:", "§3.7")
    assert reported("src/b.py:1:", "Fix loop")
    assert reported("src/c.h:1:", "no such document")
    assert reported("src/d.c:1:", "outside the repository")
    assert reported("src/e.md:1:", "outside the repository")
