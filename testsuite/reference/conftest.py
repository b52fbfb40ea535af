"""Fixtures of the reference-model tests: the engine-only runtime, built once per session."""
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def engine(tmp_path_factory):
    from explore import Engine

    return Engine(tmp_path_factory.mktemp("rsan-diff"))
