"""The real-code corpus's drivers (drivers/): which library headers a driver needs, and what it
links. One definition for run.py and testsuite/realcode/test_realworld_drivers.py."""
from __future__ import annotations

import re
from pathlib import Path

DRIVERS = Path(__file__).resolve().parent / "drivers"
# the headers of the corpus's libraries (install.sh): a driver that includes a missing one is skipped
HEADER_RE = re.compile(r'^#include <(ck_\w+\.h|urcu[\w/.-]*|boost/[\w/.]+|tbb/[\w/.]+|oneapi/[\w/.]+|'
                       r'atomic_ops[\w/.]*|concurrentqueue/[\w/.]+|readerwriterqueue/[\w/.]+)>', re.M)
# `link: -lck` in a driver's first comment
LINK_RE = re.compile(r"link: ((?:-l[\w.+-]+ ?)+)")
INCLUDE_DIRS = ("/usr/include", "/usr/local/include", "/usr/include/x86_64-linux-gnu",
                "/usr/include/aarch64-linux-gnu")


def missing_header(src: Path) -> str | None:
    """The first library header src includes that is not installed, else None."""
    for header in HEADER_RE.findall(src.read_text()):
        if not any((Path(d) / header).exists() for d in INCLUDE_DIRS):
            return header
    return None


def link_flags(src: Path) -> list[str]:
    m = LINK_RE.search(src.read_text())
    return m.group(1).split() if m else []
