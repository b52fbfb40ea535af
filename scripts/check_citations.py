#!/usr/bin/env python3
"""Checks that every citation of the design documents in the repository resolves inside docs/.

A citation is a document name (`algorithm.md`, `docs/architecture.md`, ...), optionally followed
by a section (`§3.2`, `§2d`) and/or a quoted heading (`"Decisions and pitfalls"`), e.g.
`algorithm.md §3 "Order per op"` or `architecture.md, "Linking and interception"`. It resolves
when the document exists in docs/, the section is a numbered heading of it, and the quoted name
is one of its headings (or, with a section, occurs in that section's text). Paths that leave the
repository (`papers/...`, `../shared/...`) never resolve.

Usage: python scripts/check_citations.py [ROOT]   (exit 1 and one line per unresolved citation)
"""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

#: Files whose text is scanned: sources, tests, scripts and documentation.
SCANNED_SUFFIXES = (".c", ".h", ".cpp", ".py", ".md", ".toml", ".txt", ".sh", ".ll")
SCANNED_NAMES = ("CMakeLists.txt", "run")

#: `docs/algorithm.md §3.2 "Name"`, `architecture.md, "Name"`, `papers/002 §4.3`, `../shared/x`
CITATION = re.compile(
    r"(?P<doc>(?:\.\./shared/\S*?|(?:docs/)?(?:design/)?[A-Za-z][\w-]*\.md|papers/\w*))"
    r"(?P<section>\s+§\s?[0-9][0-9.]*[a-z]?)?"
    r"(?P<name>,?\s*\"[^\"]+\")?"
)
#: Comment leaders removed when a quoted name continues on the next line.
COMMENT_LEADER = re.compile(r"^\s*(?:#:?|//|/?\*+|--)?\s*")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
#: Files that quote citations as examples: the checker and its tests.
EXAMPLES = ("scripts/check_citations.py", "testsuite/ci/test_citations.py")
#: Markdown files that are not design documents (their names may be cited as plain files).
NOT_DESIGN_DOCS = ("README.md",)


@dataclass(frozen=True)
class Unresolved:
    path: str
    line: int
    citation: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.citation}: {self.why}"


@dataclass(frozen=True)
class Section:
    number: str  # "3.2", "2d", "" when the heading has no number
    title: str
    text: str    # the heading and its body, up to the next heading of the same or higher level


def sections(markdown: str) -> list[Section]:
    """Every heading of a markdown document with the text it governs (code blocks skipped)."""
    lines = markdown.splitlines()
    heads: list[tuple[int, int, str]] = []  # (line index, level, title)
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if m:
            heads.append((i, len(m.group(1)), m.group(2)))
    result = []
    for k, (i, level, title) in enumerate(heads):
        end = next((j for j, lv, _ in heads[k + 1:] if lv <= level), len(lines))
        first = title.split()[0] if title.split() else ""
        number = first.rstrip(".") if re.fullmatch(r"[0-9][0-9.]*[a-z]?\.?", first) else ""
        result.append(Section(number, title, "\n".join(lines[i:end])))
    return result


def resolve(doc_path: Path | None, cited: str, section: str, name: str) -> str:
    """Why the citation does not resolve, or "" when it does."""
    if cited.startswith(("papers/", "../shared")):
        return "outside the repository"
    if doc_path is None or not doc_path.is_file():
        return "no such document in docs/"
    secs = sections(doc_path.read_text(encoding="utf-8"))
    scope = secs
    if section:
        scope = [s for s in secs if s.number == section]
        if not scope:
            return f"no section §{section}"
    if name:
        wanted = name.lower()
        in_heading = any(wanted in s.title.lower() for s in (scope if section else secs))
        in_text = section and any(wanted in s.text.lower() for s in scope)
        bold = any(f"**{wanted}" in s.text.lower() for s in scope)
        if not (in_heading or in_text or bold):
            return f'no heading "{name}"' + (f" in §{section}" if section else "")
    return ""


def document(root: Path, cited: str) -> Path | None:
    name = cited[len("docs/"):] if cited.startswith("docs/") else cited
    path = root / "docs" / name
    return path if path.is_file() else None


def tracked_files(root: Path) -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True)
    files = []
    for rel in out.stdout.splitlines():
        p = Path(rel)
        if (p.suffix in SCANNED_SUFFIXES or p.name in SCANNED_NAMES) and rel not in EXAMPLES:
            files.append(root / p)
    return files


def check_file(root: Path, path: Path) -> list[Unresolved]:
    rel = str(path.relative_to(root))
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (UnicodeDecodeError, OSError):
        return []
    found = []
    for i, line in enumerate(lines):
        following = COMMENT_LEADER.sub("", lines[i + 1]) if i + 1 < len(lines) else ""
        for m in CITATION.finditer(line):
            cited = m.group("doc")
            if cited.endswith(NOT_DESIGN_DOCS) and not cited.startswith("docs/"):
                continue
            section = (m.group("section") or "").replace("§", "").strip().rstrip(".")
            name = ""
            if m.group("name"):
                name = m.group("name").split('"')[1]
            elif re.match(r',?\s*"[^"]*$', line[m.end():]):
                # a quoted name that continues on the next line
                head = line[m.end():].split('"', 1)[1]
                name = (head + " " + following.split('"', 1)[0]).strip()
            if cited.endswith(".md") and not (cited.startswith("docs/") or "/" not in cited):
                continue  # another folder's markdown file (e.g. testsuite/x/README.md)
            why = resolve(document(root, cited), cited, section, name)
            if why:
                text = m.group(0).strip()
                if name and not m.group("name"):
                    text += f' "{name}"'
                found.append(Unresolved(rel, i + 1, " ".join(text.split()), why))
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    problems = [u for f in tracked_files(root) for u in check_file(root, f)]
    for u in problems:
        print(u)
    if problems:
        print(f"{len(problems)} citation(s) do not resolve inside docs/", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
